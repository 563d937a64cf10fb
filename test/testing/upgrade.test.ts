/**
 * Upgrades are safe: a state file an earlier release wrote (test/fixtures/state-v<version>/, made by
 * test/fixtures/make-state-fixture.mts on that release) still works with this package. Each fixture is
 * copied to a throw-away directory with the current built package installed; the emulator opens the
 * fixture's own database, so the stored GUIDs name live objects. Then, with the current code:
 * the stored `__provider` text loads, refresh finds every object as stored, `up` of the same program
 * changes nothing and writes nothing, and destroy deletes every object (checked through the API).
 */
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { type EngineResult, LocalEngine, installPackageCopy } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";

const FIXTURES = join(__dirname, "..", "fixtures");
const STATE_FIXTURES = readdirSync(FIXTURES)
  .filter((name) => name.startsWith("state-v"))
  .sort();
const PACKAGE = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as {
  exports: Record<string, string>;
};

/** fixture.json, as make-state-fixture.mts writes it. */
interface Fixture {
  packageVersion: string;
  project: string;
  stack: string;
  passphrase: string;
  apiKey: string;
  secrets: Record<string, string>;
  program: string;
  state: string;
  db: string;
}

interface StoredResource {
  type: string;
  name: string;
  id: string;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
}

/** Where each kind lives in the API, to check its objects independently of the engine. */
const COLLECTION: Record<string, string> = {
  "pulumi-nodejs:dynamic/gms:App": "/apps",
  "pulumi-nodejs:dynamic/gms:Workflow": "/workflows",
  "pulumi-nodejs:dynamic/gms:ProviderConnection": "/providers",
  "pulumi-nodejs:dynamic/gms:Model": "/models",
};

const digest = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

const steps = (result: EngineResult) =>
  result.steps.map((step) => `${step.op} ${step.name}${step.changes.length ? ` [${step.changes.join(", ")}]` : ""}`);

it("has a stored state fixture to upgrade from", () => {
  expect(STATE_FIXTURES).toContain("state-v0.1.0");
});

describe.each(STATE_FIXTURES)("%s: the state an earlier release stored, used by this release", (name) => {
  const source = join(FIXTURES, name);
  const fixture = JSON.parse(readFileSync(join(source, "fixture.json"), "utf8")) as Fixture;
  const stored = JSON.parse(readFileSync(join(source, fixture.state), "utf8")) as { resources: StoredResource[] };
  const storedDigest = digest(join(source, fixture.db));
  let work: string;
  let programDir: string;
  let stateFile: string;
  let emulator: RunningEmulator;
  let engine: LocalEngine;
  const requests: RequestLogEntry[] = [];
  const writes = () => requests.filter((entry) => entry.method !== "GET").map((entry) => `${entry.method} ${entry.path}`);
  const get = (resource: StoredResource) => callOverHttp(emulator, "GET", `${COLLECTION[resource.type]}/${resource.id}`);

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "gms-upgrade-"));
    programDir = join(work, "program");
    stateFile = join(work, "state", `${fixture.stack}.json`);
    mkdirSync(programDir, { recursive: true });
    mkdirSync(join(work, "state"));
    writeFileSync(join(programDir, "package.json"), JSON.stringify({ name: "upgrade-program", private: true, type: "module" }));
    cpSync(join(source, fixture.program), join(programDir, fixture.program));
    cpSync(join(source, fixture.state), stateFile);
    cpSync(join(source, fixture.db), join(work, fixture.db));
    installPackageCopy(programDir);
    emulator = await startEmulator({
      db: join(work, fixture.db),
      apiKey: fixture.apiKey,
      onRequestComplete: (entry) => requests.push(entry),
    });
    engine = new LocalEngine({
      programDir,
      program: fixture.program,
      stateFile,
      project: fixture.project,
      stack: fixture.stack,
      config: {
        "gms:baseUrl": emulator.url,
        "gms:apiKey": { secret: fixture.apiKey },
        ...Object.fromEntries(Object.entries(fixture.secrets).map(([key, value]) => [key, { secret: value }])),
      },
      secretsPassphrase: fixture.passphrase,
      log: () => {},
    });
  });

  afterAll(async () => {
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("is a fixture of four kinds whose secrets are stored encrypted", () => {
    expect(stored.resources.map((resource) => resource.type).sort()).toEqual(Object.keys(COLLECTION).sort());
    const text = readFileSync(join(source, fixture.state), "utf8");
    for (const secret of Object.values(fixture.secrets)) expect(text).not.toContain(secret);
    expect(text).toMatch(/"ciphertext": "v1:/);
  });

  it("names each provider by a shim module path that this package still serves", () => {
    const fromProgram = createRequire(join(programDir, fixture.program));
    const installed = join(programDir, "node_modules", "pulumi-gms");
    expect(PACKAGE.exports["./dist/shims/*.js"]).toBe("./dist/shims/*.js");
    for (const resource of stored.resources) {
      const kind = resource.type.replace("pulumi-nodejs:dynamic/gms:", "");
      const file = kind.replace(/(?<=[a-z])(?=[A-Z])/g, "-").toLowerCase();
      for (const text of [resource.inputs.__provider, resource.outputs.__provider]) {
        // The whole serialized provider is one `require` of the shim: nothing of the old code is inlined.
        expect(String(text).match(/require\("[^"]*"\)/g), `${resource.name}`).toEqual([`require("pulumi-gms/dist/shims/${file}.js")`]);
      }
      const resolved = fromProgram.resolve(`pulumi-gms/dist/shims/${file}.js`);
      expect(relative(installed, resolved)).toBe(join("dist", "shims", `${file}.js`));
      const shim = fromProgram(resolved) as Record<string, unknown>;
      for (const method of ["check", "diff", "create", "read", "update", "delete"])
        expect(shim[method], `${file}.${method}`).toBeTypeOf("function");
    }
  });

  it("the stored objects are live in the stored database", async () => {
    for (const resource of stored.resources) expect((await get(resource)).status, resource.name).toBe(200);
  });

  it("refresh reads every object and finds it as stored, with no write", async () => {
    requests.length = 0;
    const result = await engine.refresh();
    expect(steps(result).sort()).toEqual(stored.resources.map((resource) => `same ${resource.name}`).sort());
    expect(writes()).toEqual([]);
  });

  it("up with the same program changes nothing and makes no write", async () => {
    requests.length = 0;
    const result = await engine.up();
    expect(steps(result).sort()).toEqual(stored.resources.map((resource) => `same ${resource.name}`).sort());
    expect(writes()).toEqual([]);
    expect(result.outputs.appGuid).toEqual({
      value: stored.resources.find((resource) => resource.type.endsWith(":App"))!.id,
      secret: false,
    });
    expect(result.outputs.providerKey).toEqual({ value: fixture.secrets.openaiKey, secret: true });
  });

  it("destroy deletes every object, dependents first, and empties the state", async () => {
    requests.length = 0;
    // In the state's order, which the `up` above may have rewritten in the program's (a Model's inputs gained the
    // connection it links to, `__linkTo`), reversed: dependents first.
    const current = (JSON.parse(readFileSync(stateFile, "utf8")) as { resources: StoredResource[] }).resources;
    expect(current.map((resource) => resource.id).sort()).toEqual(stored.resources.map((resource) => resource.id).sort());
    const result = await engine.destroy();
    expect(steps(result)).toEqual(current.map((resource) => `delete ${resource.name}`).reverse());
    for (const resource of stored.resources) expect((await get(resource)).status, resource.name).toBe(404);
    expect(writes()).toHaveLength(stored.resources.length);
    expect(JSON.parse(readFileSync(stateFile, "utf8")).resources).toEqual([]);
    // The copy was used: the committed fixture is as it was.
    expect(digest(join(source, fixture.db))).toBe(storedDigest);
  });
});
