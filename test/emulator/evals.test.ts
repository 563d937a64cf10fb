import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadFixtures } from "../../src/emulator";
import { MISSING_GUID, OTHER_KEY, TEST_FIXTURES, createTestEmulator } from "./harness";

const EVAL_KEYS = [
  "action",
  "alert_on_fail",
  "created_at",
  "created_by_id",
  "data_type",
  "dataset",
  "eval_types",
  "guid",
  "last_updated_by_id",
  "name",
  "sampling_rate",
  "updated_at",
  "version",
];
const VERSION = "11111111-2222-4333-8444-555555555555";

describe("evals routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let summarize: string;
  let exactMatch: string;
  let toxicity: string;
  beforeEach(async () => {
    emulator = createTestEmulator();
    summarize = await emulator.actionGuid("Support", "Summarize");
    const types = (await emulator.call("GET", "/v1/evals/types")).body as { guid: string; name: string }[];
    exactMatch = types.find((type) => type.name === "Exact match")!.guid;
    toxicity = types.find((type) => type.name === "Toxicity")!.guid;
  });
  afterEach(() => emulator.close());

  const createEval = (body: object = {}) =>
    emulator.call("POST", "/v1/evals", { name: "Quality", action: summarize, eval_types: [{ guid: exactMatch }], ...body });
  const createDataset = async (name: string) =>
    (await emulator.call("POST", "/v1/datasets", { name, description: "golden set", app: await emulator.appGuid("Support"), data: [] }))
      .body.guid as string;

  it("lists the global Eval types as a bare array, the same in every workspace", async () => {
    const types = await emulator.call("GET", "/v1/evals/types");
    expect(types.status).toBe(200);
    expect(types.body).toEqual([
      { guid: exactMatch, name: "Exact match", description: null },
      { guid: toxicity, name: "Toxicity", description: null },
    ]);
    expect((await emulator.call("GET", "/v1/evals/types", undefined, { apiKey: OTHER_KEY })).body).toEqual(types.body);
  });

  it("adds Eval types idempotently by name (fixtures load at every start)", async () => {
    expect(emulator.store.evals.ensureType({ name: "Exact match", description: "changed" })).toMatchObject({
      guid: exactMatch,
      description: null,
    });
    loadFixtures(emulator.store, TEST_FIXTURES);
    const added = emulator.store.evals.ensureType({ name: "Relevance", guid: VERSION, description: "on topic" });
    expect(added).toMatchObject({ guid: VERSION, name: "Relevance", description: "on topic" });
    expect((await emulator.call("GET", "/v1/evals/types")).body.map((type: { name: string }) => type.name)).toEqual([
      "Exact match",
      "Toxicity",
      "Relevance",
    ]);
  });

  it("creates a LIVE Eval with its types, variables and options", async () => {
    const variables = [
      { name: "threshold", value: 0.8 },
      { name: "label", value: "ok" },
      { name: "strict", value: true },
      { name: "map", value: { a: 1 } },
    ];
    const created = await createEval({
      eval_types: [{ guid: exactMatch, metadata: { variables } }, { guid: toxicity }],
      version: VERSION,
      sampling_rate: 0.25,
      alert_on_fail: true,
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(EVAL_KEYS);
    expect(created.body).toMatchObject({
      name: "Quality",
      action: summarize,
      version: VERSION,
      eval_types: [
        { guid: exactMatch, name: "Exact match", metadata: { variables } },
        { guid: toxicity, name: "Toxicity", metadata: null },
      ],
      dataset: null,
      sampling_rate: 0.25,
      alert_on_fail: true,
      data_type: "LIVE",
      last_updated_by_id: null,
    });
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    expect((await emulator.call("GET", `/v1/evals/${created.body.guid}`)).body).toEqual(created.body);
  });

  it("defaults version and sampling_rate to null and alert_on_fail to false", async () => {
    const created = await emulator.call("POST", "/v1/evals/", { name: "Bare", action: summarize, eval_types: [] });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ version: null, sampling_rate: null, alert_on_fail: false, eval_types: [], data_type: "LIVE" });
  });

  it("creates a DATASET Eval with the Dataset summary", async () => {
    const dataset = await createDataset("Golden");
    const created = await createEval({ dataset });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ dataset: { guid: dataset, name: "Golden" }, data_type: "DATASET" });
  });

  it("answers 404 for a missing Action, Eval type or Dataset", async () => {
    expect((await createEval({ action: MISSING_GUID })).body).toEqual({ detail: "Action not found" });
    const elsewhere = await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY);
    expect((await createEval({ action: elsewhere })).status).toBe(404);
    const missingType = await createEval({ eval_types: [{ guid: exactMatch }, { guid: MISSING_GUID }] });
    expect(missingType.status).toBe(404);
    expect(missingType.body).toEqual({ detail: "Eval type not found" });
    const missingDataset = await createEval({ dataset: MISSING_GUID });
    expect(missingDataset.status).toBe(404);
    expect(missingDataset.body).toEqual({ detail: "Dataset not found" });
    expect((await emulator.call("GET", "/v1/evals")).body.total_count).toBe(0);
  });

  it("answers 400 for malformed create bodies", async () => {
    for (const body of [
      { name: "Quality", action: summarize },
      { action: summarize, eval_types: [] },
      { name: "Quality", eval_types: [] },
    ]) {
      expect((await emulator.call("POST", "/v1/evals", body)).status, JSON.stringify(body)).toBe(400);
    }
    for (const field of [
      { action: "not-a-uuid" },
      { eval_types: {} },
      { eval_types: [{}] },
      { eval_types: [{ guid: "nope" }] },
      { eval_types: [{ guid: exactMatch, metadata: { variables: [{ name: "x", value: null }] } }] },
      { eval_types: [{ guid: exactMatch, metadata: { variables: [{ value: 1 }] } }] },
      { sampling_rate: 1.5 },
      { sampling_rate: -0.1 },
      { sampling_rate: "0.5" },
      { alert_on_fail: "yes" },
      { version: "v1" },
      { dataset: "nope" },
    ]) {
      expect((await createEval(field)).status, JSON.stringify(field)).toBe(400);
    }
    expect((await emulator.call("GET", "/v1/evals")).body.total_count).toBe(0);
    expect((await createEval({ sampling_rate: 0 })).status).toBe(200);
    expect((await createEval({ sampling_rate: 1 })).status).toBe(200);
  });

  it("lists Evals in the envelope with skip, limit and a dataType filter", async () => {
    const dataset = await createDataset("Golden");
    const live1 = (await createEval({ name: "Live 1" })).body.guid;
    const onDataset = (await createEval({ name: "On dataset", dataset })).body.guid;
    const live2 = (await createEval({ name: "Live 2" })).body.guid;
    const guids = (reply: { body: { data: { guid: string }[] } }) => reply.body.data.map((evaluation) => evaluation.guid);

    const all = await emulator.call("GET", "/v1/evals");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total_count: 3, has_next_page: false });
    expect(guids(all)).toEqual([live1, onDataset, live2]);
    const page = await emulator.call("GET", "/v1/evals?skip=1&limit=1");
    expect(page.body).toMatchObject({ total_count: 3, has_next_page: true });
    expect(guids(page)).toEqual([onDataset]);

    const live = await emulator.call("GET", "/v1/evals?dataType=LIVE");
    expect(live.body).toMatchObject({ total_count: 2, has_next_page: false });
    expect(guids(live)).toEqual([live1, live2]);
    const liveFirst = await emulator.call("GET", "/v1/evals?dataType=LIVE&limit=1");
    expect(liveFirst.body).toMatchObject({ total_count: 2, has_next_page: true });
    expect(guids(await emulator.call("GET", "/v1/evals?dataType=DATASET"))).toEqual([onDataset]);

    const invalid = await emulator.call("GET", "/v1/evals?dataType=BATCH");
    expect(invalid.status).toBe(400);
    expect(invalid.body.detail[0]).toMatchObject({ loc: ["query", "dataType"] });
  });

  it("replaces eval_types on PUT, accepting and ignoring new_record, and changes nothing else", async () => {
    const { body: created } = await createEval({ sampling_rate: 0.5, version: VERSION });
    const updated = await emulator.call("PUT", `/v1/evals/${created.guid}`, {
      name: "Renamed",
      sampling_rate: 0.9,
      eval_types: [
        { guid: toxicity, new_record: true, metadata: { variables: [{ name: "level", value: 2 }] } },
        { guid: exactMatch, new_record: { anything: ["goes"] } },
      ],
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      guid: created.guid,
      name: "Quality",
      sampling_rate: 0.5,
      version: VERSION,
      eval_types: [
        { guid: toxicity, name: "Toxicity", metadata: { variables: [{ name: "level", value: 2 }] } },
        { guid: exactMatch, name: "Exact match", metadata: null },
      ],
      last_updated_by_id: created.created_by_id,
    });
    expect(updated.body.eval_types[1]).not.toHaveProperty("new_record");
    expect((await emulator.call("GET", `/v1/evals/${created.guid}`)).body).toEqual(updated.body);

    expect((await emulator.call("PUT", `/v1/evals/${created.guid}`, { name: "x" })).status).toBe(400);
    const unknown = await emulator.call("PUT", `/v1/evals/${created.guid}`, { eval_types: [{ guid: MISSING_GUID }] });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: "Eval type not found" });
    expect((await emulator.call("GET", `/v1/evals/${created.guid}`)).body.eval_types).toHaveLength(2);
  });

  it("lists no runs for an Eval (no route starts one) and 404 for a missing Eval", async () => {
    const { body: created } = await createEval();
    const runs = await emulator.call("GET", `/v1/evals/${created.guid}/runs`);
    expect(runs.status).toBe(200);
    expect(runs.body).toEqual([]);
    expect((await emulator.call("GET", `/v1/evals/${MISSING_GUID}/runs`)).body).toEqual({ detail: "Eval not found" });
  });

  it("soft deletes: answers the message, then 404 everywhere and gone from the list", async () => {
    const { body: created } = await createEval();
    const deleted = await emulator.call("DELETE", `/v1/evals/${created.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Eval ${created.guid} deleted` });
    for (const [method, path, body] of [
      ["GET", `/v1/evals/${created.guid}`],
      ["PUT", `/v1/evals/${created.guid}`, { eval_types: [] }],
      ["DELETE", `/v1/evals/${created.guid}`],
      ["GET", `/v1/evals/${created.guid}/runs`],
    ] as const) {
      const reply = await emulator.call(method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toEqual({ detail: "Eval not found" });
    }
    expect((await emulator.call("GET", "/v1/evals")).body).toEqual({ data: [], total_count: 0, has_next_page: false });
  });

  it("answers 429 once the workspace Eval allowance is used up", async () => {
    const limited = createTestEmulator({
      ...TEST_FIXTURES,
      workspaces: TEST_FIXTURES.workspaces!.map((workspace) => ({ ...workspace, limits: { evals: 1 } })),
    });
    try {
      const action = await limited.actionGuid("Support", "Summarize");
      expect((await limited.call("POST", "/v1/evals", { name: "One", action, eval_types: [] })).status).toBe(200);
      const refused = await limited.call("POST", "/v1/evals", { name: "Two", action, eval_types: [] });
      expect(refused.status).toBe(429);
      expect(refused.body.detail).toMatch(/Eval limit reached/);
    } finally {
      await limited.close();
    }
  });

  it("scopes Evals to the workspace of the key and rejects malformed UUIDs", async () => {
    const { body: created } = await createEval();
    for (const [method, path, body] of [
      ["GET", `/v1/evals/${created.guid}`],
      ["PUT", `/v1/evals/${created.guid}`, { eval_types: [] }],
      ["DELETE", `/v1/evals/${created.guid}`],
      ["GET", `/v1/evals/${created.guid}/runs`],
    ] as const) {
      expect((await emulator.call(method, path, body, { apiKey: OTHER_KEY })).status, `${method} ${path}`).toBe(404);
    }
    expect((await emulator.call("GET", "/v1/evals", undefined, { apiKey: OTHER_KEY })).body.total_count).toBe(0);
    const otherDataset = (await emulator.call("POST", "/v1/datasets", { name: "Theirs" }, { apiKey: OTHER_KEY })).body.guid;
    expect((await createEval({ dataset: otherDataset })).body).toEqual({ detail: "Dataset not found" });
    const malformed = await emulator.call("GET", "/v1/evals/not-a-uuid");
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail[0]).toMatchObject({ loc: ["path", "guid"] });
    expect((await emulator.call("GET", `/v1/evals/${MISSING_GUID}`)).body).toEqual({ detail: "Eval not found" });
  });
});
