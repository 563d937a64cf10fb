/**
 * The plugin installed beforehand from the release, as a YAML user's CI step or a machine image does it: `pulumi plugin
 * install resource gms <version> --server <schema.json's pluginDownloadURL>` into a fresh PULUMI_HOME downloads the
 * tarball of this machine's platform once (the URL pointed at a loopback server laid out as the release, by
 * PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES: download-server.ts); installing again downloads nothing; and a YAML program
 * that names no plugin version or URL then runs on it, with no download either. The CLI and its YAML language host
 * are required under CI=true.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { pluginDownloadURL } from "../../src/manifest";
import { callOverHttp } from "../emulator/harness";
import { yamlCliFor } from "../plugin/cli-project";
import { cliName } from "../pulumi-cli/harness";
import { type DownloadServer, startDownloadServer } from "./download-server";
import { downloadingSandbox, type InstalledPlugin, releaseFor } from "./harness";
import { run } from "./scenario";

const FILE = "release/plugin-install.test.ts";
const release = releaseFor(FILE);
const cli = release && yamlCliFor(FILE);
const API_KEY = "gms_release_install_key_90b4";
const TIMEOUT = 240_000;

describe.skipIf(!cli)(`pulumi plugin install resource gms --server, then a YAML program: ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let server: DownloadServer;
  let home: InstalledPlugin;
  const pulumi = (cwd: string, ...args: string[]) =>
    run(cli!.bin, [...args, "--non-interactive", "--color", "never"], { cwd, env: home.env });

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, db: ":memory:", workspaces: [{ name: "Install", apiKey: API_KEY }] });
    server = await startDownloadServer(dirname(release!.tarball), release!.version);
    home = downloadingSandbox(cli!, release!, server);
  });
  afterAll(async () => {
    await emulator?.close();
    await server?.close();
    home?.remove();
  });

  it(
    "downloads the platform's tarball once, installs nothing twice, and the program runs on it",
    async () => {
      const install = () =>
        pulumi(home.sandbox.backendDir, "plugin", "install", "resource", "gms", release!.version, "--server", pluginDownloadURL);
      await install();
      expect(server.downloads()).toEqual([basename(release!.tarball)]);
      const listed = JSON.parse(await run(cli!.bin, ["plugin", "ls", "--json"], { cwd: home.sandbox.backendDir, env: home.env }));
      expect(listed).toContainEqual(expect.objectContaining({ name: "gms", kind: "resource", version: release!.version }));
      await install();
      expect(server.downloads()).toHaveLength(1);

      const project = join(home.sandbox.backendDir, "..", "program");
      mkdirSync(project);
      writeFileSync(
        join(project, "Pulumi.yaml"),
        "name: installed\nruntime: yaml\nresources:\n  support:\n    type: gms:index:App\n    properties:\n      name: Installed\n",
      );
      await pulumi(project, "stack", "init", "dev");
      await pulumi(project, "config", "set", "gms:baseUrl", emulator.url);
      await pulumi(project, "config", "set", "--secret", "gms:apiKey", API_KEY);
      await pulumi(project, "up", "--yes", "--skip-preview");
      const apps = await callOverHttp<{ data: { name: string }[] }>({ url: emulator.url, apiKey: API_KEY }, "GET", "/apps");
      expect(apps.body.data.map((app) => app.name)).toEqual(["Installed"]);
      await pulumi(project, "destroy", "--yes", "--skip-preview");
      expect(server.downloads()).toHaveLength(1);
    },
    TIMEOUT,
  );
});
