/**
 * A TypeScript project run through `npx` gets the release's plugin, downloaded by the engine, the way users meet it.
 * npm puts the project's node_modules/.bin first on PATH for `npx` and every npm script, and the engine takes a
 * `pulumi-resource-gms` it finds on PATH (`using pulumi-resource-gms from $PATH`) rather than download the plugin of
 * the version the SDK asks for: the package installs no such bin (issue 48; it once linked its Node.js plugin there).
 *
 * The project is made as a user makes it, `npm install pulumi-gms @pulumi/pulumi` (pulumi-gms from `npm pack` of this
 * checkout through npm-registry.ts, the rest from the registry), and its driver runs one App of the plugin's classes
 * through the Automation API with `npx --no -- node driver.mjs`, on the real CLI, from a fresh PULUMI_HOME where the
 * engine downloads the plugin from the download server. Unlike the other release suites, plugins on PATH are not
 * ignored (no PULUMI_IGNORE_AMBIENT_PLUGINS), as on a user's machine. Skipped, saying why, without the CLI or the
 * release (both required under CI=true).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { PLUGIN, tarballName } from "../../scripts/dist/executables.mts";
import { hostPlatform } from "../../scripts/dist/platforms.mts";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { type DownloadServer, startDownloadServer } from "./download-server";
import { downloadingSandbox, type InstalledPlugin, releaseFor } from "./harness";
import { type NpmRegistry, startNpmRegistry } from "./npm-registry";
import { run } from "./scenario";

const FILE = "release/npx-plugin.test.ts";
const release = releaseFor(FILE);
const cli = release && pulumiCliFor(FILE);
const API_KEY = "gms_npx_plugin_key_3f1a";

const DRIVER = `import * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace } from "@pulumi/pulumi/automation/index.js";
import * as gms from "pulumi-gms";

const program = async () => {
  const app = new gms.native.App("support", { name: "Customer support" });
  return { appGuid: app.id };
};
const stack = await LocalWorkspace.createOrSelectStack(
  { stackName: "dev", projectName: "gms-npx", program },
  { workDir: process.cwd(), secretsProvider: "passphrase" },
);
await stack.setConfig("gms:baseUrl", { value: process.env.GMS_BASE_URL });
await stack.setConfig("gms:apiKey", { value: process.env.GMS_API_KEY, secret: true });
const onOutput = (text) => process.stdout.write(text);
console.log("PATH", process.env.PATH);
if (process.argv[2] === "up") console.log("appGuid", (await stack.up({ onOutput })).outputs.appGuid.value);
else await stack.destroy({ onOutput });
`;

describe.skipIf(!cli)(`a TypeScript project run through npx: ${cliName(cli)}`, () => {
  let work: string;
  let registry: NpmRegistry;
  let server: DownloadServer;
  let home: InstalledPlugin;
  let emulator: RunningEmulator;
  let env: NodeJS.ProcessEnv;
  let project: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "gms-npx-plugin-"));
    registry = await startNpmRegistry(work);
    server = await startDownloadServer(dirname(release!.tarball), release!.version);
    home = downloadingSandbox(cli!, release!, server);
    emulator = await startEmulator({ port: 0, workspaces: [{ name: "Npx", apiKey: API_KEY }] });
    // The machine's PATH with the CLI and a Node.js new enough, none of this repository's node_modules, no npm_* of
    // the npm that runs the tests, and plugins on PATH taken as the engine takes them on a user's machine.
    const { PULUMI_IGNORE_AMBIENT_PLUGINS: _ignored, ...engineEnv } = home.env;
    env = Object.fromEntries(Object.entries(engineEnv).filter(([name]) => !/^npm_/i.test(name)));
    env.PATH = [
      cli!.dir,
      dirname(process.execPath),
      ...(process.env.PATH ?? "").split(delimiter).filter((dir) => !dir.includes("node_modules")),
    ].join(delimiter);
    Object.assign(env, registry.npmEnv, { GMS_BASE_URL: emulator.url, GMS_API_KEY: API_KEY });
    project = join(work, "gms-npx");
    mkdirSync(project);
    await run("npm", ["init", "-y"], { cwd: project, env });
    await run("npm", ["pkg", "set", "type=module"], { cwd: project, env });
    await run("npm", ["install", "pulumi-gms", "@pulumi/pulumi"], { cwd: project, env });
    writeFileSync(join(project, "driver.mjs"), DRIVER);
  }, 600_000);
  afterAll(async () => {
    await emulator?.close();
    await server?.close();
    await registry?.close();
    home?.remove();
    // The project's node_modules (@pulumi/pulumi and its dependencies) is many small files.
    if (work) rmSync(work, { recursive: true, force: true });
  }, 300_000);

  it("npm install links the package's commands, and no provider plugin among them", () => {
    const installed = JSON.parse(readFileSync(join(project, "node_modules", "pulumi-gms", "package.json"), "utf8")) as { version: string };
    expect(installed.version).toBe(release!.version);
    const bins = readdirSync(join(project, "node_modules", ".bin"));
    expect(bins).toEqual(expect.arrayContaining(["pulumi-gms", "gms-emulator"]));
    expect(bins).not.toContain("pulumi-resource-gms");
  });

  it("npx runs the driver with node_modules/.bin first on PATH, and the engine downloads the release's plugin", async () => {
    const up = await run("npx", ["--no", "--", "node", "driver.mjs", "up"], { cwd: project, env });
    expect(up).toMatch(/appGuid [0-9a-f-]{36}/);
    const path = /^PATH (.*)$/m.exec(up)![1]!.split(delimiter);
    expect(path.indexOf(join(project, "node_modules", ".bin"))).toBeGreaterThanOrEqual(0);
    expect(path.indexOf(join(project, "node_modules", ".bin"))).toBeLessThan(path.indexOf(cli!.dir));
    expect(up).not.toContain("from $PATH");
    expect(server.downloads()).toEqual([tarballName(PLUGIN, release!.version, hostPlatform()!)]);
    const destroyed = await run("npx", ["--no", "--", "node", "driver.mjs", "destroy"], { cwd: project, env });
    expect(destroyed).toContain("gms:index:App support deleted");
    expect(server.downloads()).toHaveLength(1);
  }, 600_000);
});
