/**
 * `npm run pulumi:install` (scripts/install-pulumi-cli.mts): without Go it stops before touching anything
 * and says what is missing and what to do instead; with the pinned CLI built, a second run returns at once.
 * (The build itself is what CI's `.ci/run` does before the tests; it needs Go and the module proxy.)
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliName, pulumiCliFor } from "./harness";

const ROOT = join(__dirname, "..", "..");
const SCRIPT = join(ROOT, "scripts", "install-pulumi-cli.mts");
const cli = pulumiCliFor("test/pulumi-cli/install.test.ts");
const pinned = /github\.com\/pulumi\/pulumi\/pkg\/v3 (v\S+)/.exec(readFileSync(join(ROOT, "scripts", "pulumi-cli", "go.mod"), "utf8"))?.[1];

const install = (args: string[], env: NodeJS.ProcessEnv) =>
  spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: "utf8", env: { ...process.env, ...env } });

describe("npm run pulumi:install", () => {
  it("pins one CLI version, and the launcher's SDK module at the same version", () => {
    const goMod = readFileSync(join(ROOT, "scripts", "pulumi-cli", "go.mod"), "utf8");
    expect(pinned).toMatch(/^v3\.\d+\.\d+$/);
    expect(goMod).toContain(`github.com/pulumi/pulumi/sdk/v3 ${pinned}`);
    expect(readFileSync(join(ROOT, "scripts", "pulumi-cli", "go.sum"), "utf8")).toContain(`github.com/pulumi/pulumi/pkg/v3 ${pinned} h1:`);
  });

  it("without Go on PATH, fails (exit 1) naming what is missing and the alternatives, and leaves any installed CLI alone", () => {
    const before = existsSync(join(ROOT, ".pulumi-cli", "bin", "pulumi"));
    const run = install(["--force"], { PATH: dirname(process.execPath) });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /^pulumi:install: Go is not installed or not on PATH \(.*\)\. The CLI is built from its Go modules: install Go /,
    );
    expect(run.stderr).toContain('or use a Pulumi CLI you already have (README, "The real Pulumi CLI")');
    expect(existsSync(join(ROOT, ".pulumi-cli", "bin", "pulumi"))).toBe(before);
  });

  it.skipIf(cli?.source !== "project")(`returns at once when the pinned CLI is installed (${cliName(cli)})`, () => {
    const run = install([], {});
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`the Pulumi CLI ${pinned?.replaceAll(".", "\\.")} is installed in \\.pulumi-cli/bin \\(--force rebuilds\\)`),
    );
    expect(cli?.version).toBe(pinned);
  });
});
