import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ACME_KEY, MISSING_GUID, OTHER_KEY, createTestEmulator } from "./harness";

describe("apps routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  beforeEach(() => {
    emulator = createTestEmulator();
  });
  afterEach(() => emulator.close());

  it("creates an App with a slug from its name and audit fields", async () => {
    const created = await emulator.call("POST", "/v1/apps", { name: "Customer Support!", description: "help desk" });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: "Customer Support!",
      description: "help desk",
      slug: "customer-support",
      last_updated_by_id: null,
    });
    expect(created.body.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    expect(created.body.created_by_id).toEqual(expect.any(String));

    const again = await emulator.call("POST", "/v1/apps", { name: "customer support" });
    expect(again.body.slug).toBe("customer-support-2");
    expect(again.body.description).toBeNull();
  });

  it("accepts collection routes with and without a trailing slash", async () => {
    expect((await emulator.call("POST", "/v1/apps/", { name: "Slash" })).status).toBe(200);
    const list = await emulator.call("GET", "/v1/apps/");
    expect(list.status).toBe(200);
    expect(list.body.data.map((app: { name: string }) => app.name)).toContain("Slash");
  });

  it("lists Apps in the envelope with skip and limit", async () => {
    const all = await emulator.call("GET", "/v1/apps");
    expect(all.body).toMatchObject({ total_count: 2, has_next_page: false });
    expect(all.body.data.map((app: { name: string }) => app.name)).toEqual(["Support", "Sales"]);

    const first = await emulator.call("GET", "/v1/apps?skip=0&limit=1");
    expect(first.body).toMatchObject({ total_count: 2, has_next_page: true });
    expect(first.body.data).toHaveLength(1);
    const second = await emulator.call("GET", "/v1/apps?skip=1&limit=1");
    expect(second.body).toMatchObject({ total_count: 2, has_next_page: false });
    expect(second.body.data[0].name).toBe("Sales");
  });

  it("rejects bad paging values with 400", async () => {
    expect((await emulator.call("GET", "/v1/apps?limit=-1")).status).toBe(400);
    expect((await emulator.call("GET", "/v1/apps?skip=abc")).status).toBe(400);
    // The relationship lists take skip and limit too (spec), so they check them the same way.
    const support = (await emulator.call("GET", "/v1/apps")).body.data[0].guid;
    for (const related of ["actions", "workflows", "data", "finetunes"]) {
      expect((await emulator.call("GET", `/v1/apps/${support}/${related}?skip=abc`)).status, related).toBe(400);
    }
  });

  it("updates name, description or both, and records who updated", async () => {
    const { body: app } = await emulator.call("POST", "/v1/apps", { name: "Before", description: "old" });
    const renamed = await emulator.call("PUT", `/v1/apps/${app.guid}`, { name: "After" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "After", description: "old", slug: "before" });
    expect(renamed.body.last_updated_by_id).toBe(app.created_by_id);
    const cleared = await emulator.call("PUT", `/v1/apps/${app.guid}`, { description: null });
    expect(cleared.body).toMatchObject({ name: "After", description: null });
    expect((await emulator.call("PUT", `/v1/apps/${app.guid}`, {})).status).toBe(400);
    expect((await emulator.call("GET", `/v1/apps/${app.guid}`)).body).toMatchObject({ name: "After", description: null });
  });

  it("soft deletes: returns the App, then 404 on every App route and gone from lists", async () => {
    const { body: app } = await emulator.call("POST", "/v1/apps", { name: "Doomed" });
    const deleted = await emulator.call("DELETE", `/v1/apps/${app.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ guid: app.guid, name: "Doomed" });

    for (const [method, path, body] of [
      ["GET", `/v1/apps/${app.guid}`],
      ["PUT", `/v1/apps/${app.guid}`, { name: "x" }],
      ["DELETE", `/v1/apps/${app.guid}`],
      ["GET", `/v1/apps/${app.guid}/actions`],
      ["GET", `/v1/apps/${app.guid}/workflows`],
      ["GET", `/v1/apps/${app.guid}/data`],
      ["GET", `/v1/apps/${app.guid}/finetunes`],
    ] as const) {
      const reply = await emulator.call(method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toEqual({ detail: "App not found" });
    }
    const list = await emulator.call("GET", "/v1/apps");
    expect(list.body.data.map((candidate: { guid: string }) => candidate.guid)).not.toContain(app.guid);
  });

  it("lists an App's Actions as summaries", async () => {
    const support = await emulator.appGuid("Support");
    const actions = await emulator.call("GET", `/v1/apps/${support}/actions`);
    expect(actions.status).toBe(200);
    expect(actions.body.map((action: { name: string }) => action.name)).toEqual(["Summarize", "Classify"]);
    expect(Object.keys(actions.body[0]).sort()).toEqual(
      ["action_type", "created_at", "created_by_id", "guid", "last_updated_by_id", "model", "name", "updated_at"].sort(),
    );
    expect(actions.body[0]).toMatchObject({ model: "gpt-4o-mini", action_type: "prompt" });
    expect((await emulator.call("GET", `/v1/apps/${support}/actions?limit=1&skip=1`)).body.map((a: { name: string }) => a.name)).toEqual([
      "Classify",
    ]);
    expect((await emulator.call("GET", `/v1/apps/${support}/finetunes`)).body).toEqual([]);
  });

  it("lists an App's fine-tunes as a bare array with skip and limit, only that App's", async () => {
    const support = await emulator.appGuid("Support");
    const sales = await emulator.appGuid("Sales");
    const summarize = await emulator.actionGuid("Support", "Summarize");
    const dataIds: number[] = [];
    for (let i = 0; i < 10; i++) {
      const { body: data } = await emulator.call("POST", "/v1/data", { action: summarize, input: `in ${i}`, output: `out ${i}` });
      dataIds.push((await emulator.call("GET", `/_emulator/data/${data.guid}`)).body.id);
    }
    const { body: connection } = await emulator.call("POST", "/v1/providers", { provider: "openai", key: "sk-apps-test" });
    const connectionId = (await emulator.call("GET", `/_emulator/providers/${connection.guid}`)).body.id;
    const fineTune = async (name: string, app: string) =>
      (
        await emulator.call("POST", "/v1/finetune", {
          name,
          app,
          dataset: null,
          data_ids: dataIds,
          base_model: "gpt-4o-mini",
          workspaceModelProviderId: connectionId,
        })
      ).body;
    const first = await fineTune("first", support);
    await fineTune("elsewhere", sales);
    const second = await fineTune("second", support);

    const listed = await emulator.call("GET", `/v1/apps/${support}/finetunes`);
    expect(listed.status).toBe(200);
    expect(listed.body.map((item: { guid: string }) => item.guid)).toEqual([first.guid, second.guid]);
    expect(listed.body[0]).toEqual((await emulator.call("GET", `/v1/finetune/${first.guid}`)).body);
    expect(
      (await emulator.call("GET", `/v1/apps/${support}/finetunes?skip=1&limit=1`)).body.map((item: { name: string }) => item.name),
    ).toEqual(["second"]);
    expect((await emulator.call("GET", `/v1/apps/${support}/finetunes?limit=1`)).body.map((item: { name: string }) => item.name)).toEqual([
      "first",
    ]);
  });

  it("answers 429 once the workspace App allowance is used up", async () => {
    // Acme allows 5 Apps and has 2 from fixtures.
    for (let i = 0; i < 3; i++) expect((await emulator.call("POST", "/v1/apps", { name: `App ${i}` })).status).toBe(200);
    const refused = await emulator.call("POST", "/v1/apps", { name: "One too many" });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/App limit reached/);
    // Deleting one frees a place.
    const { body: list } = await emulator.call("GET", "/v1/apps");
    await emulator.call("DELETE", `/v1/apps/${list.data[0].guid}`);
    expect((await emulator.call("POST", "/v1/apps", { name: "Fits again" })).status).toBe(200);
  });

  it("scopes Apps to the workspace of the key", async () => {
    const elsewhere = await emulator.appGuid("Elsewhere", OTHER_KEY);
    expect((await emulator.call("GET", `/v1/apps/${elsewhere}`)).status).toBe(404);
    expect((await emulator.call("GET", `/v1/apps/${elsewhere}`, undefined, { apiKey: OTHER_KEY })).status).toBe(200);
    expect((await emulator.call("DELETE", `/v1/apps/${elsewhere}`, undefined, { apiKey: ACME_KEY })).status).toBe(404);
  });

  it("answers 400 for malformed UUIDs and bodies, 404 for unknown GUIDs", async () => {
    const malformed = await emulator.call("GET", "/v1/apps/not-a-uuid");
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail[0]).toMatchObject({ loc: ["path", "guid"] });
    expect((await emulator.call("GET", `/v1/apps/${MISSING_GUID}`)).status).toBe(404);
    const missingName = await emulator.call("POST", "/v1/apps", { description: "no name" });
    expect(missingName.status).toBe(400);
    expect(missingName.body.detail).toEqual([{ loc: ["body", "name"], msg: "Field required", type: "missing" }]);
    const wrongType = await emulator.call("POST", "/v1/apps", { name: 42 });
    expect(wrongType.body.detail).toEqual([
      { loc: ["body", "name"], msg: "Invalid input: expected string, received number", type: "invalid_type" },
    ]);
    expect((await emulator.call("POST", "/v1/apps", { name: 42 })).status).toBe(400);
    const broken = await emulator.call("POST", "/v1/apps", "{not json", { headers: { "content-type": "application/json" } });
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({
      detail: "Malformed JSON body at line 1, column 2 (offset 1): expected a property name in double quotes or '}', found a letter",
    });
  });
});
