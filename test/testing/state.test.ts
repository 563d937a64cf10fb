/** The state file's secret handling and the engine's secret propagation rules, without a program or host. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EngineError, UNKNOWN } from "../../src/testing";
import { SECRET_SIG, SIG, annotateSecrets, changedKeys, makeSecret, markSecretOutputs, reveal } from "../../src/testing/properties";
import { type ResourceState, StateFile } from "../../src/testing/state";

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
      [SIG]: SECRET_SIG,
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

describe("secret propagation", () => {
  it("marks an output secret where the input of the same name held a secret, recursing into objects", () => {
    const outs = annotateSecrets(
      { connection: { apiKey: "k", baseUrl: "u" }, list: ["a"], name: "n", extra: 1 },
      { connection: { apiKey: makeSecret("k"), baseUrl: "u" }, list: [makeSecret("a")], name: "n" },
    );
    expect(outs).toEqual({ connection: { apiKey: makeSecret("k"), baseUrl: "u" }, list: makeSecret(["a"]), name: "n", extra: 1 });
  });

  it("applies additionalSecretOutputs to outputs that exist, and reveal unwraps everything", () => {
    const outs = markSecretOutputs({ key: "k", name: "n" }, {}, ["key", "missing"]);
    expect(outs).toEqual({ key: makeSecret("k"), name: "n" });
    expect(reveal(outs)).toEqual({ key: "k", name: "n" });
  });

  it("diffs top-level properties by revealed value; null and absent are the same; unknown differs", () => {
    expect(changedKeys({ a: 1, b: makeSecret("x"), c: null }, { a: 1, b: "x" })).toEqual([]);
    expect(changedKeys({ a: 1, b: "x" }, { a: UNKNOWN, b: makeSecret("y") })).toEqual(["a", "b"]);
  });
});
