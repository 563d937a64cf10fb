/**
 * The SDKs generated from schema.json, as `npm run dist` releases them:
 * - `release/python/pulumi_gms-<version>-py3-none-any.whl`, the Python package `pulumi_gms`;
 * - `release/go/`, the Go module `github.com/pulumi-gms/pulumi-gms/sdk/go` whose root package is schema.json's
 *   `language.go.importBasePath`; a program uses it with a `replace` of that module path to the folder.
 * Both register their resources with the package's version, so the engine asks for the plugin `gms` at that
 * version, the one `pulumi plugin install resource gms <version> --file <tarball>` installs.
 *
 * The generators are the packages of github.com/pulumi/pulumi/pkg/v3 at the version the project's CLI is built
 * from, called by our own program scripts/pulumi-cli/sdkgen (`pulumi package gen-sdk` would need the Go and
 * Python language hosts, whose modules the Go module proxy refuses). It runs with `go run -trimpath`, which
 * reuses what `npm run pulumi:install` compiled and caches the program itself, so nothing is installed first.
 * No Node.js SDK is generated: the package's native classes (`gms.native.*`) serve Node.js programs.
 *
 * Needs Go (and the Go module proxy, for the Go SDK's dependencies) and python3 with pip (which takes setuptools
 * from PyPI to build the wheel).
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { DistError, type DistContext, runStep } from "./context.mts";

/** The Go module holding the generator, which pins pkg/v3 for it and for the CLI. */
const GENERATOR_MODULE = join("scripts", "pulumi-cli");

export async function buildSdks(context: DistContext): Promise<void> {
  const schemaVersion = (JSON.parse(readFileSync(join(context.root, "schema.json"), "utf8")) as { version: string }).version;
  if (schemaVersion !== context.version) {
    throw new DistError(`schema.json is of version ${schemaVersion}, package.json of ${context.version}: run npm run schema`);
  }
  const staging = mkdtempSync(join(tmpdir(), "gms-dist-sdks-"));
  try {
    await generateSdks(context.root, staging, context.progress);
    const go = join(context.release, "go");
    rmSync(go, { recursive: true, force: true });
    cpSync(join(staging, "go"), go, { recursive: true });
    context.progress(`Go SDK: ${relative(context.root, go)}/ (module ${await goModulePath(go)})`);
    const python = join(context.release, "python");
    rmSync(python, { recursive: true, force: true });
    const started = Date.now();
    const wheel = await buildWheel(join(staging, "python"), python);
    context.progress(`Python SDK: ${relative(context.root, wheel)} (pip wheel, ${seconds(started)})`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Generates the SDKs from `<root>/schema.json` into `<out>/python` and `<out>/go`, the Go module with its go.sum.
 * Byte for byte the same for the same schema.json and pins.
 */
export async function generateSdks(root: string, out: string, progress: (line: string) => void = () => {}): Promise<void> {
  let started = Date.now();
  await runStep(
    "go",
    ["run", "-trimpath", "./sdkgen", "-schema", join(root, "schema.json"), "-out", out],
    join(root, GENERATOR_MODULE),
    "generating the SDKs (go run ./sdkgen in scripts/pulumi-cli)",
  );
  progress(`generated the Python and Go SDKs from schema.json (${seconds(started)}, with building the generator)`);
  started = Date.now();
  // The generator's go.mod names only the Pulumi SDK; tidy adds what the code imports besides and the go.sum
  // that a build of the module needs.
  await runStep("go", ["mod", "tidy"], join(out, "go"), "completing the Go SDK's go.mod (go mod tidy)");
  progress(`completed the Go SDK's go.mod and go.sum (${seconds(started)})`);
}

/**
 * Builds the wheel of the generated Python package in `source` into `outDir` and returns its path. The build
 * runs on a copy, since setuptools leaves its build folders beside the sources.
 */
export async function buildWheel(source: string, outDir: string): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), "gms-dist-wheel-"));
  try {
    cpSync(source, work, { recursive: true });
    await runStep(
      "python3",
      ["-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "--no-input", "-w", outDir, work],
      work,
      "building the Python SDK's wheel (python3 -m pip wheel)",
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const wheels = readdirSync(outDir).filter((name) => name.endsWith(".whl"));
  if (wheels.length !== 1) throw new DistError(`pip wheel left ${wheels.length} wheels in ${outDir}: ${wheels.join(", ")}`);
  return join(outDir, wheels[0]!);
}

/** The module path a go.mod declares. */
export async function goModulePath(dir: string): Promise<string> {
  return (await runStep("go", ["list", "-m"], dir, "reading the Go SDK's module path")).trim();
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
