/**
 * `npm run dist` (scripts/dist.mts) reads its options with node:util's parseArgs and refuses a bad one with exit 2 and
 * its usage, before it builds or empties anything. (Building is what the release suites check, on a built release.)
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..");

const dist = (...args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, "scripts", "dist.mts"), ...args], { cwd: ROOT, encoding: "utf8" });

describe("npm run dist's options", () => {
  it.each([
    [["--nope"], "Unknown option '--nope'"],
    [["--platform"], "Option '--platform <value>' argument missing"],
    [["--only", "sdks", "stray"], "Unexpected argument 'stray'"],
    [["--only", "sdks,docs"], "--only takes executables, sdks, checksums, not docs"],
    [["--only", "sdks", "--platform", "linux-amd64", "--platform", "plan9-mips"], "--platform takes linux-amd64, "],
  ])("refuse %j with exit 2, naming it, and the usage", (args, message) => {
    const run = dist(...args);
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toContain(`dist: ${message}`);
    expect(run.stderr).toContain("usage: npm run dist [-- --platform <os-arch>[,...]] [--only executables|sdks|checksums[,...]]");
    expect(run.stdout).toBe("");
  });
});
