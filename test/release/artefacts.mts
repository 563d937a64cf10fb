/**
 * The release's provider plugin as `npm run dist` leaves it in release/ (scripts/dist/plugin.mts): where its
 * tarball is for this package's version, and its executable unpacked. Plain Node.js, since the benchmarks
 * (test/bench/plugin.mts) run it as well as the suites (through harness.ts, which adds the skipping and the CLI).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PLUGIN, tarballName } from "../../scripts/dist/executables.mts";
import { hostPlatform } from "../../scripts/dist/platforms.mts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface PluginRelease {
  /** package.json's version, which the tarball's name and the plugin's GetPluginInfo carry. */
  version: string;
  /** `release/pulumi-resource-gms-v<version>-<os>-<arch>.tar.gz` of this machine's platform, absolute. */
  tarball: string;
}

/** The plugin tarball `npm run dist` writes for this package's version and this machine, and whether it is there. */
export function pluginRelease(): PluginRelease & { present: boolean } {
  const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
  const host = hostPlatform();
  if (!host) throw new Error(`providers ship no plugin for ${process.platform}-${process.arch}`);
  const tarball = join(ROOT, "release", tarballName(PLUGIN, version, host));
  return { version, tarball, present: existsSync(tarball) };
}

export interface ExtractedPlugin {
  /** The folder the tarball was unpacked into (its own, in the temp directory). */
  dir: string;
  /** `pulumi-resource-gms` at the tarball's root. */
  executable: string;
  /** Removes the folder. */
  remove(): void;
}

/** The tarball unpacked by the system's `tar`, as a user would, into a fresh folder of the temp directory. */
export function extractPlugin(release: PluginRelease): ExtractedPlugin {
  const dir = mkdtempSync(join(tmpdir(), "gms-release-plugin-"));
  const run = spawnSync("tar", ["-xzf", release.tarball, "-C", dir], { encoding: "utf8" });
  if (run.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`tar -xzf ${release.tarball} failed: ${run.stderr || run.error?.message}`);
  }
  return { dir, executable: join(dir, "pulumi-resource-gms"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
