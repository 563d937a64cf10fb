/**
 * What the suites on the release share (`npm run dist` writes it into release/): the plugin tarball when it is
 * there, else a printed reason to skip (required under CI=true, as the real CLI is: see test/pulumi-cli/harness.ts);
 * its entries; its executable unpacked; the tarball installed with the real CLI into a fresh PULUMI_HOME, as a user
 * installs a plugin they were handed, or a fresh PULUMI_HOME where the engine downloads it (download-server.ts), with
 * the environment to run programs on it.
 *
 *   const release = releaseFor("release/my.test.ts");
 *   const cli = release && pulumiCliFor("release/my.test.ts");
 *   describe.skipIf(!cli)("...", () => {
 *     let installed: InstalledPlugin;
 *     beforeAll(() => { installed = installPlugin(cli!, release!); });
 *     afterAll(() => installed?.remove());
 *     // run cli!.bin with installed.env (and the program's own variables): the engine starts installed.executable
 *   });
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { type PulumiCli, cliEnvironment } from "../../src/testing";
import type { CliSandbox } from "../../src/testing/pulumi-cli";
import { type ExtractedPlugin, extractPlugin, type PluginRelease, pluginRelease } from "./artefacts.mts";
import type { DownloadServer } from "./download-server";

export { type ExtractedPlugin, extractPlugin, type PluginRelease };

/**
 * The release's plugin for the suite in `file`, or undefined after printing why its tests skip. Under CI=true a
 * missing tarball fails the suite instead: CI runs `npm run dist` before the tests, so its absence is a broken build.
 */
export function releaseFor(file: string): PluginRelease | undefined {
  const { present, ...release } = pluginRelease();
  if (present) return release;
  const reason = `no release/${release.tarball.split("/").at(-1)} (npm run dist builds it)`;
  if (process.env.CI === "true") throw new Error(`${file}: the release is required under CI=true: ${reason}`);
  console.log(`${file}: skipping the release's tests: ${reason}`);
  return undefined;
}

export interface TarballEntry {
  /** The path inside the archive. */
  name: string;
  /** The permission bits, e.g. 0o755. */
  mode: number;
  /** `file`, `directory`, or the ustar type flag of anything else. */
  type: string;
  size: number;
}

/** The entries of a gzipped tar archive, read from its ustar headers (not from an extraction, which applies a umask). */
export function tarballEntries(tarball: string): TarballEntry[] {
  const archive = gunzipSync(readFileSync(tarball));
  const entries: TarballEntry[] = [];
  const text = (offset: number, length: number) => archive.toString("latin1", offset, offset + length).replace(/\0.*$/s, "");
  const octal = (offset: number, length: number) => Number.parseInt(text(offset, length).trim() || "0", 8);
  for (let at = 0; at + 512 <= archive.length && archive[at] !== 0; ) {
    const prefix = text(at + 345, 155);
    const name = text(at, 100);
    const size = octal(at + 124, 12);
    const flag = text(at + 156, 1);
    const type = flag === "0" || flag === "" ? "file" : flag === "5" ? "directory" : flag;
    entries.push({ name: prefix ? `${prefix}/${name}` : name, mode: octal(at + 100, 8) & 0o7777, type, size });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

export interface InstalledPlugin {
  /**
   * The CLI's sandbox: its PULUMI_HOME holds the installed plugin (or, where the engine downloads it, will); a file
   * backend and a passphrase for stacks.
   */
  sandbox: CliSandbox;
  /**
   * The environment to run the CLI in (cliEnvironment of the sandbox), with PULUMI_IGNORE_AMBIENT_PLUGINS=true so
   * that the engine takes the installed plugin, never a `pulumi-resource-gms` on PATH (a program's
   * node_modules/.bin, say); the language hosts beside the CLI are still found.
   */
  env: NodeJS.ProcessEnv;
  /** The installed executable: `<PULUMI_HOME>/plugins/resource-gms-v<version>/pulumi-resource-gms`, once installed. */
  executable: string;
  /** Removes the sandbox's folder. */
  remove(): void;
}

/**
 * A fresh PULUMI_HOME (in the temp directory) with no gms plugin, a file backend, a passphrase and a temporary folder
 * (TMPDIR), and the environment to run the CLI in, offline as every CLI run here (cliEnvironment: no update check) and taking no ambient plugin.
 */
function freshSandbox(cli: PulumiCli, release: PluginRelease, prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const sandbox: CliSandbox = { backendDir: join(dir, "backend"), passphrase: "gms-release", pulumiHome: join(dir, "home") };
  mkdirSync(sandbox.backendDir);
  // The CLI's own temporary folders (a plugin tarball unpacked: pulumi-plugin-tar*, which it leaves) go with the sandbox.
  const temp = join(dir, "tmp");
  mkdirSync(temp);
  const env: NodeJS.ProcessEnv = { ...cliEnvironment(cli, sandbox), PULUMI_IGNORE_AMBIENT_PLUGINS: "true", TMPDIR: temp };
  const executable = join(sandbox.pulumiHome, "plugins", `resource-gms-v${release.version}`, "pulumi-resource-gms");
  return { sandbox, env, executable, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * `pulumi plugin install resource gms <version> --file <tarball>` into a fresh PULUMI_HOME, as a user of a machine with
 * no network installs a plugin they were handed (no plugin download either). Throws with the CLI's output when the
 * install fails.
 */
export function installPlugin(cli: PulumiCli, release: PluginRelease): InstalledPlugin {
  const installed = freshSandbox(cli, release, "gms-release-cli-");
  const run = spawnSync(cli.bin, ["plugin", "install", "resource", "gms", release.version, "--file", release.tarball], {
    env: installed.env,
    encoding: "utf8",
  });
  if (run.status !== 0 || !existsSync(installed.executable)) {
    installed.remove();
    throw new Error(`pulumi plugin install resource gms ${release.version} --file ${release.tarball} failed: ${run.stdout}${run.stderr}`);
  }
  return installed;
}

/**
 * A fresh PULUMI_HOME that holds no gms plugin, where the engine downloads the plugin by itself, as on a user's
 * machine: automatic plugin acquisition on, and the schema's `pluginDownloadURL` sent to `server` (its `engineEnv`).
 * `executable` is where the engine installs it.
 */
export function downloadingSandbox(cli: PulumiCli, release: PluginRelease, server: DownloadServer): InstalledPlugin {
  const fresh = freshSandbox(cli, release, "gms-release-download-");
  const { PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: _offline, ...env } = fresh.env;
  return { ...fresh, env: { ...env, ...server.engineEnv } };
}
