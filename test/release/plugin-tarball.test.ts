/**
 * The release's provider plugin (`npm run dist`; skipped, saying why, without it): the tarball as Pulumi installs
 * it, whose executable brings its own Node.js. Unpacked and started where no `node` is on PATH, it serves what
 * `node dist/plugin/main.js` serves: its version, the schema, CheckConfig failures, a real create, read and delete
 * against the emulator, and a log line to the engine through the bundled @pulumi/pulumi. Then the real CLI (skipped
 * likewise without it) installs the tarball with `pulumi plugin install --file` and lists it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { ACME_KEY, type FixtureLookups, KINDS_FIXTURES, fixtureLookups } from "../pulumi-cli/kinds-fixtures";
import { PluginProcess, secret, startFakeEngine, urnOf } from "../plugin/plugin-process";
import { type ExtractedPlugin, extractPlugin, installPlugin, releaseFor, tarballEntries } from "./harness";

const FILE = "release/plugin-tarball.test.ts";
const release = releaseFor(FILE);
const cli = release && pulumiCliFor(FILE);

describe.skipIf(!release)("the plugin tarball", () => {
  it("holds the executable at its root, mode 0755, with LICENSE and README.md beside it", () => {
    const entries = tarballEntries(release!.tarball);
    expect(entries.map((entry) => entry.name).sort()).toEqual(["LICENSE", "README.md", "pulumi-resource-gms"]);
    expect(entries.find((entry) => entry.name === "pulumi-resource-gms")).toMatchObject({ type: "file", mode: 0o755 });
    expect(entries.filter((entry) => entry.name !== "pulumi-resource-gms").map((entry) => entry.mode)).toEqual([0o644, 0o644]);
  });
});

describe.skipIf(!release)("the release's executable, where no Node.js is installed", () => {
  let extracted: ExtractedPlugin;
  let emptyPath: string;
  let emulator: RunningEmulator;
  let fixtures: FixtureLookups;
  /**
   * The executable with nothing on PATH, and a NODE_OPTIONS that would stop a Node.js program from starting at all
   * (the executable takes no Node.js options from the environment, which are meant for the Node.js programs there).
   */
  const start = (engine?: string) =>
    PluginProcess.start(engine, {
      executable: extracted.executable,
      env: { PATH: emptyPath, NODE_OPTIONS: "--require=/no-such-preload.js" },
    });

  beforeAll(async () => {
    extracted = extractPlugin(release!);
    emptyPath = mkdtempSync(join(tmpdir(), "gms-release-path-"));
    emulator = await startEmulator({ port: 0, db: ":memory:", fixtures: KINDS_FIXTURES, fineTuneSeconds: 0 });
    fixtures = await fixtureLookups(emulator);
  });

  afterAll(async () => {
    await emulator?.close();
    extracted?.remove();
    if (emptyPath) rmSync(emptyPath, { recursive: true, force: true });
  });

  it("answers --help and --version and exits, rather than serve", () => {
    const run = (flag: string) => spawnSync(extracted.executable, [flag], { env: { PATH: emptyPath }, encoding: "utf8", timeout: 20_000 });
    expect(run("--version")).toMatchObject({ status: 0, stdout: `${release!.version}\n` });
    expect(run("--help")).toMatchObject({ status: 0, stdout: expect.stringContaining("pulumi-resource-gms --help | --version") });
  });

  it("prints its port, answers GetPluginInfo with the package's version, GetSchema and CheckConfig", async () => {
    expect((spawnSync("node", ["--version"], { env: { PATH: emptyPath } }).error as NodeJS.ErrnoException | undefined)?.code).toBe(
      "ENOENT",
    );
    const plugin = await start();
    try {
      expect(await plugin.getPluginInfo()).toEqual({ version: release!.version });
      const schema = await plugin.getSchema();
      const committed = JSON.parse(readFileSync(join(__dirname, "..", "..", "schema.json"), "utf8"));
      expect({ name: schema.name, version: schema.version }).toEqual({ name: "gms", version: release!.version });
      expect(Object.keys(schema.resources as object).sort()).toEqual(Object.keys(committed.resources).sort());
      expect(Object.keys(schema.functions as object).sort()).toEqual(Object.keys(committed.functions).sort());
      const bad = await plugin.checkConfig({ baseUrl: "https://gms.example.com/api", maxRetries: "-1" });
      expect(bad.failures.map((failure) => failure.property).sort()).toEqual(["baseUrl", "maxRetries"]);
      expect((await plugin.checkConfig({ baseUrl: emulator.url })).failures).toEqual([]);
    } finally {
      await plugin.stop();
    }
  });

  it("creates, reads and deletes an App in the service, and sends a fine-tune's progress to the engine (Engine.Log)", async () => {
    const engine = await startFakeEngine();
    const plugin = await start(engine.address);
    try {
      await plugin.configure({ baseUrl: emulator.url, apiKey: secret(ACME_KEY), maxRetries: "0" });
      const app = urnOf("App", "released");
      const inputs = (await plugin.check(app, {}, { name: "Released", description: "Made by the release's plugin" })).inputs;
      const created = await plugin.create(app, inputs);
      expect((await fixtures.api("GET", `/apps/${created.id}`)).body).toMatchObject({ name: "Released" });
      const read = await plugin.read(app, created.id, created.properties, inputs);
      expect(read).toMatchObject({ id: created.id, properties: { name: "Released", description: "Made by the release's plugin" } });
      await plugin.delete(app, created.id, created.properties);
      expect((await fixtures.api("GET", `/apps/${created.id}`)).status).toBe(404);

      const support = fixtures.guids.apps.Support!;
      const dataset = (await fixtures.api("POST", "/datasets", { name: "Released set", app: support })).body.guid as string;
      const connection = await fixtures.api("POST", "/providers", { provider: "openai", key: "sk-release-not-secret", name: "released" });
      const tune = urnOf("FineTune", "released");
      const tuneInputs = await plugin.check(
        tune,
        {},
        {
          name: "Released tune",
          app: support,
          dataset,
          dataIds: fixtures.data.slice(0, 10).map((record) => record.id),
          baseModel: "gpt-4o-mini",
          providerConnection: await fixtures.numericId("providers", connection.body.guid),
        },
      );
      const tuned = await plugin.create(tune, tuneInputs.inputs);
      expect(engine.logs).toContainEqual(
        expect.objectContaining({ severity: "info", message: expect.stringMatching(/FineTune "Released tune".*succeeded after/) }),
      );
      await plugin.delete(tune, tuned.id, tuned.properties);
    } finally {
      await plugin.stop();
      engine.close();
    }
  });
});

describe.skipIf(!cli)(`the tarball installed by the real CLI: ${cliName(cli)}`, () => {
  it("pulumi plugin install resource gms <version> --file <tarball>, then plugin ls lists it and it serves", async () => {
    const unpacked = () => readdirSync(tmpdir()).filter((name) => name.startsWith("pulumi-plugin-tar"));
    const before = unpacked();
    const installed = installPlugin(cli!, release!);
    // What the CLI leaves in its temporary folder (a plugin tarball it unpacked: pulumi-plugin-tar*) is the sandbox's,
    // removed with it, not the run's.
    expect(unpacked().filter((name) => !before.includes(name))).toEqual([]);
    const cliTemp = installed.env.TMPDIR!;
    expect(existsSync(cliTemp)).toBe(true);
    try {
      const listed = spawnSync(cli!.bin, ["plugin", "ls", "--json"], { env: installed.env, encoding: "utf8" });
      expect(listed.status, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout)).toContainEqual(
        expect.objectContaining({ name: "gms", kind: "resource", version: release!.version }),
      );
      const plugin = await PluginProcess.start(undefined, { executable: installed.executable });
      try {
        expect(await plugin.getPluginInfo()).toEqual({ version: release!.version });
      } finally {
        await plugin.stop();
      }
    } finally {
      installed.remove();
    }
    expect(existsSync(cliTemp)).toBe(false);
    // Sized to its work: an install, a listing and a plugin start by the CLI, on a machine that may be busy.
  }, 120_000);
});
