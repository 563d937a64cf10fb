/**
 * The plugin process as the engine runs it, over gRPC against the emulator: its port and its end, the schema
 * it serves, its configuration checks, secrets on the wire, preview with unknowns, a partial create, and two
 * provider instances for two workspaces.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator";
import { fixtureLookups, KINDS_FIXTURES } from "../pulumi-cli/kinds-fixtures";
import { ACME_KEY, OTHER_KEY, type PluginBed, startPluginBed } from "./bed";
import { partialOf } from "../provider/testbed";
import { isSecret, PluginProcess, plain, secret, startFakeEngine, UNKNOWN, urnOf } from "./plugin-process";

describe("the plugin process", () => {
  it("answers --help and --version as a command, and exits without serving (it is not run by hand, and says so)", () => {
    const main = join(__dirname, "..", "..", "dist", "plugin", "main.js");
    const version = (JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as { version: string }).version;
    for (const flag of ["--help", "-h"]) {
      const help = spawnSync(process.execPath, [main, flag], { encoding: "utf8", timeout: 20_000 });
      expect(help.status).toBe(0);
      expect(help.stdout).toContain(`pulumi-resource-gms ${version}: the Pulumi resource provider plugin`);
      expect(help.stdout).toContain(`pulumi plugin install resource gms ${version} --server github://api.github.com/`);
    }
    const printed = spawnSync(process.execPath, [main, "--version"], { encoding: "utf8", timeout: 20_000 });
    expect({ status: printed.status, stdout: printed.stdout }).toEqual({ status: 0, stdout: `${version}\n` });
  });

  it("prints its port, serves, and exits when the engine closes its standard input", async () => {
    const plugin = await PluginProcess.start();
    expect((await plugin.checkConfig({})).failures).toEqual([]);
    plugin.child.stdin!.end();
    expect(await plugin.exited()).toBe(0);
    await plugin.stop();
  });

  it("stops on SIGTERM, as the engine ends its plugins", async () => {
    const plugin = await PluginProcess.start();
    try {
      expect(Object.keys((await plugin.getSchema()).resources as object)).toHaveLength(10);
      expect((await plugin.checkConfig({ maxRetries: "many" })).failures.map((failure) => failure.property)).toEqual(["maxRetries"]);
      plugin.child.kill("SIGTERM");
      expect(await plugin.exited()).toBe(0);
    } finally {
      await plugin.stop();
    }
  });

  it("exits once it has answered Cancel", async () => {
    const plugin = await PluginProcess.start();
    await plugin.cancel();
    expect(await plugin.exited()).toBe(0);
    await plugin.stop();
  });

  it("serves the package schema: schema.json's document, whose provider takes the configuration as inputs", async () => {
    const plugin = await PluginProcess.start();
    try {
      const served = await plugin.getSchema();
      const committed = JSON.parse(readFileSync(join(__dirname, "..", "..", "schema.json"), "utf8"));
      expect(served).toEqual(committed);
      const { provider, config } = served as { provider: { inputProperties: object }; config: { variables: object } };
      expect(Object.keys(provider.inputProperties)).toEqual([
        "apiKey",
        "baseUrl",
        "maxRequestsPerSecond",
        "maxRetries",
        "requestDeadlineMs",
        "retryBaseDelayMs",
      ]);
      expect(provider.inputProperties).toEqual(config.variables);
      expect(Object.keys(served.resources as object)).toContain("gms:index:ContextSource");
    } finally {
      await plugin.stop();
    }
  });

  it("fails CheckConfig naming the bad field, and keeps the API key secret", async () => {
    const plugin = await PluginProcess.start();
    try {
      const bad = await plugin.checkConfig({
        baseUrl: "https://gms.example.com/api",
        maxRetries: "-1",
        retryBaseDelayMs: "soon",
        maxRequestsPerSecond: "0",
      });
      expect(bad.failures.map((failure) => failure.property).sort()).toEqual([
        "baseUrl",
        "maxRequestsPerSecond",
        "maxRetries",
        "retryBaseDelayMs",
      ]);
      expect(bad.failures.find((failure) => failure.property === "baseUrl")!.reason).toMatch(/\/v1/);
      expect(bad.failures.find((failure) => failure.property === "maxRequestsPerSecond")!.reason).toMatch(
        /^gms:maxRequestsPerSecond must be a number of requests per second above 0, for example 5 or 0\.5/,
      );
      const good = await plugin.checkConfig({
        baseUrl: "https://gms.example.com/v1",
        apiKey: "gms_plain_key",
        maxRetries: 2,
        maxRequestsPerSecond: 0.5,
      });
      expect(good.failures).toEqual([]);
      expect(isSecret(good.inputs.apiKey)).toBe(true);
      expect(good.inputs.baseUrl).toBe("https://gms.example.com/v1");
    } finally {
      await plugin.stop();
    }
  });
});

describe("the plugin against the emulator", () => {
  let bed: PluginBed;
  beforeAll(async () => {
    bed = await startPluginBed();
  });
  afterAll(() => bed?.close());

  const appCount = async () => ((await bed.api("GET", "/apps")).body.data as unknown[]).length;

  it("refuses adopt, which only the dynamic resources take, naming the import option instead; and creates nothing", async () => {
    const plugin = await PluginProcess.start();
    try {
      await plugin.configure({ baseUrl: bed.emulator.url, apiKey: secret(ACME_KEY) });
      const before = await appCount();
      const checked = await plugin.check(urnOf("App", "adopting"), {}, { name: "Adopting", adopt: "0f9c1a52-58e4-4b6f-9d0e-2f7d3c8b1a10" });
      expect(checked.failures).toEqual([
        {
          property: "adopt",
          reason: expect.stringMatching(/dynamic resources \(gms\.App\) only.*import resource option.*pulumi import gms:index:App/),
        },
      ]);
      expect(checked.inputs).not.toHaveProperty("adopt");
      expect(await appCount()).toBe(before);
    } finally {
      await plugin.stop();
    }
  });

  it("answers Configure accepting secrets and previews, and rejects an unknown type token", async () => {
    const plugin = await PluginProcess.start();
    try {
      expect(await plugin.configure({ baseUrl: bed.emulator.url, apiKey: secret(ACME_KEY) })).toEqual({
        acceptSecrets: true,
        supportsPreview: true,
      });
      await expect(plugin.check("urn:pulumi:dev::p::gms:index:Nothing::x", {}, {})).rejects.toThrow(/no resource type gms:index:Nothing/);
    } finally {
      await plugin.stop();
    }
  });

  it("keeps secrets secret: declared secret fields, the connection, and any input the program made secret", async () => {
    const { plugin } = bed;
    const urn = urnOf("App", "secretive");
    const checked = await plugin.check(urn, {}, { name: "Secretive", description: secret("internal-notes-7f3a") });
    expect(isSecret(checked.inputs.description)).toBe(true);
    expect(isSecret(checked.inputs.name)).toBe(false);
    const created = await plugin.create(urn, checked.inputs);
    expect(isSecret(created.properties.description)).toBe(true);
    expect(plain(created.properties).description).toBe("internal-notes-7f3a");
    expect(isSecret(created.properties.name)).toBe(false);
    expect((await bed.api("GET", `/apps/${created.id}`)).body.description).toBe("internal-notes-7f3a");
    const read = await plugin.read(urn, created.id, created.properties, checked.inputs);
    expect(isSecret(read.properties.description)).toBe(true);
    expect(isSecret(read.inputs.description)).toBe(true);

    // A key the program passed as plain text is a secret all the same (a declared secret field).
    const pcUrn = urnOf("ProviderConnection", "plain-key");
    const pc = await plugin.check(pcUrn, {}, { provider: "openai", key: "sk-plain-typed-9d8e", name: "plain key" });
    expect(isSecret(pc.inputs.key)).toBe(true);
    const pcCreated = await plugin.create(pcUrn, pc.inputs);
    expect(isSecret(pcCreated.properties.key)).toBe(true);

    // A resource's own connection (another workspace) is a secret, and its calls go there.
    const otherUrn = urnOf("App", "elsewhere");
    const other = await plugin.check(otherUrn, {}, { name: "Elsewhere 2", connection: { baseUrl: bed.emulator.url, apiKey: OTHER_KEY } });
    expect(isSecret(other.inputs.connection)).toBe(true);
    const otherCreated = await plugin.create(otherUrn, other.inputs);
    expect(isSecret(otherCreated.properties.connection)).toBe(true);
    expect((await bed.otherApi("GET", `/apps/${otherCreated.id}`)).status).toBe(200);
    expect((await bed.api("GET", `/apps/${otherCreated.id}`)).status).toBe(404);

    // An error names no secret: a check failure about a secret value shows it blanked.
    const failed = await plugin.check(
      urnOf("ProviderConnection", "bad"),
      {},
      { provider: "openai", key: secret("sk-bad-url-5e6f"), url: secret("not a url sk-bad-url-5e6f") },
    );
    expect(failed.failures.map((failure) => failure.property)).toContain("url");
    expect(JSON.stringify(failed.failures)).not.toContain("sk-bad-url-5e6f");

    for (const [u, c] of [
      [urn, created],
      [pcUrn, pcCreated],
      [otherUrn, otherCreated],
    ] as const)
      await plugin.delete(u, c.id, c.properties);
  });

  it("previews with unknowns: check and diff pass them, create and update answer without a call", async () => {
    const { plugin } = bed;
    const urn = urnOf("Workflow", "pending");
    const checked = await plugin.check(urn, {}, { name: "Pending", app: UNKNOWN });
    expect(checked.failures).toEqual([]);
    expect(checked.inputs.app).toBe(UNKNOWN);
    const before = (await bed.api("GET", `/apps/${bed.apps.Support}/workflows`)).body;
    const preview = await plugin.create(urn, checked.inputs, true);
    expect(preview.id).toBe("");
    expect(preview.properties.guid).toBe(UNKNOWN);
    expect((await bed.api("GET", `/apps/${bed.apps.Support}/workflows`)).body).toEqual(before);

    const appUrn = urnOf("App", "previewed");
    const app = await plugin.create(appUrn, (await plugin.check(appUrn, {}, { name: "Previewed" })).inputs);
    const diff = await plugin.diff(appUrn, app.id, app.properties, { name: UNKNOWN });
    expect(diff).toMatchObject({ changes: "some", replaces: [], detailedDiff: { name: "UPDATE" } });
    const count = await appCount();
    const updated = await plugin.update(appUrn, app.id, app.properties, { name: UNKNOWN }, true);
    expect(updated.properties).toMatchObject({ guid: app.id, name: UNKNOWN });
    expect((await bed.api("GET", `/apps/${app.id}`)).body.name).toBe("Previewed");
    expect(await appCount()).toBe(count);
    await plugin.delete(appUrn, app.id, app.properties);
  });

  it("names each property's change in the detailed diff: added, deleted, updated, or replaced with the service", async () => {
    const { plugin } = bed;
    const urn = urnOf("App", "detailed");
    const app = await plugin.create(urn, (await plugin.check(urn, {}, { name: "Detailed" })).inputs);
    const diff = (news: Record<string, unknown>) => plugin.diff(urn, app.id, app.properties, news);
    expect((await diff({ name: "Detailed", description: "now described" })).detailedDiff).toEqual({ description: "ADD" });
    const described = await plugin.update(urn, app.id, app.properties, { name: "Detailed", description: "now described" });
    expect((await plugin.diff(urn, app.id, described.properties, { name: "Detailed", description: null })).detailedDiff).toEqual({
      description: "DELETE",
    });
    // Another service (base URL) is another object: the connection replaces it.
    const moved = await diff({ name: "Detailed", connection: { baseUrl: "https://elsewhere.example.com/v1", apiKey: "gms_elsewhere" } });
    expect(moved).toMatchObject({ changes: "some", replaces: ["connection"], detailedDiff: { connection: "ADD_REPLACE" } });
    await plugin.delete(urn, app.id, described.properties);
  });

  it("looks up a create whose answer was lost instead of sending it again: one object, the one state records", async () => {
    const { plugin } = bed;
    const urn = urnOf("App", "lost");
    const checked = await plugin.check(urn, {}, { name: "Lost answer", description: "made once" });
    bed.emulator.faults.set({ lost: 1, methods: ["POST"] });
    let created: Awaited<ReturnType<typeof plugin.create>>;
    try {
      created = await plugin.create(urn, checked.inputs);
      expect(bed.emulator.faults.stats().lost).toBeGreaterThan(0);
    } finally {
      bed.emulator.faults.set(undefined);
    }
    const named = ((await bed.api("GET", "/apps")).body.data as { guid: string; name: string }[]).filter(
      (app) => app.name === "Lost answer",
    );
    expect(named.map((app) => app.guid)).toEqual([created.id]);
    await plugin.delete(urn, created.id, created.properties);
  });

  it("reports a create that made its object but failed as an init error with the id, and the next run replaces it", async () => {
    const { plugin } = bed;
    const urn = urnOf("ProviderConnection", "partial");
    const checked = await plugin.check(
      urn,
      {},
      { provider: "openai", key: secret("sk-partial-4f0e"), name: "partial", nickname: "Partial" },
    );
    bed.emulator.faults.set({ error: 1, methods: ["PUT", "DELETE"] });
    let failure: unknown;
    try {
      await plugin.create(urn, checked.inputs);
    } catch (error) {
      failure = error;
    } finally {
      bed.emulator.faults.set(undefined);
    }
    const partial = partialOf(failure);
    expect(partial.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(partial.reasons.length).toBeGreaterThan(0);
    expect(partial.message + partial.reasons.join("")).not.toContain("sk-partial-4f0e");
    expect(isSecret(partial.properties.key)).toBe(true);
    expect(partial.properties.__incomplete).toBe(true);
    expect((await bed.api("GET", `/providers/${partial.id}`)).status).toBe(200);
    // The next `up`: the recorded object is replaced, deleted first.
    const diff = await plugin.diff(urn, partial.id, partial.properties, checked.inputs);
    expect(diff).toMatchObject({
      changes: "some",
      deleteBeforeReplace: true,
      replaces: ["__incomplete"],
      detailedDiff: { __incomplete: "UPDATE_REPLACE" },
    });
    await plugin.delete(urn, partial.id, partial.properties);
    expect((await bed.api("GET", `/providers/${partial.id}`)).status).toBe(404);
  });

  it("serves the package's functions (Invoke): an object result as is, a list as `result`, bad arguments and misses named", async () => {
    const { plugin } = bed;
    const action = await plugin.invoke("gms:index:getAction", { app: "Support", name: "Classify" });
    expect(action).toEqual({
      result: {
        guid: bed.actions["Support/Classify"],
        app: bed.apps.Support,
        name: "Classify",
        actionType: expect.any(String),
        model: "gpt-4o",
      },
      failures: [],
    });
    const contexts = (await plugin.invoke("gms:index:getContexts", {})).result as { result: { name: string }[] };
    expect(contexts.result.map((context) => context.name).sort()).toEqual(["FAQ", "Handbook"]);
    // Another workspace through `connection`, the key secret on the wire and blanked from any error.
    const other = await plugin.invoke("gms:index:getWorkspace", { connection: secret({ baseUrl: bed.emulator.url, apiKey: OTHER_KEY }) });
    expect(other.result).toMatchObject({ name: "Other", apps: [expect.objectContaining({ name: "Elsewhere" })] });
    expect(await plugin.invoke("gms:index:getAction", { app: "Support", name: 7 })).toEqual({
      result: {},
      failures: [{ property: "name", reason: expect.stringMatching(/string/) }],
    });
    await expect(plugin.invoke("gms:index:getAction", { app: "Support", name: "Translate" })).rejects.toThrow(
      'No Action of App "Support" named "Translate". Available: "Summarize", "Classify".',
    );
    await expect(plugin.invoke("gms:index:getNothing", {})).rejects.toThrow(/no function gms:index:getNothing/);
    const refused = plugin.invoke("gms:index:getWorkspace", {
      connection: secret({ baseUrl: bed.emulator.url, apiKey: "gms_not_a_real_key_1234" }),
    });
    await expect(refused).rejects.toThrow();
    await expect(refused.catch((error: Error) => error.message)).resolves.not.toContain("gms_not_a_real_key_1234");
  });

  it("diffs a provider's configuration: another service or another workspace's key replaces, the rest updates", async () => {
    const { plugin } = bed;
    const olds = { baseUrl: bed.emulator.url, apiKey: secret(ACME_KEY), maxRetries: "0" };
    const diff = async (news: Record<string, unknown>) => {
      const answer = await plugin.diffConfig(olds, { ...olds, ...news });
      return { changes: answer.changes, replaces: answer.replaces, detailedDiff: answer.detailedDiff };
    };
    expect(await diff({})).toEqual({ changes: "none", replaces: [], detailedDiff: {} });
    expect(await diff({ maxRetries: "5" })).toEqual({ changes: "some", replaces: [], detailedDiff: { maxRetries: "UPDATE" } });
    expect(await diff({ baseUrl: `${bed.emulator.url}/` })).toEqual({ changes: "some", replaces: [], detailedDiff: { baseUrl: "UPDATE" } });
    expect(await diff({ baseUrl: "https://gms.elsewhere.example/v1" })).toEqual({
      changes: "some",
      replaces: ["baseUrl"],
      detailedDiff: { baseUrl: "UPDATE_REPLACE" },
    });
    // The key of another workspace moves every resource; a key that no longer works was rotated (an update).
    expect(await diff({ apiKey: secret(OTHER_KEY) })).toEqual({
      changes: "some",
      replaces: ["apiKey"],
      detailedDiff: { apiKey: "UPDATE_REPLACE" },
    });
    const rotated = await plugin.diffConfig({ ...olds, apiKey: secret("gms_revoked_key_5c0ffee") }, olds);
    expect({ replaces: rotated.replaces, detailedDiff: rotated.detailedDiff }).toEqual({
      replaces: [],
      detailedDiff: { apiKey: "UPDATE" },
    });
    // In a preview the new key may be unknown: an update, as for a dynamic resource's connection.
    expect(await diff({ apiKey: UNKNOWN })).toEqual({ changes: "some", replaces: [], detailedDiff: { apiKey: "UPDATE" } });
  });

  it("sends its log lines to the engine whose address it was started with (a fine-tune's progress, each request under its resource)", async () => {
    const engine = await startFakeEngine();
    const plugin = await PluginProcess.start(engine.address);
    try {
      await plugin.configure({ baseUrl: bed.emulator.url, apiKey: secret(ACME_KEY), maxRetries: "0" });
      const dataset = (await bed.api("POST", "/datasets", { name: "Logged set", app: bed.apps.Support })).body.guid as string;
      const made = await bed.api("POST", "/providers", { provider: "openai", key: "sk-logged-not-secret", name: "logged connection" });
      const args = {
        name: "Logged tune",
        app: bed.apps.Support,
        dataset,
        dataIds: bed.data.slice(0, 10).map((d) => d.id),
        baseModel: "gpt-4o-mini",
        providerConnection: await bed.numericId("providers", made.body.guid),
      };
      const urn = urnOf("FineTune", "logged");
      const created = await plugin.create(urn, (await plugin.check(urn, {}, args)).inputs);
      expect(engine.logs).toContainEqual(
        expect.objectContaining({ severity: "info", message: expect.stringMatching(/FineTune "Logged tune".*succeeded after/) }),
      );
      expect(engine.logs).toContainEqual({
        severity: "debug",
        message: expect.stringMatching(new RegExp(`^gms: ${urn}: POST /\\S+ attempt 1: 20\\d in `)),
        urn,
      });
      await plugin.delete(urn, created.id, created.properties);
    } finally {
      await plugin.stop();
      engine.close();
    }
  });

  it("bounds a FineTune's training wait by the engine's customTimeouts.create, naming it; the object is kept as created with errors", async () => {
    // A service whose fine-tunes never leave processing.
    const slow = await startEmulator({ port: 0, db: ":memory:", fixtures: KINDS_FIXTURES, fineTuneSeconds: 3600 });
    const plugin = await PluginProcess.start();
    try {
      const { api, guids, data, numericId } = await fixtureLookups(slow);
      const { apps } = guids;
      await plugin.configure({ baseUrl: slow.url, apiKey: secret(ACME_KEY), maxRetries: "0" });
      const dataset = (await api("POST", "/datasets", { name: "Slow set", app: apps.Support })).body.guid as string;
      const made = await api("POST", "/providers", { provider: "openai", key: "sk-slow-not-secret", name: "slow connection" });
      const args = {
        name: "Never done",
        app: apps.Support,
        dataset,
        dataIds: data.slice(0, 10).map((d) => d.id),
        baseModel: "gpt-4o-mini",
        providerConnection: await numericId("providers", made.body.guid),
        waitTimeoutSeconds: 3600,
      };
      const urn = urnOf("FineTune", "never");
      const failure = await plugin.create(urn, (await plugin.check(urn, {}, args)).inputs, false, 1.5).then(
        () => expect.unreachable("the create finished"),
        (error: unknown) => error,
      );
      const partial = partialOf(failure);
      expect(partial.message).toContain("was still processing after");
      expect(partial.message).toContain("Raise the create's timeout of 1.5 s (customTimeouts.create), which ran out first");
      expect((await api("GET", `/finetune/${partial.id}`)).status).toBe(200);
      await plugin.delete(urn, partial.id, partial.properties);
    } finally {
      await plugin.stop();
      await slow.close();
    }
  });

  it("serves two provider instances for two workspaces independently", async () => {
    const acme = bed.plugin;
    const other = await PluginProcess.start();
    try {
      await other.configure({ baseUrl: bed.emulator.url, apiKey: secret(OTHER_KEY), maxRetries: "0" });
      const urn = urnOf("App", "twin");
      const args = { name: "Twin", description: "one per workspace" };
      const inAcme = await acme.create(urn, (await acme.check(urn, {}, args)).inputs);
      const inOther = await other.create(urn, (await other.check(urn, {}, args)).inputs);
      expect(inAcme.id).not.toBe(inOther.id);
      expect((await bed.api("GET", `/apps/${inAcme.id}`)).status).toBe(200);
      expect((await bed.api("GET", `/apps/${inOther.id}`)).status).toBe(404);
      expect((await bed.otherApi("GET", `/apps/${inOther.id}`)).status).toBe(200);
      expect((await bed.otherApi("GET", `/apps/${inAcme.id}`)).status).toBe(404);
      // Each reads only its own workspace: the other's object is gone as far as it can see.
      expect((await other.read(urn, inAcme.id, inAcme.properties)).id).toBe("");
      expect((await acme.read(urn, inAcme.id, inAcme.properties)).id).toBe(inAcme.id);
      await acme.delete(urn, inAcme.id, inAcme.properties);
      await other.delete(urn, inOther.id, inOther.properties);
      expect((await bed.otherApi("GET", `/apps/${inOther.id}`)).status).toBe(404);
    } finally {
      await other.stop();
    }
  });
});
