import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MISSING_GUID, OTHER_KEY, TEST_FIXTURES, createTestEmulator } from "./harness";

const notFound = (detail: string) => ({ status: 404, body: { detail } });

const EXPERIMENT_KEYS = [
  "app",
  "created_at",
  "created_by_id",
  "deleted",
  "guid",
  "last_updated_by_id",
  "name",
  "primary_action",
  "secondary_action",
  "status",
  "updated_at",
];

describe("experiments routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let support: string;
  let summarize: string;
  let classify: string;
  let pitch: string;
  const create = (name = "A/B") =>
    emulator.call("POST", "/v1/experiments", { name, app: support, primary_action: summarize, secondary_action: classify });
  beforeEach(async () => {
    emulator = createTestEmulator();
    support = await emulator.appGuid("Support");
    summarize = await emulator.actionGuid("Support", "Summarize");
    classify = await emulator.actionGuid("Support", "Classify");
    pitch = await emulator.actionGuid("Sales", "Pitch");
  });
  afterEach(() => emulator.close());

  it("creates an active Experiment of two Actions of the App", async () => {
    const created = await create("Tone test");
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(EXPERIMENT_KEYS);
    expect(created.body).toMatchObject({
      name: "Tone test",
      app: support,
      primary_action: summarize,
      secondary_action: classify,
      status: "active",
      deleted: false,
      created_by_id: expect.any(String),
      last_updated_by_id: null,
    });
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    expect((await emulator.call("GET", `/v1/experiments/${created.body.guid}`)).body).toEqual(created.body);
    const slash = await emulator.call("POST", "/v1/experiments/", {
      name: "Slash",
      app: support,
      primary_action: classify,
      secondary_action: classify,
    });
    expect(slash.status).toBe(200);
  });

  it("refuses a missing App or Action with 404 and Actions of another App with 400", async () => {
    const body = { name: "x", app: support, primary_action: summarize, secondary_action: classify };
    expect(await emulator.call("POST", "/v1/experiments", { ...body, app: MISSING_GUID })).toMatchObject(notFound("App not found"));
    expect(await emulator.call("POST", "/v1/experiments", { ...body, primary_action: MISSING_GUID })).toMatchObject(
      notFound("Action not found"),
    );
    expect(await emulator.call("POST", "/v1/experiments", { ...body, secondary_action: MISSING_GUID })).toMatchObject(
      notFound("Action not found"),
    );
    const echo = await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY);
    expect(await emulator.call("POST", "/v1/experiments", { ...body, secondary_action: echo })).toMatchObject(notFound("Action not found"));
    const elsewhere = await emulator.appGuid("Elsewhere", OTHER_KEY);
    expect(await emulator.call("POST", "/v1/experiments", { ...body, app: elsewhere })).toMatchObject(notFound("App not found"));
    for (const mixed of [{ primary_action: pitch }, { secondary_action: pitch }]) {
      expect(await emulator.call("POST", "/v1/experiments", { ...body, ...mixed })).toMatchObject({
        status: 400,
        body: { detail: "Both Actions must belong to the App" },
      });
    }
    expect((await emulator.call("GET", "/v1/experiments")).body.total_count).toBe(0);
  });

  it("refuses bodies missing a required field or with malformed GUIDs", async () => {
    const body = { name: "x", app: support, primary_action: summarize, secondary_action: classify };
    for (const field of ["name", "app", "primary_action", "secondary_action"] as const) {
      const { [field]: _dropped, ...rest } = body;
      const reply = await emulator.call("POST", "/v1/experiments", rest);
      expect(reply.status, field).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["body", field]);
    }
    expect((await emulator.call("POST", "/v1/experiments", { ...body, primary_action: "nope" })).status).toBe(400);
  });

  it("lists Experiments in the envelope with skip and limit", async () => {
    for (const name of ["One", "Two", "Three"]) await create(name);
    const all = await emulator.call("GET", "/v1/experiments");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total_count: 3, has_next_page: false });
    expect(all.body.data.map((experiment: { name: string }) => experiment.name)).toEqual(["One", "Two", "Three"]);
    expect(Object.keys(all.body.data[0]).sort()).toEqual(EXPERIMENT_KEYS);
    const page = await emulator.call("GET", "/v1/experiments/?skip=1&limit=1");
    expect(page.body).toMatchObject({ total_count: 3, has_next_page: true });
    expect(page.body.data.map((experiment: { name: string }) => experiment.name)).toEqual(["Two"]);
  });

  it("renames and reassigns Actions, keeping both in the App", async () => {
    const { body: experiment } = await create();
    const renamed = await emulator.call("PUT", `/v1/experiments/${experiment.guid}`, { name: "Renamed" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      name: "Renamed",
      primary_action: summarize,
      secondary_action: classify,
      last_updated_by_id: experiment.created_by_id,
    });
    const swapped = await emulator.call("PUT", `/v1/experiments/${experiment.guid}`, {
      primary_action: classify,
      secondary_action: summarize,
    });
    expect(swapped.body).toMatchObject({ name: "Renamed", primary_action: classify, secondary_action: summarize });
    expect((await emulator.call("GET", `/v1/experiments/${experiment.guid}`)).body).toEqual(swapped.body);

    expect(await emulator.call("PUT", `/v1/experiments/${experiment.guid}`, { secondary_action: pitch })).toMatchObject({
      status: 400,
      body: { detail: "Both Actions must belong to the App" },
    });
    expect(await emulator.call("PUT", `/v1/experiments/${experiment.guid}`, { primary_action: MISSING_GUID })).toMatchObject(
      notFound("Action not found"),
    );
    expect((await emulator.call("PUT", `/v1/experiments/${experiment.guid}`, {})).status).toBe(400);
    expect((await emulator.call("PUT", `/v1/experiments/${experiment.guid}`, { name: "" })).status).toBe(400);
    expect((await emulator.call("GET", `/v1/experiments/${experiment.guid}`)).body).toEqual(swapped.body);
  });

  it("soft deletes: a message, then 404 everywhere and gone from the list", async () => {
    const { body: experiment } = await create();
    const deleted = await emulator.call("DELETE", `/v1/experiments/${experiment.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Experiment ${experiment.guid} deleted` });
    for (const [method, path, body] of [
      ["GET", `/v1/experiments/${experiment.guid}`],
      ["PUT", `/v1/experiments/${experiment.guid}`, { name: "x" }],
      ["DELETE", `/v1/experiments/${experiment.guid}`],
    ] as const) {
      expect(await emulator.call(method, path, body), `${method} ${path}`).toMatchObject(notFound("Experiment not found"));
    }
    expect((await emulator.call("GET", "/v1/experiments")).body).toMatchObject({ data: [], total_count: 0 });
  });

  it("scopes Experiments to the workspace of the key and answers 400 for malformed GUIDs", async () => {
    const elsewhere = await emulator.appGuid("Elsewhere", OTHER_KEY);
    const echo = await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY);
    const { body: theirs } = await emulator.call(
      "POST",
      "/v1/experiments",
      { name: "Theirs", app: elsewhere, primary_action: echo, secondary_action: echo },
      { apiKey: OTHER_KEY },
    );
    for (const [method, path, body] of [
      ["GET", `/v1/experiments/${theirs.guid}`],
      ["PUT", `/v1/experiments/${theirs.guid}`, { name: "mine" }],
      ["DELETE", `/v1/experiments/${theirs.guid}`],
    ] as const) {
      expect(await emulator.call(method, path, body), `${method} ${path}`).toMatchObject(notFound("Experiment not found"));
    }
    expect((await emulator.call("GET", "/v1/experiments")).body.total_count).toBe(0);
    expect((await emulator.call("GET", `/v1/experiments/${theirs.guid}`, undefined, { apiKey: OTHER_KEY })).body.name).toBe("Theirs");
    for (const method of ["GET", "PUT", "DELETE"] as const) {
      const reply = await emulator.call(method, "/v1/experiments/nope", { name: "x" });
      expect(reply.status, method).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["path", "guid"]);
    }
    expect(await emulator.call("GET", `/v1/experiments/${MISSING_GUID}`)).toMatchObject(notFound("Experiment not found"));
  });

  it("answers 429 once the workspace Experiment allowance is used up", async () => {
    await emulator.close();
    emulator = createTestEmulator({
      ...TEST_FIXTURES,
      workspaces: TEST_FIXTURES.workspaces!.map((workspace) =>
        workspace.slug === "acme" ? { ...workspace, limits: { experiments: 1 } } : workspace,
      ),
    });
    support = await emulator.appGuid("Support");
    summarize = await emulator.actionGuid("Support", "Summarize");
    classify = await emulator.actionGuid("Support", "Classify");
    const { body: first } = await create("First");
    const refused = await create("Second");
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/Experiment limit reached/);
    await emulator.call("DELETE", `/v1/experiments/${first.guid}`);
    expect((await create("Fits again")).status).toBe(200);
  });
});
