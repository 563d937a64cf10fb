import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ACME_KEY, MISSING_GUID, OTHER_KEY, createTestEmulator } from "./harness";

const PUBLIC_FIELDS = [
  "created_at",
  "full_prompt_sent",
  "guid",
  "input",
  "latency",
  "metadata",
  "model",
  "model_provider",
  "num_input_tokens",
  "num_output_tokens",
  "output",
  "updated_at",
].sort();

const guids = (body: { data: { guid: string }[] }) => body.data.map((data) => data.guid);

describe("data routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let summarize: string;
  beforeEach(async () => {
    emulator = createTestEmulator();
    summarize = await emulator.actionGuid("Support", "Summarize");
  });
  afterEach(() => emulator.close());

  /** A valid create body with `extra` fields added or replaced. */
  const withDefaults = (extra: Record<string, unknown>) => ({ action: summarize, input: "in", output: "out", ...extra });
  const log = async (extra: Record<string, unknown> = {}, apiKey = ACME_KEY) => {
    const reply = await emulator.call("POST", "/v1/data", withDefaults(extra), { apiKey });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  };

  it("creates a record and answers the public fields only", async () => {
    const created = await emulator.call("POST", "/v1/data", {
      action: summarize,
      input: { text: "long story" },
      output: "short",
      full_prompt_sent: "Summarize: long story",
      system_message: "be brief",
      prompt_template: "Summarize: {{text}}",
      model: "gpt-4o-mini",
      model_provider: "openai",
      num_input_tokens: 12,
      num_output_tokens: 3,
      latency: 0.42,
      metadata: { customer: "c-1" },
      runId: "run-1",
      raw_request: { anything: true },
      cost: 0.001,
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(PUBLIC_FIELDS);
    expect(created.body).toMatchObject({
      input: { text: "long story" },
      output: "short",
      full_prompt_sent: "Summarize: long story",
      model: "gpt-4o-mini",
      model_provider: "openai",
      num_input_tokens: 12,
      num_output_tokens: 3,
      latency: 0.42,
      metadata: { customer: "c-1" },
    });
    expect(created.body.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    expect(created.body.updated_at).toBe(created.body.created_at);

    const fetched = await emulator.call("GET", `/v1/data/${created.body.guid}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);
  });

  it("keeps each kind of input and output, and answers null for optional fields never supplied", async () => {
    const array = await log({ input: [{ role: "user", content: "hi" }], output: ["a", "b"] });
    expect(array).toMatchObject({ input: [{ role: "user", content: "hi" }], output: ["a", "b"] });
    const bare = await log();
    expect(bare).toMatchObject({
      input: "in",
      output: "out",
      full_prompt_sent: null,
      model: null,
      model_provider: null,
      num_input_tokens: null,
      num_output_tokens: null,
      latency: null,
      metadata: null,
    });
    expect((await emulator.call("GET", `/v1/data/${array.guid}`)).body.input).toEqual([{ role: "user", content: "hi" }]);
  });

  it("accepts the legacy meta_data name, metadata winning when both are sent", async () => {
    expect((await log({ meta_data: { legacy: 1 } })).metadata).toEqual({ legacy: 1 });
    expect((await log({ meta_data: { legacy: 1 }, metadata: { current: 2 } })).metadata).toEqual({ current: 2 });
  });

  it("requires action, input and output, and validates field types", async () => {
    for (const [missing, body] of [
      ["action", { input: "in", output: "out" }],
      ["input", { action: summarize, output: "out" }],
      ["output", { action: summarize, input: "in" }],
    ] as const) {
      const reply = await emulator.call("POST", "/v1/data", body);
      expect(reply.status, missing).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["body", missing]);
    }
    for (const bad of [
      { input: 42 },
      { output: true },
      { action: "not-a-uuid" },
      { num_input_tokens: -1 },
      { num_output_tokens: 1.5 },
      { latency: "fast" },
      { metadata: "flat" },
      { app: "nope" },
    ]) {
      const reply = await emulator.call("POST", "/v1/data", withDefaults(bad));
      expect(reply.status, JSON.stringify(bad)).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["body", Object.keys(bad)[0]]);
    }
  });

  it("answers 404 when the Action or a supplied relationship does not resolve", async () => {
    const echo = await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY);
    const elsewhere = await emulator.appGuid("Elsewhere", OTHER_KEY);
    for (const [body, detail] of [
      [{ action: MISSING_GUID }, "Action not found"],
      [{ action: echo }, "Action not found"],
      [{ app: MISSING_GUID }, "App not found"],
      [{ app: elsewhere }, "App not found"],
      [{ session: MISSING_GUID }, "Session not found"],
      [{ version: MISSING_GUID }, "Version not found"],
    ] as const) {
      const reply = await emulator.call("POST", "/v1/data", withDefaults(body));
      expect(reply.status, JSON.stringify(body)).toBe(404);
      expect(reply.body).toEqual({ detail });
    }
    expect((await emulator.call("GET", "/v1/data")).body.total_count).toBe(0);
    // Null relationships count as not supplied.
    await log({ app: null, session: null, version: null });
  });

  it("files a record under the Action's App unless another App is given", async () => {
    const support = await emulator.appGuid("Support");
    const sales = await emulator.appGuid("Sales");
    const own = await log();
    const moved = await log({ app: sales });
    expect(guids((await emulator.call("GET", `/v1/apps/${support}/data`)).body)).toEqual([own.guid]);
    const salesData = await emulator.call("GET", `/v1/apps/${sales}/data`);
    expect(salesData.status).toBe(200);
    expect(salesData.body).toMatchObject({ total_count: 1, has_next_page: false });
    expect(salesData.body.data).toEqual([moved]);
  });

  it("uses a supplied guid, refusing a malformed or taken one", async () => {
    const chosen = "6f1c1f5e-2b8a-4c7e-9a51-3d2f0b9e8a10";
    expect((await log({ guid: chosen })).guid).toBe(chosen);
    const taken = await emulator.call("POST", "/v1/data", withDefaults({ guid: chosen }));
    expect(taken.status).toBe(400);
    expect(taken.body).toEqual({ detail: `Data ${chosen} already exists` });
    const malformed = await emulator.call("POST", "/v1/data", withDefaults({ guid: "1234" }));
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail[0].loc).toEqual(["body", "guid"]);
  });

  it("lists newest first in the envelope with skip and limit", async () => {
    const first = await log({ input: "first" });
    const second = await log({ input: "second" });
    const third = await log({ input: "third" });
    const all = await emulator.call("GET", "/v1/data");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total_count: 3, has_next_page: false });
    expect(guids(all.body)).toEqual([third.guid, second.guid, first.guid]);
    expect(Object.keys(all.body.data[0]).sort()).toEqual(PUBLIC_FIELDS);

    const page = await emulator.call("GET", "/v1/data?skip=1&limit=1");
    expect(page.body).toMatchObject({ total_count: 3, has_next_page: true });
    expect(guids(page.body)).toEqual([second.guid]);
    expect((await emulator.call("GET", "/v1/data?skip=2&limit=1")).body.has_next_page).toBe(false);

    const support = await emulator.appGuid("Support");
    const appPage = await emulator.call("GET", `/v1/apps/${support}/data?limit=2`);
    expect(appPage.body).toMatchObject({ total_count: 3, has_next_page: true });
    expect(guids(appPage.body)).toEqual([third.guid, second.guid]);
    expect((await emulator.call("GET", "/v1/data?limit=-1")).status).toBe(400);
  });

  it("updates the supplied fields only", async () => {
    const created = await log({ model: "gpt-4o-mini", metadata: { a: 1 }, latency: 1 });
    const updated = await emulator.call("PUT", `/v1/data/${created.guid}`, {
      output: { label: "positive" },
      num_input_tokens: 7,
      model_provider: "openai",
      meta_data: { b: 2 },
      latency: null,
    });
    expect(updated.status).toBe(200);
    expect(Object.keys(updated.body).sort()).toEqual(PUBLIC_FIELDS);
    expect(updated.body).toMatchObject({
      guid: created.guid,
      input: "in",
      output: { label: "positive" },
      model: "gpt-4o-mini",
      model_provider: "openai",
      num_input_tokens: 7,
      metadata: { b: 2 },
      latency: null,
      created_at: created.created_at,
    });
    expect((await emulator.call("GET", `/v1/data/${created.guid}`)).body).toEqual(updated.body);
    expect((await emulator.call("PUT", `/v1/data/${created.guid}`, {})).body).toMatchObject({ output: { label: "positive" } });
    expect((await emulator.call("PUT", `/v1/data/${created.guid}`, { input: 5 })).status).toBe(400);
  });

  it("resolves relationships on update: the App moves only when given, and unresolved GUIDs answer 404", async () => {
    const support = await emulator.appGuid("Support");
    const sales = await emulator.appGuid("Sales");
    const pitch = await emulator.actionGuid("Sales", "Pitch");
    const created = await log();

    // A new Action keeps the record under its App.
    expect((await emulator.call("PUT", `/v1/data/${created.guid}`, { action: pitch })).status).toBe(200);
    expect(guids((await emulator.call("GET", `/v1/apps/${support}/data`)).body)).toEqual([created.guid]);
    expect((await emulator.call("PUT", `/v1/data/${created.guid}`, { app: sales })).status).toBe(200);
    expect(guids((await emulator.call("GET", `/v1/apps/${support}/data`)).body)).toEqual([]);
    expect(guids((await emulator.call("GET", `/v1/apps/${sales}/data`)).body)).toEqual([created.guid]);

    for (const [body, detail] of [
      [{ action: MISSING_GUID }, "Action not found"],
      [{ app: MISSING_GUID }, "App not found"],
      [{ session: MISSING_GUID }, "Session not found"],
      [{ version_id: MISSING_GUID }, "Version not found"],
    ] as const) {
      const reply = await emulator.call("PUT", `/v1/data/${created.guid}`, { output: "changed", ...body });
      expect(reply.status, JSON.stringify(body)).toBe(404);
      expect(reply.body).toEqual({ detail });
    }
    // A failed update changes nothing.
    expect((await emulator.call("GET", `/v1/data/${created.guid}`)).body.output).toBe("out");
  });

  it("soft deletes: a message, then 404 everywhere and gone from both lists", async () => {
    const support = await emulator.appGuid("Support");
    const kept = await log();
    const doomed = await log();
    const deleted = await emulator.call("DELETE", `/v1/data/${doomed.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Data ${doomed.guid} deleted` });
    for (const [method, body] of [["GET"], ["PUT", { output: "x" }], ["DELETE"]] as const) {
      const reply = await emulator.call(method, `/v1/data/${doomed.guid}`, body);
      expect(reply.status, method).toBe(404);
      expect(reply.body).toEqual({ detail: "Data not found" });
    }
    expect((await emulator.call("GET", "/v1/data")).body).toMatchObject({ total_count: 1, data: [{ guid: kept.guid }] });
    expect((await emulator.call("GET", `/v1/apps/${support}/data`)).body).toMatchObject({ total_count: 1, data: [{ guid: kept.guid }] });
  });

  it("scopes records to the workspace of the key", async () => {
    const echo = await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY);
    const theirs = (await emulator.call("POST", "/v1/data", { action: echo, input: "i", output: "o" }, { apiKey: OTHER_KEY })).body;
    await log();
    for (const [method, body] of [["GET"], ["PUT", { output: "x" }], ["DELETE"]] as const) {
      expect((await emulator.call(method, `/v1/data/${theirs.guid}`, body)).status, method).toBe(404);
    }
    expect((await emulator.call("GET", "/v1/data")).body.total_count).toBe(1);
    const otherList = await emulator.call("GET", "/v1/data", undefined, { apiKey: OTHER_KEY });
    expect(guids(otherList.body)).toEqual([theirs.guid]);
    expect((await emulator.call("GET", `/v1/apps/${await emulator.appGuid("Elsewhere", OTHER_KEY)}/data`)).body).toEqual({
      detail: "App not found",
    });
  });

  it("answers 400 for malformed UUIDs and 404 for unknown records and Apps", async () => {
    for (const [method, path] of [
      ["GET", "/v1/data/not-a-uuid"],
      ["PUT", "/v1/data/not-a-uuid"],
      ["DELETE", "/v1/data/not-a-uuid"],
      ["GET", "/v1/apps/not-a-uuid/data"],
    ] as const) {
      const reply = await emulator.call(method, path, method === "PUT" ? { output: "x" } : undefined);
      expect(reply.status, `${method} ${path}`).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["path", "guid"]);
    }
    expect((await emulator.call("GET", `/v1/data/${MISSING_GUID}`)).body).toEqual({ detail: "Data not found" });
    const missingApp = await emulator.call("GET", `/v1/apps/${MISSING_GUID}/data`);
    expect(missingApp.status).toBe(404);
    expect(missingApp.body).toEqual({ detail: "App not found" });
  });

  it("offers the store contract other kinds build on", async () => {
    const caller = emulator.store.workspaces.authenticate(ACME_KEY)!;
    const record = emulator.store.data.create(caller, {
      action: summarize,
      input: [{ q: "x" }],
      output: "y",
      runId: "run-7",
      numInputTokens: 4,
    });
    expect(record).toMatchObject({
      action: summarize,
      app: await emulator.appGuid("Support"),
      runId: "run-7",
      input: [{ q: "x" }],
      output: "y",
      numInputTokens: 4,
      model: null,
    });
    expect(emulator.store.data.find(caller, record.guid)).toEqual(record);
    expect(emulator.store.data.find(caller, MISSING_GUID)).toBeUndefined();
    expect(() => emulator.store.data.get(caller, MISSING_GUID)).toThrow("Data not found");
    const other = emulator.store.workspaces.authenticate(OTHER_KEY)!;
    expect(emulator.store.data.find(other, record.guid)).toBeUndefined();
  });
});
