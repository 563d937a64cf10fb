/**
 * `npm run upgrade:record` (scripts/upgrade-record.mts) refuses what would make a corpus that does not stand for its
 * release, before it runs anything: no release folder, a folder without one plugin tarball of this machine, a checkout
 * of another version, a version already recorded. (Recording itself needs a built release; 0.2.0's corpus is its
 * output, which the upgrade suites check.)
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PLUGIN, tarballName } from "../../scripts/dist/executables.mts";
import { hostPlatform } from "../../scripts/dist/platforms.mts";
import { recordedVersions } from "../../scripts/upgrade/corpus.mts";

const ROOT = join(__dirname, "..", "..");
const work = mkdtempSync(join(tmpdir(), "gms-upgrade-record-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const record = (...args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, "scripts", "upgrade-record.mts"), ...args], { cwd: ROOT, encoding: "utf8" });

/** A folder laid out as `npm run dist` leaves a release of `versions` (the tarballs empty: nothing reads them first). */
function releaseFolder(...versions: string[]): string {
  const dir = mkdtempSync(join(work, "release-"));
  for (const version of versions) writeFileSync(join(dir, tarballName(PLUGIN, version, hostPlatform()!)), "");
  return dir;
}

describe("npm run upgrade:record", () => {
  it("is the npm script", () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(scripts["upgrade:record"]).toBe("node scripts/upgrade-record.mts");
  });

  it("is a usage error without --release, with an unknown flag, or with a folder that is not one release's", () => {
    for (const [args, message] of [
      [[], "--release <dir> is required"],
      [["--release", join(work, "missing")], "no such folder"],
      [["--release", work, "--nope"], "Unknown option '--nope'"],
      [["--release", releaseFolder()], "no plugin tarball for"],
      [["--release", releaseFolder("0.2.0", "0.3.0")], "more than one plugin tarball for"],
    ] as const) {
      const run = record(...args);
      expect(run.status, args.join(" ")).toBe(2);
      expect(run.stderr, args.join(" ")).toContain(message);
      expect(run.stderr, args.join(" ")).toContain("usage: npm run upgrade:record -- --release <dir>");
    }
  });

  it("refuses a checkout of another version than the release's", () => {
    const checkout = mkdtempSync(join(work, "checkout-"));
    writeFileSync(join(checkout, "package.json"), JSON.stringify({ version: "9.8.7" }));
    const run = record("--release", releaseFolder("9.9.9"), "--checkout", checkout);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`--checkout ${checkout} is version 9.8.7, the release 9.9.9`);
  });

  it("never records a version again", () => {
    const version = recordedVersions().at(-1)!;
    const checkout = mkdtempSync(join(work, "checkout-"));
    mkdirSync(join(checkout, "examples"));
    writeFileSync(join(checkout, "package.json"), JSON.stringify({ version }));
    const run = record("--release", releaseFolder(version), "--checkout", checkout);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`test/upgrade/${version} is recorded already, and a corpus is never regenerated`);
  });
});
