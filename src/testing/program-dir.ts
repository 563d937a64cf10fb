/**
 * Makes a directory a Pulumi program that uses this package as `npm install pulumi-gms` would leave
 * it: the built package (package.json and what its `files` lists: `dist/`, `plugin/`, ...) is COPIED to
 * `node_modules/pulumi-gms`. A copy, not
 * a link, matters: Pulumi's closure serializer writes `__provider` as a small
 * `require("pulumi-gms/dist/shims/<kind>.js")` only for a module whose real path is under
 * node_modules; a linked checkout would be serialized by value. The package's runtime dependencies
 * (`@pulumi/pulumi`, zod, ...) that do not already resolve from the directory are symlinked from where
 * this package finds them, so one copy of `@pulumi/pulumi` serves the program, the package and the host.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const PACKAGE_NAME = "pulumi-gms";

/** The root of this package (holding package.json and dist/), from src/testing or dist/testing alike. */
export const packageRoot = (): string => resolve(__dirname, "..", "..");

/** `node_modules/<name>` as Node would find it from `from`, or undefined. */
export function findInstalled(name: string, from: string): string | undefined {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * A compiled file of this engine (`dist/testing/<name>`) to run in a child process: the one of the package
 * installed in the program directory when there is one (it shares the program's SDK), else this package's.
 */
export function compiledTestingFile(name: string, programDir: string): string | undefined {
  const installed = findInstalled(PACKAGE_NAME, programDir);
  const candidates = [
    ...(installed ? [join(installed, "dist", "testing", name)] : []),
    join(__dirname, name),
    join(packageRoot(), "dist", "testing", name),
  ];
  return candidates.find(existsSync);
}

/**
 * Installs a copy of the built package into `programDir/node_modules/pulumi-gms` (replacing an earlier
 * copy) and links its missing dependencies. Run `npm run build` first. Returns the installed path.
 */
export function installPackageCopy(programDir: string, options: { packageRoot?: string } = {}): string {
  const root = options.packageRoot ?? packageRoot();
  if (!existsSync(join(root, "dist", "index.js"))) throw new Error(`${root} has no dist/: run \`npm run build\` first`);
  const target = join(programDir, "node_modules", PACKAGE_NAME);
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    files?: string[];
    dependencies?: Record<string, string>;
  };
  for (const entry of ["package.json", ...(manifest.files ?? ["dist"])])
    if (existsSync(join(root, entry))) cpSync(join(root, entry), join(target, entry), { recursive: true });

  for (const dependency of Object.keys(manifest.dependencies ?? {})) {
    if (findInstalled(dependency, programDir)) continue;
    const source = findInstalled(dependency, root);
    if (!source) throw new Error(`${dependency} (a dependency of ${PACKAGE_NAME}) is not installed where ${root} can find it`);
    const link = join(programDir, "node_modules", dependency);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(source, link, "dir");
  }
  return target;
}
