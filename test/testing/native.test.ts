/**
 * A program of the native classes (`pulumi-gms/native`, `gms:index:<Kind>`) through LocalEngine, which serves
 * them with the provider plugin (`pulumi-resource-gms`, the default provider configured from the stack's `gms:*`
 * config) instead of the dynamic-provider host, against the emulator: preview writes nothing, up creates, a
 * second up changes nothing (no API write), an updatable field updates in place, a replace-only field replaces
 * (the Model linked to the connection with it), refresh reports an out-of-band change (the next up sets it back),
 * destroy leaves nothing, and the state holds the connection's key encrypted only. An explicit provider is refused.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { type EngineResult, LocalEngine, installPackageCopy } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";

const TIMEOUT = 120_000;
const CONNECTION_KEY = "sk-native-engine-5e1f09";

const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms/native";
const config = new pulumi.Config();
const app = new gms.App("helpdesk", { name: "Helpdesk", description: config.get("appDescription") ?? "Answers tickets" });
const triage = new gms.Workflow("triage", { name: "Triage", app: app.id }, { parent: app });
const connection = new gms.ProviderConnection("openai", {
  provider: "openai",
  key: config.requireSecret("connectionKey"),
  nickname: "OpenAI",
  name: config.get("connectionName") ?? "primary",
});
const model = new gms.Model("gpt", { llm: "gpt-4o-mini", provider: "openai", key: config.requireSecret("modelKey") }, { dependsOn: [connection] });
export const appGuid = app.id;
export const workflowGuid = triage.id;
export const connectionGuid = connection.id;
export const modelGuid = model.id;
export const modelConnection = model.providerGuid;
`;

const EXPLICIT_PROVIDER = `import * as gms from "pulumi-gms/native";
const provider = new gms.Provider("other", { baseUrl: "http://127.0.0.1:9", apiKey: "k" });
new gms.App("elsewhere", { name: "Elsewhere" }, { provider });
`;

describe("native resources (gms:index:*) on LocalEngine, through the provider plugin", () => {
  let dir: string;
  let emulator: RunningEmulator;
  const writes: string[] = [];

  const engine = (config: Record<string, string> = {}, program = "index.ts") =>
    new LocalEngine({
      programDir: dir,
      program,
      stateFile: join(dir, program === "index.ts" ? "state.json" : "other-state.json"),
      project: "native-engine",
      stack: "dev",
      config: {
        "gms:baseUrl": emulator.url,
        "gms:apiKey": { secret: emulator.apiKey },
        connectionKey: { secret: CONNECTION_KEY },
        modelKey: { secret: "sk-native-engine-model" },
        ...config,
      },
      secretsPassphrase: "native-engine",
      log: () => undefined,
    });
  const api = (method: string, path: string, body?: unknown) => callOverHttp(emulator, method, path, body);
  const ops = (result: EngineResult) => Object.fromEntries(result.steps.map((step) => [step.name, step.op]));
  let guids: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gms-native-engine-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "native-engine-program", private: true, type: "module" }));
    writeFileSync(join(dir, "index.ts"), PROGRAM);
    writeFileSync(join(dir, "explicit.ts"), EXPLICIT_PROVIDER);
    installPackageCopy(dir);
    emulator = await startEmulator({
      onRequestComplete: (entry) => {
        if (entry.method !== "GET") writes.push(`${entry.method} ${entry.path}`);
      },
    });
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    "previews the creates without a write",
    async () => {
      const result = await engine().preview();
      expect(ops(result)).toEqual({ helpdesk: "create", triage: "create", openai: "create", gpt: "create" });
      expect(writes).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "creates every resource in the API, linked as declared",
    async () => {
      const result = await engine().up();
      expect(ops(result)).toEqual({ helpdesk: "create", triage: "create", openai: "create", gpt: "create" });
      expect(result.steps.find((step) => step.name === "triage")?.type).toBe("gms:index:Workflow");
      guids = Object.fromEntries(Object.entries(result.outputs).map(([name, output]) => [name, output.value as string]));
      expect((await api("GET", `/apps/${guids.appGuid}`)).body).toMatchObject({ name: "Helpdesk", description: "Answers tickets" });
      expect((await api("GET", `/workflows/${guids.workflowGuid}`)).body).toMatchObject({ name: "Triage" });
      expect((await api("GET", `/providers/${guids.connectionGuid}`)).status).toBe(200);
      expect((await api("GET", `/models/${guids.modelGuid}`)).status).toBe(200);
      expect(guids.modelConnection).toBe(guids.connectionGuid);
    },
    TIMEOUT,
  );

  it(
    "keeps the connection's key encrypted in the state",
    () => {
      const state = readFileSync(join(dir, "state.json"), "utf8");
      expect(existsSync(join(dir, "state.json.journal"))).toBe(false);
      expect(state).not.toContain(CONNECTION_KEY);
      expect(state).not.toContain(emulator.apiKey);
      const connection = (JSON.parse(state) as { resources: { name: string; inputs: Record<string, unknown> }[] }).resources.find(
        (resource) => resource.name === "openai",
      );
      expect(connection?.inputs.key).toMatchObject({ ciphertext: expect.any(String) });
    },
    TIMEOUT,
  );

  it(
    "changes nothing on a second up",
    async () => {
      writes.length = 0;
      const result = await engine().up();
      expect(ops(result)).toEqual({ helpdesk: "same", triage: "same", openai: "same", gpt: "same" });
      expect(writes).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "updates an updatable field in place",
    async () => {
      const result = await engine({ appDescription: "Answers tickets fast" }).up();
      expect(ops(result)).toEqual({ helpdesk: "update", triage: "same", openai: "same", gpt: "same" });
      expect((await api("GET", `/apps/${guids.appGuid}`)).body).toMatchObject({ description: "Answers tickets fast" });
    },
    TIMEOUT,
  );

  it(
    "replaces on a replace-only field, and the Model linked to the connection with it",
    async () => {
      const result = await engine({ appDescription: "Answers tickets fast", connectionName: "secondary" }).up();
      expect(ops(result)).toEqual({ helpdesk: "same", triage: "same", openai: "replace", gpt: "replace" });
      const connection = result.outputs.connectionGuid!.value as string;
      expect(connection).not.toBe(guids.connectionGuid);
      expect(result.outputs.modelConnection!.value).toBe(connection);
      expect((await api("GET", `/providers/${guids.connectionGuid}`)).status).toBe(404);
      expect((await api("GET", `/providers/${connection}`)).body).toMatchObject({ name: "secondary" });
      guids = Object.fromEntries(Object.entries(result.outputs).map(([name, output]) => [name, output.value as string]));
    },
    TIMEOUT,
  );

  it(
    "reports drift on refresh after an out-of-band change",
    async () => {
      expect((await api("PUT", `/apps/${guids.appGuid}`, { name: "Helpdesk", description: "Changed by hand" })).status).toBe(200);
      const result = await engine().refresh();
      const step = result.steps.find((candidate) => candidate.name === "helpdesk");
      expect(step).toMatchObject({ op: "refresh", changes: expect.arrayContaining(["description"]) });
      expect(result.counts.refresh).toBe(1);
      // The next up of the program sets it back, in place.
      const up = await engine({ appDescription: "Answers tickets fast", connectionName: "secondary" }).up();
      expect(ops(up)).toEqual({ helpdesk: "update", triage: "same", openai: "same", gpt: "same" });
      expect((await api("GET", `/apps/${guids.appGuid}`)).body).toMatchObject({ description: "Answers tickets fast" });
    },
    TIMEOUT,
  );

  it(
    "refuses an explicit provider",
    async () => {
      const failure = await engine({}, "explicit.ts")
        .up()
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: "UNSUPPORTED" });
      expect(String((failure as Error).message)).toMatch(/explicit providers/);
    },
    TIMEOUT,
  );

  it(
    "destroys everything",
    async () => {
      const result = await engine().destroy();
      expect(result.counts.delete).toBe(4);
      expect((await api("GET", `/apps/${guids.appGuid}`)).status).toBe(404);
      expect((await api("GET", `/workflows/${guids.workflowGuid}`)).status).toBe(404);
      expect((await api("GET", `/providers/${guids.connectionGuid}`)).status).toBe(404);
      expect((await api("GET", `/models/${guids.modelGuid}`)).status).toBe(404);
      const state = JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { resources: unknown[] };
      expect(state.resources).toEqual([]);
    },
    TIMEOUT,
  );
});
