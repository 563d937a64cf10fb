/**
 * The provider plugin as Pulumi providers ship: `release/pulumi-resource-gms-v<version>-linux-amd64.tar.gz`, the
 * executable `pulumi-resource-gms` at its root (with LICENSE and a README.md), which `pulumi plugin install
 * resource gms <version> --file <tarball>` installs and which runs where no Node.js is installed.
 *
 * The executable is a Node.js single executable application made from the project's pinned Node.js (the `node`
 * devDependency, whose official build carries the SEA fuse): the plugin bundled into one CommonJS file by esbuild
 * (an application's `require` reaches only Node's built-in modules, so everything else must be inside), a blob of
 * it with V8's code cache (`--experimental-sea-config`), injected with postject into a copy of that binary. The
 * code runs on the Node.js 24 inside, whatever the machine has: the plugin needs Node.js 22.19 or later.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { constants as zlib, gzipSync } from "node:zlib";
import { build, type Plugin } from "esbuild";
import { DistError, type DistContext } from "./context.mts";

const EXECUTABLE = "pulumi-resource-gms";
/** The platform of the pinned Node.js binary, which the executable is a copy of, in Pulumi's words. */
const PLATFORM = { os: "linux", arch: "x64", pulumi: "linux-amd64" } as const;
/** The fuse an official Node.js build carries, which postject flips once the blob is in. */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

/** The tarball's name for a version: what `pulumi plugin install` and the plugin download URLs expect. */
export const pluginTarballName = (version: string) => `${EXECUTABLE}-v${version}-${PLATFORM.pulumi}.tar.gz`;

/**
 * Packages that `@pulumi/pulumi` requires as it loads, for what a provider plugin never does: serializing a
 * function (a dynamic provider's; TypeScript parses it, runtime/closure/parseFunction.js) and finding the packages
 * that function needs (runtime/closure/codePaths.js). An empty module stands in for each, which keeps some 10 MB
 * of JavaScript out of the executable. Whatever else the SDK requires only inside such functions is bundled as is.
 */
const NEVER_CALLED = ["typescript", "@npmcli/arborist"];

export async function buildPluginTarball(context: DistContext): Promise<void> {
  const node = pinnedNode(context);
  const work = mkdtempSync(join(tmpdir(), "gms-dist-plugin-"));
  try {
    const bundle = join(work, "plugin.js");
    await bundlePlugin(context, bundle);
    const blob = join(work, "plugin.blob");
    seaBlob(node, bundle, blob, work);
    context.progress(`SEA blob with V8's code cache: ${megabytes(blob)}`);
    const executable = join(work, EXECUTABLE);
    injectBlob(node, blob, executable);
    context.progress(`${EXECUTABLE}: the blob injected into a copy of Node.js ${nodeVersion(node)}, ${megabytes(executable)}`);
    const tarball = join(context.release, pluginTarballName(context.version));
    writeFileSync(
      tarball,
      gzipSync(
        tarArchive([
          { name: EXECUTABLE, mode: 0o755, data: readFileSync(executable) },
          { name: "LICENSE", mode: 0o644, data: readFileSync(join(context.root, "LICENSE")) },
          { name: "README.md", mode: 0o644, data: Buffer.from(tarballReadme(context.version)) },
        ]),
        { level: zlib.Z_BEST_COMPRESSION },
      ),
    );
    context.progress(`${relative(context.root, tarball)}: ${megabytes(tarball)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The project's own Node.js, checked to be one a SEA can be made of for the tarball's platform. */
function pinnedNode(context: DistContext): string {
  const node = join(context.root, "node_modules", "node", "bin", "node");
  if (!existsSync(node)) throw new DistError(`${relative(context.root, node)} is missing: run npm ci (the node devDependency installs it)`);
  const run = spawnSync(node, ["-p", "`${process.platform} ${process.arch}`"], { encoding: "utf8" });
  const platform = run.stdout?.trim();
  if (platform !== `${PLATFORM.os} ${PLATFORM.arch}`) {
    throw new DistError(
      `the plugin's tarball is for ${PLATFORM.pulumi} and is made from the pinned Node.js binary, which here is for ${platform || run.error?.message}: build it on a Linux x64 machine`,
    );
  }
  if (!readFileSync(node).includes(SEA_FUSE))
    throw new DistError(`${node} has no SEA fuse (${SEA_FUSE}): it is not an official Node.js build`);
  return node;
}

const nodeVersion = (node: string) => spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();

/** The plugin and everything it loads (but NEVER_CALLED) as one CommonJS file, from src/ as tsc compiles it. */
async function bundlePlugin(context: DistContext, outfile: string): Promise<void> {
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
    entryPoints: [join(pluginSource, "main.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node24",
    tsconfig: join(context.root, "src", "tsconfig.json"),
    // The dynamic resources' shims require the package by name (src/provider/shim.ts); unbundled that is the
    // same dist/ the plugin runs from, so here it is the same src/.
    alias: { "pulumi-gms": join(context.root, "src") },
    plugins: [sdkModules, emptyModules],
    // Names as the modules declared them: esbuild renames clashing top-level names across modules otherwise.
    keepNames: true,
    metafile: true,
    logLevel: "silent",
  }).catch((error: unknown) => {
    throw new DistError(`esbuild could not bundle the plugin: ${error instanceof Error ? error.message : String(error)}`);
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
    throw new DistError(`the bundle holds more than one copy of ${copies.join(", ")}: the plugin must use those @pulumi/pulumi uses`);
  }
  context.progress(`bundle: ${inputs.length} modules in one file, ${megabytes(outfile)}`);
}

/** The packages of `names` that the bundle holds from more than one folder. */
function duplicatePackages(inputs: string[], names: string[]): string[] {
  return names.filter((name) => {
    const folders = new Set(inputs.flatMap((input) => input.match(new RegExp(`^(.*node_modules/${name})/`))?.[1] ?? []));
    return folders.size > 1;
  });
}

/**
 * `node --experimental-sea-config`: the bundle and V8's code cache of it, as the blob the executable runs. No V8
 * snapshot (`useSnapshot`): with the code cache the plugin already starts in well under the second asked of it, and
 * a snapshot would run every module's load-time code (the SDK's, grpc-js's) on the build machine and keep its state.
 */
function seaBlob(node: string, bundle: string, blob: string, work: string): void {
  const config = join(work, "sea-config.json");
  writeFileSync(
    config,
    JSON.stringify({
      main: bundle,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      // NODE_OPTIONS is meant for the Node.js programs of the environment (a language host's, say), not for a plugin.
      execArgvExtension: "none",
    }),
  );
  const run = spawnSync(node, ["--experimental-sea-config", config], { cwd: work, encoding: "utf8" });
  if (run.status !== 0) throw new DistError(`node --experimental-sea-config failed: ${run.stderr || run.error?.message}`);
}

/** A copy of the pinned binary with the blob injected by postject, which flips the SEA fuse; its chatter shown only on failure. */
function injectBlob(node: string, blob: string, executable: string): void {
  copyFileSync(node, executable);
  chmodSync(executable, 0o755);
  const cli = createRequire(import.meta.url).resolve("postject/dist/cli.js");
  const run = spawnSync(node, [cli, executable, "NODE_SEA_BLOB", blob, "--sentinel-fuse", SEA_FUSE], { encoding: "utf8" });
  if (run.status !== 0) throw new DistError(`postject could not inject the blob: ${run.stdout}${run.stderr}${run.error?.message ?? ""}`);
}

interface TarEntry {
  name: string;
  mode: number;
  data: Buffer;
}

/**
 * A ustar archive of regular files, the same bytes for the same files: owner root, time 0, the given modes. Pulumi
 * extracts it keeping the modes, so the executable's 0755 is what makes it runnable.
 */
function tarArchive(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const { name, mode, data } of entries) {
    const header = Buffer.alloc(512);
    const field = (offset: number, length: number, value: string) => header.write(value, offset, length, "ascii");
    const octal = (offset: number, length: number, value: number) =>
      field(offset, length, `${value.toString(8).padStart(length - 1, "0")}\0`);
    field(0, 100, name);
    octal(100, 8, mode);
    octal(108, 8, 0);
    octal(116, 8, 0);
    octal(124, 12, data.length);
    octal(136, 12, 0);
    field(148, 8, " ".repeat(8));
    field(156, 1, "0");
    field(257, 8, "ustar\u000000");
    field(265, 32, "root");
    field(297, 32, "root");
    let sum = 0;
    for (const byte of header) sum += byte;
    field(148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  // The end of the archive: two empty blocks.
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

function tarballReadme(version: string): string {
  return `# pulumi-resource-gms ${version}

The Pulumi resource provider plugin of the gms package (generation management service workspaces): every kind as
\`gms:index:<Kind>\`, configured with \`gms:baseUrl\` and the secret \`gms:apiKey\`. A single executable that brings
its own Node.js runtime; nothing else needs to be installed.

    pulumi plugin install resource gms ${version} --file ${pluginTarballName(version)}
`;
}

function megabytes(file: string): string {
  return `${(statSync(file).size / 1024 / 1024).toFixed(1)} MB`;
}
