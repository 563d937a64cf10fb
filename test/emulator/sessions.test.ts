import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MISSING_GUID, OTHER_KEY, createTestEmulator } from "./harness";

const notFound = (detail: string) => ({ status: 404, body: { detail } });

const SESSION_KEYS = ["action", "created_at", "created_by_id", "ext_user_id", "guid", "last_updated_by_id", "name", "updated_at"];

const guids = (body: { data: { guid: string }[] }) => body.data.map((record) => record.guid);
/** The Data GUID a run's feedback URL names. */
const dataOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);

describe("sessions routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let summarize: string;
  let classify: string;
  const create = async (body: Record<string, unknown> = {}) => {
    const reply = await emulator.call("POST", "/v1/sessions", { action: summarize, ...body });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  };
  /** Runs Summarize in the Session (when given) and returns the logged Data record's GUID. */
  const runIn = async (session: string | undefined, text = "t") => {
    const reply = await emulator.call("POST", "/v1/actions", { action: summarize, input: { text }, session });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return dataOf(reply.body.feedback_url);
  };
  beforeEach(async () => {
    emulator = createTestEmulator();
    summarize = await emulator.actionGuid("Support", "Summarize");
    classify = await emulator.actionGuid("Support", "Classify");
  });
  afterEach(() => emulator.close());

  it("creates a Session of an Action, with an optional name and external user ID", async () => {
    const created = await emulator.call("POST", "/v1/sessions", { action: summarize, name: "Chat", extUserId: "user-1" });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(SESSION_KEYS);
    expect(created.body).toMatchObject({
      name: "Chat",
      action: summarize,
      ext_user_id: "user-1",
      created_by_id: expect.any(String),
      last_updated_by_id: null,
    });
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    expect((await emulator.call("GET", `/v1/sessions/${created.body.guid}`)).body).toEqual(created.body);
    const bare = await emulator.call("POST", "/v1/sessions/", { action: classify });
    expect(bare.status).toBe(200);
    expect(bare.body).toMatchObject({ name: null, action: classify, ext_user_id: null });
    expect((await emulator.call("POST", "/v1/sessions", { action: classify, name: null, extUserId: null })).body).toMatchObject({
      name: null,
      ext_user_id: null,
    });
  });

  it("refuses a missing or foreign Action with 404 and malformed bodies with 400", async () => {
    expect(await emulator.call("POST", "/v1/sessions", { action: MISSING_GUID })).toMatchObject(notFound("Action not found"));
    const echo = await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY);
    expect(await emulator.call("POST", "/v1/sessions", { action: echo })).toMatchObject(notFound("Action not found"));
    for (const [body, loc] of [
      [{}, ["body", "action"]],
      [{ action: "nope" }, ["body", "action"]],
      [{ action: summarize, name: "" }, ["body", "name"]],
      [{ action: summarize, name: 3 }, ["body", "name"]],
      [{ action: summarize, extUserId: "" }, ["body", "extUserId"]],
    ] as const) {
      const reply = await emulator.call("POST", "/v1/sessions", body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(loc);
    }
    expect((await emulator.call("GET", "/v1/sessions")).body.total_count).toBe(0);
  });

  it("lists Sessions oldest first in the envelope, with skip, limit and the extUserId filter", async () => {
    const one = await create({ name: "One", extUserId: "alice" });
    const two = await create({ name: "Two", extUserId: "bob" });
    const three = await create({ name: "Three", extUserId: "alice" });
    const all = await emulator.call("GET", "/v1/sessions");
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ data: [one, two, three], total_count: 3, has_next_page: false });
    expect((await emulator.call("GET", "/v1/sessions/?skip=1&limit=1")).body).toEqual({ data: [two], total_count: 3, has_next_page: true });
    expect((await emulator.call("GET", "/v1/sessions?extUserId=alice")).body).toEqual({
      data: [one, three],
      total_count: 2,
      has_next_page: false,
    });
    expect((await emulator.call("GET", "/v1/sessions?extUserId=alice&limit=1")).body).toEqual({
      data: [one],
      total_count: 2,
      has_next_page: true,
    });
    expect((await emulator.call("GET", "/v1/sessions?extUserId=carol")).body).toEqual({ data: [], total_count: 0, has_next_page: false });
    expect((await emulator.call("GET", "/v1/sessions?limit=-1")).status).toBe(400);
  });

  it("renames a Session, keeping the external user ID unless one is given (null clears it)", async () => {
    const session = await create({ name: "Before", extUserId: "alice" });
    const renamed = await emulator.call("PUT", `/v1/sessions/${session.guid}`, { name: "After" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      name: "After",
      ext_user_id: "alice",
      action: summarize,
      last_updated_by_id: session.created_by_id,
    });
    expect((await emulator.call("GET", `/v1/sessions/${session.guid}`)).body).toEqual(renamed.body);
    expect((await emulator.call("PUT", `/v1/sessions/${session.guid}`, { name: "After", extUserId: "bob" })).body.ext_user_id).toBe("bob");
    expect((await emulator.call("PUT", `/v1/sessions/${session.guid}`, { name: "After", extUserId: null })).body.ext_user_id).toBeNull();

    for (const body of [{}, { extUserId: "x" }, { name: "" }, { name: "x", action: "ignored", extUserId: 5 }]) {
      const reply = await emulator.call("PUT", `/v1/sessions/${session.guid}`, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
    }
    expect((await emulator.call("GET", `/v1/sessions/${session.guid}`)).body).toMatchObject({ name: "After", ext_user_id: null });
  });

  it("soft deletes: a message, then 404 on every Session route and gone from the list; its Data records stay", async () => {
    const session = await create();
    const logged = await runIn(session.guid);
    const deleted = await emulator.call("DELETE", `/v1/sessions/${session.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Session ${session.guid} deleted` });
    for (const [method, path, body] of [
      ["GET", `/v1/sessions/${session.guid}`],
      ["PUT", `/v1/sessions/${session.guid}`, { name: "x" }],
      ["DELETE", `/v1/sessions/${session.guid}`],
      ["GET", `/v1/sessions/${session.guid}/data`],
    ] as const) {
      expect(await emulator.call(method, path, body), `${method} ${path}`).toMatchObject(notFound("Session not found"));
    }
    expect((await emulator.call("GET", "/v1/sessions")).body).toMatchObject({ data: [], total_count: 0 });
    expect((await emulator.call("GET", `/v1/data/${logged}`)).status).toBe(200);
    // A deleted Session no longer resolves for a run or a Data record.
    expect(await emulator.call("POST", "/v1/actions", { action: summarize, input: { text: "t" }, session: session.guid })).toMatchObject(
      notFound("Session not found"),
    );
    expect(await emulator.call("POST", "/v1/data", { action: summarize, input: "in", output: "out", session: session.guid })).toMatchObject(
      notFound("Session not found"),
    );
  });

  it("lists the Data of the Session's runs and of records logged or updated into it, newest first", async () => {
    const session = await create();
    const other = await create();
    const first = await runIn(session.guid, "first");
    await runIn(undefined, "outside");
    const second = await runIn(session.guid, "second");
    const logged = await emulator.call("POST", "/v1/data", { action: summarize, input: "in", output: "out", session: session.guid });
    expect(logged.status).toBe(200);
    const moved = await emulator.call("POST", "/v1/data", { action: summarize, input: "in", output: "moved", session: other.guid });
    expect(guids((await emulator.call("GET", `/v1/sessions/${other.guid}/data`)).body)).toEqual([moved.body.guid]);
    expect((await emulator.call("PUT", `/v1/data/${moved.body.guid}`, { session: session.guid })).status).toBe(200);
    // An update without `session` (or with null) keeps the record where it is.
    expect((await emulator.call("PUT", `/v1/data/${moved.body.guid}`, { output: "kept", session: null })).status).toBe(200);

    const list = await emulator.call("GET", `/v1/sessions/${session.guid}/data`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total_count: 4, has_next_page: false });
    expect(guids(list.body)).toEqual([moved.body.guid, logged.body.guid, second, first]);
    expect(list.body.data[3]).toMatchObject({ input: { text: "first" }, output: "Summarize: first" });
    expect(list.body.data[0].output).toBe("kept");
    const page = await emulator.call("GET", `/v1/sessions/${session.guid}/data/?skip=1&limit=2`);
    expect(page.body).toMatchObject({ total_count: 4, has_next_page: true });
    expect(guids(page.body)).toEqual([logged.body.guid, second]);
    expect((await emulator.call("GET", `/v1/sessions/${other.guid}/data`)).body).toMatchObject({ data: [], total_count: 0 });

    // A deleted record leaves the Session's list.
    await emulator.call("DELETE", `/v1/data/${first}`);
    expect(guids((await emulator.call("GET", `/v1/sessions/${session.guid}/data`)).body)).toEqual([
      moved.body.guid,
      logged.body.guid,
      second,
    ]);
  });

  it("refuses an unknown Session on an Action run with 404, logging nothing", async () => {
    expect(await emulator.call("POST", "/v1/actions", { action: summarize, input: { text: "t" }, session: MISSING_GUID })).toMatchObject(
      notFound("Session not found"),
    );
    expect((await emulator.call("GET", "/v1/data")).body.total_count).toBe(0);
  });

  it("scopes Sessions to the workspace of the key and answers 400 for malformed GUIDs", async () => {
    const echo = await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY);
    const theirs = await emulator.call("POST", "/v1/sessions", { action: echo, name: "Theirs", extUserId: "alice" }, { apiKey: OTHER_KEY });
    expect(theirs.status).toBe(200);
    for (const [method, path, body] of [
      ["GET", `/v1/sessions/${theirs.body.guid}`],
      ["PUT", `/v1/sessions/${theirs.body.guid}`, { name: "mine" }],
      ["DELETE", `/v1/sessions/${theirs.body.guid}`],
      ["GET", `/v1/sessions/${theirs.body.guid}/data`],
    ] as const) {
      expect(await emulator.call(method, path, body), `${method} ${path}`).toMatchObject(notFound("Session not found"));
    }
    expect(
      await emulator.call("POST", "/v1/actions", { action: summarize, input: { text: "t" }, session: theirs.body.guid }),
    ).toMatchObject(notFound("Session not found"));
    expect((await emulator.call("GET", "/v1/sessions?extUserId=alice")).body.total_count).toBe(0);
    expect((await emulator.call("GET", `/v1/sessions/${theirs.body.guid}`, undefined, { apiKey: OTHER_KEY })).body.name).toBe("Theirs");
    for (const [method, path] of [
      ["GET", "/v1/sessions/nope"],
      ["PUT", "/v1/sessions/nope"],
      ["DELETE", "/v1/sessions/nope"],
      ["GET", "/v1/sessions/nope/data"],
    ] as const) {
      const reply = await emulator.call(method, path, method === "PUT" ? { name: "x" } : undefined);
      expect(reply.status, `${method} ${path}`).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["path", "guid"]);
    }
    expect(await emulator.call("GET", `/v1/sessions/${MISSING_GUID}`)).toMatchObject(notFound("Session not found"));
    expect((await emulator.call("GET", "/v1/sessions", undefined, { apiKey: null })).status).toBe(401);
  });
});
