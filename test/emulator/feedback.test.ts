import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ACME_KEY, MISSING_GUID, OTHER_KEY, createTestEmulator } from "./harness";

const FEEDBACK_FIELDS = [
  "created_at",
  "created_by_id",
  "data",
  "deleted",
  "guid",
  "last_updated_by_id",
  "metadata",
  "source",
  "type",
  "updated_at",
  "value",
].sort();

describe("feedback routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let data: string;
  beforeEach(async () => {
    emulator = createTestEmulator();
    data = await logData();
  });
  afterEach(() => emulator.close());

  /** A new Data record of the workspace, by its GUID. */
  async function logData(apiKey = ACME_KEY): Promise<string> {
    const action =
      apiKey === ACME_KEY ? await emulator.actionGuid("Support", "Summarize") : await emulator.actionGuid("Elsewhere", "Echo", apiKey);
    const reply = await emulator.call("POST", "/v1/data", { action, input: "in", output: "out" }, { apiKey });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body.guid;
  }

  const give = async (extra: Record<string, unknown> = {}) => {
    const reply = await emulator.call("POST", "/v1/feedback", { data, type: "rating", value: 2, source: "api", ...extra });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  };

  it("creates Feedback on a Data record and answers it the same on every read", async () => {
    const created = await emulator.call("POST", "/v1/feedback", {
      data,
      type: "rating",
      value: 1,
      source: "app",
      metadata: { user: "u-1" },
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(FEEDBACK_FIELDS);
    expect(created.body).toMatchObject({
      data,
      type: "rating",
      value: 1,
      source: "app",
      metadata: { user: "u-1" },
      deleted: false,
      last_updated_by_id: null,
    });
    expect(created.body.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    expect((await emulator.call("GET", `/v1/feedback/${created.body.guid}`)).body).toEqual(created.body);
    expect((await emulator.call("GET", "/v1/feedback/")).body.data).toEqual([created.body]);
    // Without metadata it is null.
    expect((await give()).metadata).toBeNull();
  });

  it("takes a rating as 1 or 2, or as the words Negative and Positive in any case, and answers the number", async () => {
    expect((await give({ value: 2 })).value).toBe(2);
    expect((await give({ value: "Negative" })).value).toBe(1);
    expect((await give({ value: "positive" })).value).toBe(2);
    expect((await give({ value: "NEGATIVE" })).value).toBe(1);
  });

  it("takes correction and issue labels with a text value", async () => {
    expect(await give({ type: "correction", value: "The summary should name the customer" })).toMatchObject({
      type: "correction",
      value: "The summary should name the customer",
    });
    expect(await give({ type: "issue", value: "hallucination" })).toMatchObject({ type: "issue", value: "hallucination" });
  });

  it("answers 400 naming `type` for an unknown type and `value` for a value the type does not take", async () => {
    const badType = await emulator.call("POST", "/v1/feedback", { data, type: "thumbs", value: 2, source: "api" });
    expect(badType.status).toBe(400);
    expect(badType.body.detail).toHaveLength(1);
    expect(badType.body.detail[0]).toMatchObject({ loc: ["body", "type"], type: "invalid_value" });

    for (const [type, value] of [
      ["rating", 3],
      ["rating", 0],
      ["rating", "great"],
      ["rating", "2"],
      ["correction", 2],
      ["correction", "  "],
      ["issue", ""],
    ] as const) {
      const reply = await emulator.call("POST", "/v1/feedback", { data, type, value, source: "api" });
      expect(reply.status, `${type} ${value}`).toBe(400);
      expect(reply.body.detail, `${type} ${value}`).toEqual([
        expect.objectContaining({ loc: ["body", "value"], msg: expect.stringContaining(`Invalid value for type '${type}'`) }),
      ]);
    }
    const rating = await emulator.call("POST", "/v1/feedback", { data, type: "rating", value: 5, source: "api" });
    expect(rating.body.detail[0].msg).toBe(
      "Invalid value for type 'rating': a rating is 1 (negative) or 2 (positive), or the word Negative or Positive",
    );
    expect((await emulator.call("GET", "/v1/feedback")).body.total_count).toBe(0);
  });

  it("requires data, type, value and source", async () => {
    const body = { data, type: "rating", value: 2, source: "api" };
    for (const field of Object.keys(body)) {
      const reply = await emulator.call("POST", "/v1/feedback", { ...body, [field]: undefined });
      expect(reply.status, field).toBe(400);
      expect(reply.body.detail, field).toEqual([expect.objectContaining({ loc: ["body", field] })]);
    }
    expect((await emulator.call("POST", "/v1/feedback", { ...body, source: "" })).status).toBe(400);
    expect((await emulator.call("POST", "/v1/feedback", { ...body, data: "not-a-uuid" })).body.detail[0]).toMatchObject({
      loc: ["body", "data"],
    });
    expect((await emulator.call("POST", `/v1/feedback/${data}`, { type: "rating", value: 2 })).body.detail).toEqual([
      { loc: ["body", "source"], msg: "Field required", type: "missing" },
    ]);
  });

  it("answers 404 `Data not found` for a missing, deleted or other workspace's Data record", async () => {
    const theirs = await logData(OTHER_KEY);
    const deleted = await logData();
    await emulator.call("DELETE", `/v1/data/${deleted}`);
    for (const target of [MISSING_GUID, theirs, deleted]) {
      const body = { type: "rating", value: 2, source: "api" };
      const viaBody = await emulator.call("POST", "/v1/feedback", { ...body, data: target });
      expect(viaBody.status).toBe(404);
      expect(viaBody.body).toEqual({ detail: "Data not found" });
      const viaPath = await emulator.call("POST", `/v1/feedback/${target}`, body);
      expect(viaPath.status).toBe(404);
      expect(viaPath.body).toEqual({ detail: "Data not found" });
    }
    expect((await emulator.call("GET", "/v1/feedback")).body.total_count).toBe(0);
  });

  it("creates on POST /feedback/{data guid}, taking `metadata` or the legacy `meta_data`", async () => {
    const other = await logData();
    // The path names the Data record; a `data` field in the body does not count.
    const legacy = await emulator.call("POST", `/v1/feedback/${data}`, {
      data: other,
      type: "issue",
      value: "slow",
      source: "sdk",
      meta_data: { v: 1 },
    });
    expect(legacy.status).toBe(200);
    expect(legacy.body).toMatchObject({ data, type: "issue", value: "slow", source: "sdk", metadata: { v: 1 } });
    const current = await emulator.call("POST", `/v1/feedback/${data}/`, {
      type: "rating",
      value: "Positive",
      source: "sdk",
      metadata: { v: 2 },
      meta_data: { v: 1 },
    });
    expect(current.body).toMatchObject({ data, value: 2, metadata: { v: 2 } });
    expect((await emulator.call("POST", "/v1/feedback/not-a-uuid", { type: "rating", value: 2, source: "sdk" })).status).toBe(400);
  });

  it("replaces type, value, source and metadata on PUT; the Data record never changes", async () => {
    const created = await give({ metadata: { round: 1 } });
    const other = await logData();
    const replaced = await emulator.call("PUT", `/v1/feedback/${created.guid}`, {
      data: other,
      type: "correction",
      value: "better text",
      source: "review",
      meta_data: { round: 2 },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      guid: created.guid,
      data,
      type: "correction",
      value: "better text",
      source: "review",
      metadata: { round: 2 },
      created_at: created.created_at,
      last_updated_by_id: created.created_by_id,
    });
    expect((await emulator.call("GET", `/v1/feedback/${created.guid}`)).body).toEqual(replaced.body);

    // Replacement: `metadata` left out clears it; the value is checked against the new type.
    const cleared = await emulator.call("PUT", `/v1/feedback/${created.guid}`, { type: "rating", value: "negative", source: "review" });
    expect(cleared.body).toMatchObject({ type: "rating", value: 1, metadata: null });
    const refused = await emulator.call("PUT", `/v1/feedback/${created.guid}`, { type: "rating", value: "better text", source: "review" });
    expect(refused.status).toBe(400);
    expect(refused.body.detail[0]).toMatchObject({ loc: ["body", "value"] });
    expect((await emulator.call("PUT", `/v1/feedback/${created.guid}`, { value: 2, source: "review" })).body.detail[0]).toMatchObject({
      loc: ["body", "type"],
    });
    expect((await emulator.call("GET", `/v1/feedback/${created.guid}`)).body).toEqual(cleared.body);
  });

  it("soft deletes: answers the message, then 404 `Feedback not found` and gone from the list", async () => {
    const kept = await give();
    const doomed = await give({ value: 1 });
    const deleted = await emulator.call("DELETE", `/v1/feedback/${doomed.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Feedback ${doomed.guid} deleted` });
    for (const [method, body] of [["GET"], ["PUT", { type: "rating", value: 2, source: "api" }], ["DELETE"]] as const) {
      const reply = await emulator.call(method, `/v1/feedback/${doomed.guid}`, body);
      expect(reply.status, method).toBe(404);
      expect(reply.body).toEqual({ detail: "Feedback not found" });
    }
    expect((await emulator.call("GET", "/v1/feedback")).body).toEqual({ data: [kept], total_count: 1, has_next_page: false });
  });

  it("keeps Feedback readable after its Data record is deleted", async () => {
    const created = await give();
    await emulator.call("DELETE", `/v1/data/${data}`);
    expect((await emulator.call("GET", `/v1/feedback/${created.guid}`)).body).toEqual(created);
  });

  it("lists the workspace's Feedback oldest first in the envelope with skip and limit", async () => {
    const made = [await give({ value: 1 }), await give({ value: 2 }), await give({ type: "issue", value: "x" })];
    const page = await emulator.call("GET", "/v1/feedback?skip=1&limit=1");
    expect(page.body).toEqual({ data: [made[1]], total_count: 3, has_next_page: true });
    expect((await emulator.call("GET", "/v1/feedback?skip=2")).body).toEqual({ data: [made[2]], total_count: 3, has_next_page: false });
    expect((await emulator.call("GET", "/v1/feedback?limit=-1")).status).toBe(400);
  });

  it("scopes Feedback to the workspace of the key and rejects malformed UUIDs", async () => {
    const mine = await give();
    for (const [method, body] of [["GET"], ["PUT", { type: "rating", value: 1, source: "x" }], ["DELETE"]] as const) {
      const reply = await emulator.call(method, `/v1/feedback/${mine.guid}`, body, { apiKey: OTHER_KEY });
      expect(reply.status, method).toBe(404);
    }
    expect((await emulator.call("GET", "/v1/feedback", undefined, { apiKey: OTHER_KEY })).body.total_count).toBe(0);
    expect((await emulator.call("GET", "/v1/feedback/not-a-uuid")).body.detail[0]).toMatchObject({ loc: ["path", "guid"] });
    expect((await emulator.call("GET", `/v1/feedback/${MISSING_GUID}`)).body).toEqual({ detail: "Feedback not found" });
  });
});
