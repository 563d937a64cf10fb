/**
 * `npm run pulumi:install`: builds the real Pulumi CLI from its Go modules into `.pulumi-cli/bin/`
 * (git-ignored), with the dynamic-provider launcher `pulumi-resource-pulumi-nodejs` beside it, so that the
 * tests, the demo and the benchmarks can run on the engine users run.
 *
 * The version is pinned by scripts/pulumi-cli/go.mod and go.sum (one small module that requires the CLI's
 * module `github.com/pulumi/pulumi/pkg/v3`); everything comes from the Go module proxy (GOPROXY), nothing
 * from anywhere else. The launcher is the shell script the Node.js SDK ships in the same release (the SDK's
 * Go module holds it). A second run reuses Go's module and build caches and returns at once when the
 * installed CLI is already the pinned one (`--force` rebuilds).
 *
 * Beside them it builds the YAML language host `pulumi-language-yaml` from its Go module
 * github.com/pulumi/pulumi-yaml (pinned below), so that Pulumi YAML programs of the native `gms:index:*`
 * resources and `pulumi import` run on the CLI. It builds nothing else: the Node.js, Python and Go language hosts'
 * modules are not served by the module proxy here, and no program needs them, since an Automation API inline
 * program (TypeScript, Python, Go) serves its language runtime from its own process.
 *
 *   npm run pulumi:install [-- --force]
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const MODULE_DIR = join(ROOT, "scripts", "pulumi-cli");
const TARGET = join(ROOT, ".pulumi-cli");
const BIN = join(TARGET, "bin");
const STAMP = join(TARGET, "installed.json");
const CLI_PACKAGE = "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi";
const SDK_MODULE = "github.com/pulumi/pulumi/sdk/v3";
const LAUNCHER = "pulumi-resource-pulumi-nodejs";
/** The YAML language host, pinned: `go install <package>@<version>` checks the module against the checksum database. */
const YAML_HOST = "pulumi-language-yaml";
const YAML_HOST_PACKAGE = "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml";
const YAML_HOST_VERSION = "v1.25.0";

/** What earlier versions of this script built beside the CLI from copied source; removed so that nothing runs them. */
const FORMER_HOSTS = ["pulumi-language-nodejs", "pulumi-language-python", "pulumi-language-python-exec"];

class InstallError extends Error {
  override readonly name = "InstallError";
}

const started = Date.now();
const progress = (line: string) => console.log(`pulumi:install [${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);

/** Runs `go args…` in the pinned module; its output is returned, and shown only when it fails. */
function go(args: string[], what: string, env: NodeJS.ProcessEnv = process.env): string {
  const run = spawnSync("go", args, { cwd: MODULE_DIR, encoding: "utf8", env });
  if (run.error) {
    throw new InstallError(
      `Go is not installed or not on PATH (${run.error.message}). The CLI is built from its Go modules: install Go ` +
        `${goVersionWanted()} or later, or use a Pulumi CLI you already have (README, "The real Pulumi CLI").`,
    );
  }
  if (run.status !== 0) {
    const output = `${run.stdout}${run.stderr}`.trim();
    const unreachable = /dial tcp|no such host|connection refused|i\/o timeout|TLS handshake|403 Forbidden|404 Not Found/.test(output);
    const proxy = spawnSync("go", ["env", "GOPROXY"], { encoding: "utf8" }).stdout.trim();
    throw new InstallError(
      unreachable
        ? `${what} failed: the Go module proxy (GOPROXY=${proxy}) could not serve a module the CLI needs:\n${output}`
        : `${what} failed (go ${args.join(" ")}):\n${output}`,
    );
  }
  return run.stdout.trim();
}

/** The `go` line of the pinned module (the oldest Go that builds it). */
function goVersionWanted(): string {
  return /^go (\S+)$/m.exec(readFileSync(join(MODULE_DIR, "go.mod"), "utf8"))?.[1] ?? "1.26";
}

/** The pinned CLI version, as go.mod requires it. */
function pinnedVersion(): string {
  const version = /github\.com\/pulumi\/pulumi\/pkg\/v3 (v\S+)/.exec(readFileSync(join(MODULE_DIR, "go.mod"), "utf8"))?.[1];
  if (!version) throw new InstallError("scripts/pulumi-cli/go.mod does not require github.com/pulumi/pulumi/pkg/v3");
  return version;
}

function installed(version: string): boolean {
  const binaries = ["pulumi", LAUNCHER, YAML_HOST];
  const files = [STAMP, ...binaries.map((name) => join(BIN, name))];
  if (!files.every((file) => existsSync(file))) return false;
  const stamp = JSON.parse(readFileSync(STAMP, "utf8")) as { version?: string; yamlHost?: string };
  return stamp.version === version && stamp.yamlHost === YAML_HOST_VERSION;
}

function main(argv: string[]): void {
  const version = pinnedVersion();
  const sdk = JSON.parse(readFileSync(join(ROOT, "node_modules", "@pulumi", "pulumi", "package.json"), "utf8")).version as string;
  for (const name of FORMER_HOSTS) rmSync(join(BIN, name), { force: true });
  if (installed(version) && !argv.includes("--force")) {
    progress(`the Pulumi CLI ${version} is installed in .pulumi-cli/bin (--force rebuilds)`);
    return;
  }
  progress(`Go: ${go(["version"], "go version")}; building the Pulumi CLI ${version} (the project's @pulumi/pulumi is ${sdk})`);
  progress(
    `[1/4] building ${CLI_PACKAGE}, downloading the modules it needs from the Go module proxy (the first time: ` +
      "about 1.5 GB and a few minutes on 2 cores; later, Go's caches make it seconds)",
  );
  mkdirSync(BIN, { recursive: true });
  go(
    [
      "build",
      "-trimpath",
      "-ldflags",
      `-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=${version}`,
      "-o",
      join(BIN, "pulumi"),
      CLI_PACKAGE,
    ],
    "Building the CLI",
  );
  progress(`[2/4] the dynamic-provider launcher ${LAUNCHER}, from the Node.js SDK of the same release`);
  const sdkDir = go(["list", "-m", "-f", "{{.Dir}}", SDK_MODULE], "Finding the SDK module");
  copyFileSync(join(sdkDir, "nodejs", "dist", LAUNCHER), join(BIN, LAUNCHER));
  chmodSync(join(BIN, LAUNCHER), 0o755);
  progress(`[3/4] the YAML language host ${YAML_HOST_PACKAGE}@${YAML_HOST_VERSION}`);
  go(["install", "-trimpath", `${YAML_HOST_PACKAGE}@${YAML_HOST_VERSION}`], "Building the YAML language host", {
    ...process.env,
    GOBIN: BIN,
  });
  progress("[4/4] checking the CLI runs");
  const probe = spawnSync(join(BIN, "pulumi"), ["version"], {
    encoding: "utf8",
    env: { ...process.env, PULUMI_SKIP_UPDATE_CHECK: "true" },
  });
  if (probe.status !== 0 || probe.stdout.trim() !== version) {
    throw new InstallError(`The built CLI does not report ${version}: ${`${probe.stdout}${probe.stderr}`.trim() || probe.error?.message}`);
  }
  const stamp = { version, sdk, yamlHost: YAML_HOST_VERSION, builtAt: new Date().toISOString() };
  writeFileSync(STAMP, `${JSON.stringify(stamp, null, 2)}\n`);
  progress(
    `installed: .pulumi-cli/bin/pulumi ${version}, ${LAUNCHER} and ${YAML_HOST} ${YAML_HOST_VERSION}; ` +
      "the tests, `npm run demo` and `npm run bench` use them",
  );
}

try {
  main(process.argv.slice(2));
} catch (error) {
  console.error(`pulumi:install: ${error instanceof InstallError ? error.message : (error as Error).stack}`);
  process.exitCode = 1;
}
