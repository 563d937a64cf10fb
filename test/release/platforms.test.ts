/**
 * Every platform's tarballs that `npm run dist` built here (the plugin's and the command-line tool's): the names the
 * engine's download asks for, the one executable at the root (`.exe` on Windows) with LICENSE and README.md (and,
 * beside pulumi-gms, the program converter pulumi-gms-convert, a Go executable of the platform), an
 * executable of the platform's format and CPU read from its own headers (ELF x86-64 or AArch64, PE AMD64, Mach-O
 * x86-64 or ARM64), the single-executable blob inside it (the SEA fuse flipped, the bundle's own text present), and
 * release/checksums.txt, which sums every artefact in sha256sum's format. The linux-amd64 executables run on this
 * machine (plugin-tarball.test.ts and cli-executable.test.ts run them in full).
 *
 * Which platforms are built here follows scripts/dist/platforms.mts: under CI=true each of them is required; a macOS
 * tarball, which only macOS can sign, is checked where it is present and otherwise skipped, saying so.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { artefacts, CHECKSUMS, sha256 } from "../../scripts/dist/checksums.mts";
import { CONVERTER } from "../../src/discover/languages";
import { CLI, PLUGIN, tarballName } from "../../scripts/dist/executables.mts";
import { cannotBuild, hostPlatform, PLATFORMS, type Platform } from "../../scripts/dist/platforms.mts";
import { SEA_FUSE } from "../../scripts/dist/sea.mts";
import { tarballEntries } from "./harness";

const ROOT = join(__dirname, "..", "..");
const RELEASE = join(ROOT, "release");
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };

/** What the executable's own headers say it is: its format and CPU. */
function executableKind(bytes: Buffer): string {
  if (bytes.readUInt32BE(0) === 0x7f454c46) {
    const machine = bytes.readUInt16LE(18);
    return `ELF ${({ 0x3e: "x86-64", 0xb7: "AArch64" } as Record<number, string>)[machine] ?? `machine ${machine}`}`;
  }
  if (bytes.toString("latin1", 0, 2) === "MZ") {
    const pe = bytes.readUInt32LE(0x3c);
    if (bytes.toString("latin1", pe, pe + 4) !== "PE\0\0") return "MZ without a PE header";
    const machine = bytes.readUInt16LE(pe + 4);
    return `PE ${({ 0x8664: "AMD64", 0xaa64: "ARM64" } as Record<number, string>)[machine] ?? `machine ${machine}`}`;
  }
  if (bytes.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = bytes.readUInt32LE(4);
    return `Mach-O ${({ 0x01000007: "x86-64", 0x0100000c: "ARM64" } as Record<number, string>)[cpu] ?? `cpu ${cpu}`}`;
  }
  return `unknown (${bytes.subarray(0, 4).toString("hex")})`;
}

const EXPECTED_KIND: Record<string, string> = {
  "linux-amd64": "ELF x86-64",
  "linux-arm64": "ELF AArch64",
  "darwin-amd64": "Mach-O x86-64",
  "darwin-arm64": "Mach-O ARM64",
  "windows-amd64": "PE AMD64",
};

/** A text each executable's bundle holds, which only the injected blob can have put there. */
const BUNDLE_MARK = {
  [PLUGIN.name]: "pulumi-resource-gms: unhandled rejection",
  [CLI.name]: "usage: pulumi-gms <command> [options]",
};

/** Whether `target`'s tarballs are checked: present, or required (built here, under CI=true), else skipped with why. */
function wanted(target: Platform): boolean {
  const present = [PLUGIN, CLI].every((executable) => existsSync(join(RELEASE, tarballName(executable, version, target))));
  if (present) return true;
  const why = cannotBuild(target);
  const reason = why ?? `no release/ tarballs for ${target.name} (npm run dist builds them)`;
  if (process.env.CI === "true" && !why) throw new Error(`release/platforms.test.ts: required under CI=true: ${reason}`);
  console.log(`release/platforms.test.ts: skipping ${target.name}: ${reason}`);
  return false;
}

describe.each(PLATFORMS.map((target) => ({ target, name: target.name })))("the release for $name", ({ target }) => {
  const checked = wanted(target);
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  describe.each([PLUGIN, CLI].map((executable) => ({ executable, name: executable.name })))("$name", ({ executable }) => {
    const tarball = join(RELEASE, tarballName(executable, version, target));
    const file = `${executable.name}${target.executableSuffix}`;
    const companions = executable === CLI ? [`${CONVERTER}${target.executableSuffix}`] : [];

    it.skipIf(!checked)(
      `is ${executable.name}-v${version}-${target.name}.tar.gz, the executable at its root with LICENSE and README.md`,
      () => {
        const entries = tarballEntries(tarball);
        expect(entries.map((entry) => entry.name).sort()).toEqual(["LICENSE", "README.md", file, ...companions].sort());
        for (const name of [file, ...companions]) {
          expect(entries.find((entry) => entry.name === name)).toMatchObject({ type: "file", mode: 0o755 });
          expect(target.os === "windows" ? name.endsWith(".exe") : !name.includes(".")).toBe(true);
        }
      },
    );

    it.skipIf(!checked || companions.length === 0)(`holds ${CONVERTER}, a ${EXPECTED_KIND[target.name]} executable`, () => {
      const dir = mkdtempSync(join(tmpdir(), "gms-release-platform-"));
      dirs.push(dir);
      execFileSync("tar", ["-xzf", tarball, "-C", dir, companions[0]!]);
      expect(executableKind(readFileSync(join(dir, companions[0]!)))).toBe(EXPECTED_KIND[target.name]);
    });

    it.skipIf(!checked)(`holds a ${EXPECTED_KIND[target.name]} executable with the application's blob injected`, () => {
      const dir = mkdtempSync(join(tmpdir(), "gms-release-platform-"));
      dirs.push(dir);
      execFileSync("tar", ["-xzf", tarball, "-C", dir, file]);
      const bytes = readFileSync(join(dir, file));
      expect(executableKind(bytes)).toBe(EXPECTED_KIND[target.name]);
      // postject flips the fuse from :0 to :1 once the blob is in; Node.js runs the blob only then.
      expect(bytes.includes(`${SEA_FUSE}:1`)).toBe(true);
      expect(bytes.includes(`${SEA_FUSE}:0`)).toBe(false);
      expect(bytes.includes(BUNDLE_MARK[executable.name]!)).toBe(true);
      if (target.name === hostPlatform()?.name) {
        const run = spawnSync(join(dir, file), ["--version"], { env: { PATH: "" }, encoding: "utf8", timeout: 20_000 });
        expect(run.stdout).toBe(`${version}\n`);
      }
    });
  });
});

const summed = existsSync(join(RELEASE, CHECKSUMS));
describe.skipIf(!summed && process.env.CI !== "true")("release/checksums.txt", () => {
  it("sums every artefact of release/ in sha256sum's format, by the names the release's assets have side by side", () => {
    const lines = readFileSync(join(RELEASE, CHECKSUMS), "utf8").trimEnd().split("\n");
    const paths = artefacts(RELEASE);
    expect(lines.map((line) => line.replace(/^[0-9a-f]{64} {2}/, ""))).toEqual(paths.map((path) => basename(path)));
    lines.forEach((line, at) => expect(line, paths[at]).toBe(`${sha256(join(RELEASE, paths[at]!))}  ${basename(paths[at]!)}`));
    expect(paths).toEqual(
      expect.arrayContaining([expect.stringMatching(/^python\/.*\.whl$/), tarballName(PLUGIN, version, hostPlatform()!)]),
    );
    // As a user checks a download: every asset in one folder.
    const assets = mkdtempSync(join(tmpdir(), "gms-release-assets-"));
    try {
      for (const path of [CHECKSUMS, ...paths]) symlinkSync(join(RELEASE, path), join(assets, basename(path)));
      const checked = spawnSync("sha256sum", ["--check", "--strict", CHECKSUMS], { cwd: assets, encoding: "utf8" });
      if (checked.error) console.log(`release/platforms.test.ts: sha256sum is not installed here: ${checked.error.message}`);
      else expect(checked.status, checked.stdout + checked.stderr).toBe(0);
    } finally {
      rmSync(assets, { recursive: true, force: true });
    }
  });
});
