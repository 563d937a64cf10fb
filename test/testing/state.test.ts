/** The state file's secret handling and the engine's secret propagation rules, without a program or host. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EngineError, UNKNOWN } from "../../src/testing";
import { SECRET_SIG, SIG_KEY } from "../../src/provider/values";
import { annotateSecrets, changedKeys, makeSecret, markSecretOutputs, toHostValue } from "../../src/testing/properties";
import { type ResourceState, StateFile } from "../../src/testing/state";
import { gmsPlaceholders } from "../../src/provider/window";

const dirs: string[] = [];
const stateFile = () => {
  const dir = mkdtempSync(join(tmpdir(), "gms-state-"));
  dirs.push(dir);
  return join(dir, "nested", "state.json");
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const resource = (inputs: Record<string, unknown>, outputs: Record<string, unknown>): ResourceState => ({
  urn: "urn:pulumi:dev::p::pulumi-nodejs:dynamic/gms:App::a",
  type: "pulumi-nodejs:dynamic/gms:App",
  name: "a",
  id: "guid-1",
  dependencies: [],
  additionalSecretOutputs: ["connection"],
  inputs,
  outputs,
});

describe("StateFile", () => {
  it("starts empty, and round-trips resources without secrets with no passphrase at all", async () => {
    const path = stateFile();
    const file = new StateFile(path, undefined);
    expect(await file.load()).toEqual({ resources: [], outputs: {} });
    const snapshot = { resources: [resource({ name: "A" }, { name: "A", slug: "a" })], outputs: { slug: "a" } };
    await file.finish(snapshot);
    expect(await new StateFile(path, undefined).load()).toEqual(snapshot);
    expect(JSON.parse(readFileSync(path, "utf8")).secrets).toBeUndefined();
  });

  it("encrypts every secret, however deep, and decrypts it with the same passphrase only", async () => {
    const path = stateFile();
    const connection = makeSecret({ apiKey: "gms_very_secret_key" });
    const snapshot = {
      resources: [resource({ name: "A", connection }, { name: "A", connection, nested: { list: [makeSecret("deep secret")] } })],
      outputs: { key: makeSecret("gms_very_secret_key") },
    };
    await new StateFile(path, "pass").finish(snapshot);
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain("gms_very_secret_key");
    expect(text).not.toContain("deep secret");
    expect(JSON.parse(text).resources[0].inputs.connection).toEqual({
      [SIG_KEY]: SECRET_SIG,
      ciphertext: expect.stringMatching(/^v1:[^:]+:[^:]+$/),
    });

    expect(await new StateFile(path, "pass").load()).toEqual(snapshot);
    await expect(new StateFile(path, "wrong").load()).rejects.toMatchObject({ name: "EngineError", code: "BAD_PASSPHRASE" });
    await expect(new StateFile(path, undefined).load()).rejects.toMatchObject({ code: "PASSPHRASE_REQUIRED" });
    await expect(new StateFile(stateFile(), undefined).save(snapshot)).rejects.toBeInstanceOf(EngineError);
  });

  it("refuses a file it did not write", async () => {
    const path = stateFile();
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, JSON.stringify({ checkpoint: {} }));
    await expect(new StateFile(path, undefined).load()).rejects.toMatchObject({ code: "BAD_STATE" });
  });
});

describe("StateFile checkpoints", () => {
  const secretResource = (name: string): ResourceState => ({
    ...resource({ name, key: makeSecret(`sk-${name}-secret`) }, { name, key: makeSecret(`sk-${name}-secret`) }),
    urn: `urn:pulumi:dev::p::pulumi-nodejs:dynamic/gms:App::${name}`,
    name,
    id: `guid-${name}`,
  });

  it("journals only what each checkpoint changed, and a load after a kill replays it", async () => {
    const path = stateFile();
    const file = new StateFile(path, "pass");
    await file.load();
    const [a, b, c] = [secretResource("a"), secretResource("b"), secretResource("c")];
    await file.save({ resources: [a], outputs: {} });
    await file.save({ resources: [a, b], outputs: {} });
    await file.save({ resources: [a, b, c], outputs: {} });
    await file.save({ resources: [a, c], outputs: { done: true } });
    // Killed here: no state file, only the journal, one line per change, no secret in plaintext.
    expect(existsSync(path)).toBe(false);
    const journal = readFileSync(`${path}.journal`, "utf8").trim().split("\n");
    expect(journal.map((line) => Object.keys(JSON.parse(line))[0])).toEqual(["secrets", "put", "put", "put", "drop", "outputs"]);
    expect(journal.join("\n")).not.toContain("-secret");

    const reloaded = new StateFile(path, "pass");
    expect(await reloaded.load()).toEqual({ resources: [a, c], outputs: { done: true } });
    // The next operation's end writes the file and removes the journal.
    await reloaded.finish({ resources: [a, c], outputs: { done: true } });
    expect(existsSync(`${path}.journal`)).toBe(false);
    expect(await new StateFile(path, "pass").load()).toEqual({ resources: [a, c], outputs: { done: true } });
  });

  it("writes nothing when nothing changed, even for objects rebuilt with the same content", async () => {
    const path = stateFile();
    const first = new StateFile(path, "pass");
    await first.load();
    await first.finish({ resources: [secretResource("a")], outputs: { n: 1 } });
    const written = readFileSync(path, "utf8");
    rmSync(path);
    writeFileSync(path, written);
    const again = new StateFile(path, "pass");
    const loaded = await again.load();
    await again.save({ resources: loaded.resources.map((entry) => ({ ...entry })), outputs: { n: 1 } });
    await again.finish({ resources: loaded.resources.map((entry) => ({ ...entry })), outputs: { n: 1 } });
    expect(existsSync(`${path}.journal`)).toBe(false);
    expect(readFileSync(path, "utf8")).toBe(written);
  });
});

describe("StateFile killed while it stores its first secrets", () => {
  const withKey = (name: string): ResourceState => ({
    urn: `urn:pulumi:dev::p::pulumi-nodejs:dynamic/gms:ProviderConnection::${name}`,
    type: "pulumi-nodejs:dynamic/gms:ProviderConnection",
    name,
    id: `guid-${name}`,
    dependencies: [],
    additionalSecretOutputs: [],
    inputs: { name, key: makeSecret(`sk-${name}-secret`) },
    outputs: { name, key: makeSecret(`sk-${name}-secret`) },
  });
  const pendingCreate = (resource: ResourceState, at: string) => ({
    id: `intent-${resource.name}`,
    resource: { ...resource, id: undefined, outputs: undefined },
    at,
  });
  /** When the loads find the creates in flight: a clock that stands still, so every load makes the same placeholders. */
  const loadedAt = Date.now() + 60_000;
  /** This package's placeholders, as LocalEngine loads its state. */
  const hooked = { lostCreate: gmsPlaceholders.lostCreate, clock: { now: () => loadedAt, sleep: async () => undefined } };
  const journalLines = (path: string) =>
    readFileSync(`${path}.journal`, "utf8")
      .split("\n")
      .filter((line) => line !== "");

  /**
   * A fresh file, then creates journaled and checkpoints taken all at once, as parallel steps do, each
   * bringing secrets; then the kill: the journal is loaded without `finish`. Returns the path and what
   * the state must hold.
   */
  async function killedWhileCreating(count: number) {
    const path = stateFile();
    const file = new StateFile(path, "pass", hooked);
    await file.load();
    const resources = Array.from({ length: count }, (_, index) => withKey(`c${index}`));
    const at = new Date().toISOString();
    const recorded: ResourceState[] = [];
    await Promise.all(
      resources.map(async (resource, index) => {
        await file.creating(pendingCreate(resource, at));
        // Half of them are recorded (and settled); the other half are in flight when the kill comes.
        if (index % 2 === 0) {
          recorded.push(resource);
          file.settle(`intent-${resource.name}`);
          await file.save({ resources: [...recorded], outputs: {} });
        }
      }),
    );
    return { path, recorded, inFlight: resources.filter((_, index) => index % 2 === 1), at };
  }

  it("derives one key for concurrent callers, journals its header before any entry sealed with it, and loads after the kill", async () => {
    const { path, recorded, inFlight, at } = await killedWhileCreating(8);
    const lines = journalLines(path);
    expect(lines.filter((line) => line.startsWith('{"secrets"'))).toHaveLength(1);
    const firstSealed = lines.findIndex((line) => line.includes('"ciphertext"'));
    expect(firstSealed).toBeGreaterThan(-1);
    expect(lines.findIndex((line) => line.startsWith('{"secrets"'))).toBeLessThan(firstSealed);
    expect(lines.join("\n")).not.toContain("-secret");

    const loaded = await new StateFile(path, "pass", hooked).load();
    expect(loaded.resources.filter((resource) => !resource.id.startsWith("unresolved-"))).toEqual(recorded);
    // Each create the kill left in flight is a placeholder holding its inputs, secrets opened, and the
    // window it was sent in, read on this machine's clock (the provider shifts it onto the service's).
    const placeholders = loaded.resources.filter((resource) => resource.id.startsWith("unresolved-"));
    expect(placeholders.map((resource) => resource.name).sort()).toEqual(inFlight.map((resource) => resource.name).sort());
    for (const placeholder of placeholders) {
      const original = inFlight.find((resource) => resource.name === placeholder.name)!;
      expect(placeholder).toMatchObject({ urn: original.urn, inputs: original.inputs, pendingReplacement: true });
      expect(placeholder.outputs).toEqual({
        ...original.inputs,
        __unresolvedCreate: { since: at, until: new Date(loadedAt).toISOString(), clock: "local" },
      });
    }
    // Without the hook, the engine knows no placeholder: the creates in flight are forgotten.
    expect((await new StateFile(path, "pass").load()).resources).toEqual(recorded);
  });

  it("loads whatever a kill can leave in the journal: a torn last line, a last line without its newline, the header after a sealed entry", async () => {
    const { path, recorded } = await killedWhileCreating(4);
    const journal = `${path}.journal`;
    const whole = readFileSync(journal, "utf8");
    const expected = await new StateFile(path, "pass", hooked).load();
    const lines = journalLines(path);
    const header = lines.find((line) => line.startsWith('{"secrets"'))!;
    const variants: Record<string, string> = {
      "a torn last line": `${whole}{"put":{"urn":"urn:pulumi:dev::p::pulumi-nodejs:dynamic/gms:ProviderConnection::torn","inp`,
      "a last line without its newline": whole.slice(0, -1),
      "the header after a sealed entry": `${[...lines.filter((line) => line !== header), header].join("\n")}\n`,
    };
    for (const [what, text] of Object.entries(variants)) {
      writeFileSync(journal, text);
      const file = new StateFile(path, "pass", hooked);
      expect(await file.load(), what).toEqual(expected);
      // The next run appends to that journal: its lines start lines of their own, so it loads after the next kill too.
      const more = withKey("more");
      await file.save({ resources: [...recorded, more], outputs: {} });
      const again = await new StateFile(path, "pass", hooked).load();
      expect(
        again.resources.filter((resource) => !resource.id.startsWith("unresolved-")),
        what,
      ).toEqual([...recorded, more]);
      expect(readFileSync(journal, "utf8"), what).not.toContain('"inp{');
    }
  });

  it("says where a secret is that the state's key cannot open, as an EngineError rather than a crypto error", async () => {
    const { path } = await killedWhileCreating(2);
    // An entry sealed under another salt's key, whose header the journal lacks (what the race left).
    const other = stateFile();
    const stranger = new StateFile(other, "pass");
    await stranger.load();
    await stranger.save({ resources: [withKey("stranger")], outputs: {} });
    const sealedElsewhere = journalLines(other).find((line) => line.startsWith('{"put"'))!;
    writeFileSync(`${path}.journal`, `${readFileSync(`${path}.journal`, "utf8")}${sealedElsewhere}\n`);
    const line = journalLines(path).length;

    const failure = await new StateFile(path, "pass", hooked).load().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(EngineError);
    expect(failure).toMatchObject({ code: "BAD_STATE" });
    const message = (failure as Error).message;
    expect(message).toContain(`${path}.journal line ${line} (urn:pulumi:dev::p::pulumi-nodejs:dynamic/gms:ProviderConnection::stranger)`);
    expect(message).toContain("cannot be decrypted");
    expect(message).not.toContain("Unsupported state");
    expect(message).not.toContain("-secret");
    // A wrong passphrase is still told apart from a secret sealed under an unknown key.
    await expect(new StateFile(path, "wrong").load()).rejects.toMatchObject({ code: "BAD_PASSPHRASE" });
  });
});

describe("secret propagation", () => {
  it("marks an output secret where the input of the same name held a secret, recursing into objects", () => {
    const outs = annotateSecrets(
      { connection: { apiKey: "k", baseUrl: "u" }, list: ["a"], name: "n", extra: 1 },
      { connection: { apiKey: makeSecret("k"), baseUrl: "u" }, list: [makeSecret("a")], name: "n" },
    );
    expect(outs).toEqual({ connection: { apiKey: makeSecret("k"), baseUrl: "u" }, list: makeSecret(["a"]), name: "n", extra: 1 });
  });

  it("applies additionalSecretOutputs to outputs that exist, and toHostValue unwraps everything", () => {
    const outs = markSecretOutputs({ key: "k", name: "n" }, {}, ["key", "missing"]);
    expect(outs).toEqual({ key: makeSecret("k"), name: "n" });
    expect(toHostValue(outs)).toEqual({ key: "k", name: "n" });
  });

  it("diffs top-level properties by revealed value; null and absent are the same; unknown differs", () => {
    expect(changedKeys({ a: 1, b: makeSecret("x"), c: null }, { a: 1, b: "x" })).toEqual([]);
    expect(changedKeys({ a: 1, b: "x" }, { a: UNKNOWN, b: makeSecret("y") })).toEqual(["a", "b"]);
  });
});
