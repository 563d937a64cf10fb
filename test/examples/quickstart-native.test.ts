/**
 * examples/quickstart with the native classes (`gms.native.X` in place of `gms.X`, nothing else changed),
 * through LocalEngine and the provider plugin against the emulator: the quickstart runs both ways. Preview
 * plans the nine kinds and writes nothing; up creates them, linked as the dynamic run links them (the Model to
 * the connection, the Eval to the Dataset); the same program again changes nothing and writes nothing; destroy
 * leaves nothing of it in the service, checked through the API.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { LocalEngine } from "../../src/testing";
import { expectNothingOfTheQuickstart, serviceOf, startQuickstart } from "./quickstart-service";

const KINDS = ["App", "Workflow", "ProviderConnection", "Model", "Dataset", "Eval", "Experiment", "Skill", "ContextSource"];

describe("examples/quickstart with the native classes, through LocalEngine and the provider plugin", () => {
  let work: string;
  let programDir: string;
  let emulator: RunningEmulator;
  let engine: LocalEngine;
  const requests: RequestLogEntry[] = [];
  const writes = () => requests.filter((entry) => entry.method !== "GET").map((entry) => `${entry.method} ${entry.path}`);
  const { api } = serviceOf(() => emulator);
  const state = () =>
    JSON.parse(readFileSync(join(work, "state.json"), "utf8")) as { resources: { type: string; name: string; id: string }[] };

  beforeAll(async () => {
    ({ work, programDir, emulator } = await startQuickstart("gms-quickstart-native", requests));
    const program = join(programDir, "index.ts");
    const dynamic = readFileSync(program, "utf8");
    const native = dynamic.replaceAll("new gms.", "new gms.native.");
    expect(native.match(/new gms\.native\./g)).toHaveLength(KINDS.length);
    writeFileSync(program, native);
    engine = new LocalEngine({
      programDir,
      stateFile: join(work, "state.json"),
      project: "gms-quickstart",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey }, openaiKey: { secret: "sk-native-quickstart-1" } },
      secretsPassphrase: "native quickstart",
      log: () => undefined,
    });
  });
  afterAll(async () => {
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("preview plans the nine kinds as gms:index:* resources and writes nothing", async () => {
    const result = await engine.preview();
    expect(result.steps.map((step) => step.type).sort()).toEqual(KINDS.map((kind) => `gms:index:${kind}`).sort());
    expect(result.counts).toMatchObject({ create: 9, same: 0 });
    expect(writes()).toEqual([]);
  });

  it("up creates them, linked as the dynamic run links them; the same program again writes nothing", async () => {
    const result = await engine.up();
    expect(result.counts).toMatchObject({ create: 9 });
    const ids = Object.fromEntries(state().resources.map((resource) => [resource.name, resource.id]));
    const model = (await api("GET", `/models/${ids["gpt-4o-mini"]}`)).body;
    expect(model.provider_guid ?? model.providerGuid).toBe(ids.openai);
    expect((await api("GET", `/workflows/${ids.triage}`)).body.app).toBe(ids.helpdesk);
    expect(result.outputs.providerKey).toEqual({ value: "sk-native-quickstart-1", secret: true });
    requests.length = 0;
    const again = await engine.up();
    expect(again.counts).toMatchObject({ same: 9, create: 0, update: 0, replace: 0 });
    expect(writes()).toEqual([]);
  });

  it("destroy leaves nothing of the program in the service", async () => {
    const seen = new Map<string, Set<string>>();
    for (const resource of state().resources) seen.set(resource.type.split(":").pop()!, new Set([resource.id]));
    await engine.destroy();
    await expectNothingOfTheQuickstart(() => emulator, seen, 9);
  });
});
