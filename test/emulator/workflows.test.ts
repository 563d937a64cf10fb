import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FixturesError } from "../../src/emulator/fixtures";
import { type Fixtures, Store, loadFixtures } from "../../src/emulator";
import { MISSING_GUID, OTHER_KEY, createTestEmulator, withApps } from "./harness";

const notFound = (detail: string) => ({ status: 404, body: { detail } });

const SUMMARIZE_BLOCK = "11111111-1111-4111-8111-111111111111";
const CLASSIFY_BLOCK = "22222222-2222-4222-8222-222222222222";

/** The shared fixtures plus Workflows: Support has "Pipeline" (two blocks) and "Empty"; Elsewhere has "Theirs". */
function withWorkflows(limits?: { workflows: number }): Fixtures {
  const fixtures = withApps({
    Support: (app) => ({
      ...app,
      workflows: [
        {
          name: "Pipeline",
          blocks: [
            { guid: SUMMARIZE_BLOCK, name: "Summarize step", action: "Summarize" },
            { guid: CLASSIFY_BLOCK, name: "Classify step", action: "Classify" },
          ],
        },
        { name: "Empty" },
      ],
    }),
    Elsewhere: (app) => ({ ...app, workflows: [{ name: "Theirs", blocks: [{ name: "Echo step", action: "Echo" }] }] }),
  });
  if (!limits) return fixtures;
  return {
    ...fixtures,
    workspaces: fixtures.workspaces!.map((workspace) =>
      workspace.slug === "acme" ? { ...workspace, limits: { ...workspace.limits, ...limits } } : workspace,
    ),
  };
}

const WORKFLOW_KEYS = ["app", "created_at", "created_by_id", "guid", "last_updated_by_id", "name", "slug", "updated_at"];

describe("workflows routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let support: string;
  const workflowGuid = async (name: string, appName = "Support", apiKey?: string): Promise<string> => {
    const list = await emulator.call("GET", `/v1/apps/${await emulator.appGuid(appName, apiKey)}/workflows`, undefined, { apiKey });
    return list.body.find((workflow: { name: string }) => workflow.name === name).guid;
  };
  beforeEach(async () => {
    emulator = createTestEmulator(withWorkflows());
    support = await emulator.appGuid("Support");
  });
  afterEach(() => emulator.close());

  it("creates a Workflow record with a slug, its App and audit fields, and no blocks", async () => {
    const created = await emulator.call("POST", "/v1/workflows", { name: "Triage Flow!", app: support });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(WORKFLOW_KEYS);
    expect(created.body).toMatchObject({ name: "Triage Flow!", slug: "triage-flow", app: support, last_updated_by_id: null });
    expect(created.body.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    expect(created.body.created_by_id).toEqual(expect.any(String));
    expect((await emulator.call("GET", `/v1/workflows/${created.body.guid}`)).body).toEqual(created.body);

    const trigger = await emulator.call("POST", `/v1/workflows/${created.body.guid}/trigger`, {});
    expect(trigger.status).toBe(404);
    expect(trigger.body).toEqual({ detail: "Workflow has no blocks" });
    expect((await emulator.call("POST", "/v1/workflows/", { name: "Slash", app: support })).status).toBe(200);
  });

  it("refuses a create without name or App, with a malformed App, or with an App it cannot see", async () => {
    const noName = await emulator.call("POST", "/v1/workflows", { app: support });
    expect(noName.status).toBe(400);
    expect(noName.body.detail[0].loc).toEqual(["body", "name"]);
    const noApp = await emulator.call("POST", "/v1/workflows", { name: "x" });
    expect(noApp.status).toBe(400);
    expect(noApp.body.detail[0].loc).toEqual(["body", "app"]);
    expect((await emulator.call("POST", "/v1/workflows", { name: "x", app: "not-a-uuid" })).status).toBe(400);
    expect(await emulator.call("POST", "/v1/workflows", { name: "x", app: MISSING_GUID })).toMatchObject(notFound("App not found"));
    const elsewhere = await emulator.appGuid("Elsewhere", OTHER_KEY);
    expect(await emulator.call("POST", "/v1/workflows", { name: "x", app: elsewhere })).toMatchObject(notFound("App not found"));
  });

  it("renames a Workflow and keeps its slug", async () => {
    const { body: workflow } = await emulator.call("POST", "/v1/workflows", { name: "Before", app: support });
    const renamed = await emulator.call("PUT", `/v1/workflows/${workflow.guid}`, { name: "After" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ guid: workflow.guid, name: "After", slug: "before", last_updated_by_id: workflow.created_by_id });
    expect((await emulator.call("GET", `/v1/workflows/${workflow.guid}`)).body.name).toBe("After");
    expect((await emulator.call("PUT", `/v1/workflows/${workflow.guid}`, {})).status).toBe(400);
    expect((await emulator.call("PUT", `/v1/workflows/${workflow.guid}`, { name: "" })).status).toBe(400);
  });

  it("lists an App's Workflows as a bare array with skip and limit", async () => {
    await emulator.call("POST", "/v1/workflows", { name: "Third", app: support });
    const all = await emulator.call("GET", `/v1/apps/${support}/workflows`);
    expect(all.status).toBe(200);
    expect(all.body.map((workflow: { name: string }) => workflow.name)).toEqual(["Pipeline", "Empty", "Third"]);
    expect(Object.keys(all.body[0]).sort()).toEqual(WORKFLOW_KEYS);
    const page = await emulator.call("GET", `/v1/apps/${support}/workflows?skip=1&limit=1`);
    expect(page.body.map((workflow: { name: string }) => workflow.name)).toEqual(["Empty"]);
    expect((await emulator.call("GET", `/v1/apps/${await emulator.appGuid("Sales")}/workflows`)).body).toEqual([]);
    expect(await emulator.call("GET", `/v1/apps/${MISSING_GUID}/workflows`)).toMatchObject(notFound("App not found"));
    expect((await emulator.call("GET", "/v1/apps/nope/workflows")).status).toBe(400);
  });

  it("soft deletes: a message, then 404 everywhere and gone from the App's list", async () => {
    const pipeline = await workflowGuid("Pipeline");
    const { body: run } = await emulator.call("POST", `/v1/workflows/${pipeline}/trigger`, {});
    const deleted = await emulator.call("DELETE", `/v1/workflows/${pipeline}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Workflow ${pipeline} deleted` });
    for (const [method, path, body] of [
      ["GET", `/v1/workflows/${pipeline}`],
      ["PUT", `/v1/workflows/${pipeline}`, { name: "x" }],
      ["DELETE", `/v1/workflows/${pipeline}`],
      ["POST", `/v1/workflows/${pipeline}/trigger`, {}],
      ["POST", "/v1/workflows/playground", { workflow: pipeline }],
      ["GET", `/v1/workflows/${pipeline}/result/${run.run_guid}`],
      ["GET", `/v1/workflows/${pipeline}/result/${run.run_guid}/dataset`],
    ] as const) {
      const reply = await emulator.call(method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toEqual({ detail: "Workflow not found" });
    }
    const list = await emulator.call("GET", `/v1/apps/${support}/workflows`);
    expect(list.body.map((workflow: { name: string }) => workflow.name)).toEqual(["Empty"]);
  });

  it("triggers a run: one Data record per block in order, absolute result and feedback URLs on the emulator's origin", async () => {
    const pipeline = await workflowGuid("Pipeline");
    const input = [{ text: "hello", extra: null, nested: { a: 1 } }];
    // The Host header does not choose the URLs' origin (in-process, the emulator listens nowhere: 127.0.0.1).
    const triggered = await emulator.call(
      "POST",
      `/v1/workflows/${pipeline}/trigger`,
      { input },
      { headers: { host: "evil.example:8080" } },
    );
    expect(triggered.status).toBe(200);
    const { run_guid: runGuid, blocks } = triggered.body;
    expect(runGuid).toMatch(/^[0-9a-f-]{36}$/);
    const resultUrl = `http://127.0.0.1/v1/workflows/${pipeline}/result/${runGuid}`;
    expect(triggered.body).toEqual({
      msg: "Workflow triggered",
      status: "success",
      blocks: [
        {
          feedback_url: `http://127.0.0.1/v1/feedback/${blocks[0].data_guid}`,
          data_guid: expect.stringMatching(/^[0-9a-f-]{36}$/),
          result_url: resultUrl,
          action: { guid: await emulator.actionGuid("Support", "Summarize"), name: "Summarize" },
        },
        {
          feedback_url: `http://127.0.0.1/v1/feedback/${blocks[1].data_guid}`,
          data_guid: expect.stringMatching(/^[0-9a-f-]{36}$/),
          result_url: resultUrl,
          action: { guid: await emulator.actionGuid("Support", "Classify"), name: "Classify" },
        },
      ],
      run_guid: runGuid,
      has_output_block: true,
    });
    expect(blocks[0].data_guid).not.toBe(blocks[1].data_guid);

    // The generated Data records carry the input and the emulated output (prompt with placeholders filled).
    const first = await emulator.call("GET", `/v1/data/${blocks[0].data_guid}`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ input, output: "Summarize: hello", model: "gpt-4o-mini" });
    expect((await emulator.call("GET", `/v1/data/${blocks[1].data_guid}`)).body).toMatchObject({
      output: "Classify: hello",
      model: "gpt-4o",
    });
    const appData = await emulator.call("GET", `/v1/apps/${support}/data`);
    expect(appData.body.data.map((data: { guid: string }) => data.guid).sort()).toEqual([blocks[0].data_guid, blocks[1].data_guid].sort());

    const result = await emulator.call("GET", `/v1/workflows/${pipeline}/result/${runGuid}`);
    expect(result).toMatchObject({ status: 200, body: { result: "Classify: hello" } });
    const dataset = await emulator.call("GET", `/v1/workflows/${pipeline}/result/${runGuid}/dataset`);
    expect(dataset.status).toBe(200);
    expect(dataset.body).toEqual({
      final: "",
      blocks: [
        { guid: SUMMARIZE_BLOCK, name: "Summarize step", output: "Summarize: hello" },
        { guid: CLASSIFY_BLOCK, name: "Classify step", output: "Classify: hello" },
      ],
    });
  });

  it("fills placeholders from the first input object only: nested objects as JSON, null as empty, unknown names kept", async () => {
    const pipeline = await workflowGuid("Pipeline");
    const result = async (body: unknown) => {
      const { body: run } = await emulator.call("POST", `/v1/workflows/${pipeline}/trigger`, body);
      const reply = await emulator.call("GET", `/v1/workflows/${pipeline}/result/${run.run_guid}`);
      return reply.body.result;
    };
    expect(await result({ input: [{ text: { a: "b" } }, { text: "second" }] })).toBe('Classify: {"a":"b"}');
    expect(await result({ input: [{ text: null }] })).toBe("Classify: ");
    expect(await result({ input: [{ other: "x" }] })).toBe("Classify: {{text}}");
    expect(await result({})).toBe("Classify: {{text}}");
    expect(await result(undefined)).toBe("Classify: {{text}}");
    expect(await result({ input: null })).toBe("Classify: {{text}}");
    expect(await result({ input: [] })).toBe("Classify: {{text}}");
  });

  it("refuses trigger input that is not an array of objects of strings, nested objects or null", async () => {
    const pipeline = await workflowGuid("Pipeline");
    for (const input of [[{ text: 1 }], [{ text: true }], [{ text: ["a"] }], ["text"], [["a"]], { text: "a" }, "text"]) {
      const reply = await emulator.call("POST", `/v1/workflows/${pipeline}/trigger`, { input });
      expect(reply.status, JSON.stringify(input)).toBe(400);
      expect(reply.body.detail[0].loc[0]).toBe("body");
    }
    const accepted = await emulator.call("POST", `/v1/workflows/${pipeline}/trigger`, {
      input: [{ text: "a", deep: { n: 1 }, none: null }],
    });
    expect(accepted.status).toBe(200);
  });

  it("does not count deleted blocks: runs only the rest, and none left is 404 `Workflow has no blocks`", async () => {
    const pipeline = await workflowGuid("Pipeline");
    // No public route deletes a block, so the test marks the rows as the service's soft delete would.
    const deleteBlock = (guid: string) =>
      emulator.store.db.run("UPDATE workflow_blocks SET deleted_at = ? WHERE guid = ?", new Date().toISOString(), guid);
    deleteBlock(SUMMARIZE_BLOCK);
    const { body: run } = await emulator.call("POST", `/v1/workflows/${pipeline}/trigger`, { input: [{ text: "hi" }] });
    expect(run.blocks.map((block: { action: { name: string } }) => block.action.name)).toEqual(["Classify"]);
    const dataset = await emulator.call("GET", `/v1/workflows/${pipeline}/result/${run.run_guid}/dataset`);
    expect(dataset.body.blocks.map((block: { guid: string }) => block.guid)).toEqual([CLASSIFY_BLOCK]);

    deleteBlock(CLASSIFY_BLOCK);
    const empty = await emulator.call("POST", `/v1/workflows/${pipeline}/trigger`, {});
    expect(empty.status).toBe(404);
    expect(empty.body).toEqual({ detail: "Workflow has no blocks" });
    expect(await emulator.call("POST", `/v1/workflows/${await workflowGuid("Empty")}/trigger`)).toMatchObject(
      notFound("Workflow has no blocks"),
    );
  });

  it("answers 404 for a missing Workflow or run and 400 for malformed GUIDs", async () => {
    const pipeline = await workflowGuid("Pipeline");
    const { body: run } = await emulator.call("POST", `/v1/workflows/${pipeline}/trigger`, {});
    expect(await emulator.call("GET", `/v1/workflows/${MISSING_GUID}`)).toMatchObject(notFound("Workflow not found"));
    expect(await emulator.call("POST", `/v1/workflows/${MISSING_GUID}/trigger`, {})).toMatchObject(notFound("Workflow not found"));
    for (const suffix of ["", "/dataset"]) {
      expect(await emulator.call("GET", `/v1/workflows/${pipeline}/result/${MISSING_GUID}${suffix}`)).toMatchObject(
        notFound("Run not found"),
      );
      expect(await emulator.call("GET", `/v1/workflows/${MISSING_GUID}/result/${run.run_guid}${suffix}`)).toMatchObject(
        notFound("Workflow not found"),
      );
      // A run belongs to its own Workflow only.
      const { body: other } = await emulator.call("POST", "/v1/workflows", { name: "Other flow", app: support });
      expect(await emulator.call("GET", `/v1/workflows/${other.guid}/result/${run.run_guid}${suffix}`)).toMatchObject(
        notFound("Run not found"),
      );
      const malformed = await emulator.call("GET", `/v1/workflows/${pipeline}/result/not-a-run${suffix}`);
      expect(malformed.status).toBe(400);
      expect(malformed.body.detail[0].loc).toEqual(["path", "runGuid"]);
    }
    for (const [method, path] of [
      ["GET", "/v1/workflows/nope"],
      ["PUT", "/v1/workflows/nope"],
      ["DELETE", "/v1/workflows/nope"],
      ["POST", "/v1/workflows/nope/trigger"],
    ] as const) {
      const reply = await emulator.call(method, path, { name: "x" });
      expect(reply.status, `${method} ${path}`).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["path", "guid"]);
    }
  });

  it("scopes Workflows and their runs to the workspace of the key", async () => {
    const theirs = await workflowGuid("Theirs", "Elsewhere", OTHER_KEY);
    const { body: run } = await emulator.call("POST", `/v1/workflows/${theirs}/trigger`, { input: [{ text: "x" }] }, { apiKey: OTHER_KEY });
    expect(run.msg).toBe("Workflow triggered");
    for (const [method, path, body] of [
      ["GET", `/v1/workflows/${theirs}`],
      ["PUT", `/v1/workflows/${theirs}`, { name: "mine" }],
      ["DELETE", `/v1/workflows/${theirs}`],
      ["POST", `/v1/workflows/${theirs}/trigger`, {}],
      ["POST", "/v1/workflows/playground", { workflow: theirs }],
      ["GET", `/v1/workflows/${theirs}/result/${run.run_guid}`],
      ["GET", `/v1/workflows/${theirs}/result/${run.run_guid}/dataset`],
    ] as const) {
      expect(await emulator.call(method, path, body), `${method} ${path}`).toMatchObject(notFound("Workflow not found"));
    }
    const result = await emulator.call("GET", `/v1/workflows/${theirs}/result/${run.run_guid}`, undefined, { apiKey: OTHER_KEY });
    expect(result.body).toEqual({ result: "x" });
  });

  it("runs the playground with the stored blocks or with temporary ones, answering the trigger's shape", async () => {
    const pipeline = await workflowGuid("Pipeline");
    const stored = await emulator.call("POST", "/v1/workflows/playground", { workflow: pipeline, input: [{ text: "p" }] });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ msg: "Workflow triggered", status: "success", has_output_block: true });
    expect(stored.body.blocks.map((block: { action: { name: string } }) => block.action.name)).toEqual(["Summarize", "Classify"]);
    expect(Object.keys(stored.body.blocks[0]).sort()).toEqual(["action", "data_guid", "feedback_url", "result_url"]);
    expect(stored.body.blocks[0].result_url).toBe(`http://127.0.0.1/v1/workflows/${pipeline}/result/${stored.body.run_guid}`);
    expect((await emulator.call("GET", `/v1/workflows/${pipeline}/result/${stored.body.run_guid}`)).body).toEqual({
      result: "Classify: p",
    });

    // Temporary blocks replace the stored ones, may name any Action of the workspace, and are not kept.
    const empty = await workflowGuid("Empty");
    const pitch = await emulator.actionGuid("Sales", "Pitch");
    const temporary = await emulator.call("POST", "/v1/workflows/playground", {
      workflow: empty,
      input: [{ product: "widgets" }],
      blocks: [{ name: "Pitch it", action: pitch }],
    });
    expect(temporary.status).toBe(200);
    expect(temporary.body.blocks).toHaveLength(1);
    expect(temporary.body.blocks[0].action).toEqual({ guid: pitch, name: "Pitch" });
    const dataset = await emulator.call("GET", `/v1/workflows/${empty}/result/${temporary.body.run_guid}/dataset`);
    expect(dataset.body).toEqual({
      final: "",
      blocks: [{ guid: expect.stringMatching(/^[0-9a-f-]{36}$/), name: "Pitch it", output: "Pitch widgets" }],
    });
    expect((await emulator.call("GET", `/v1/data/${temporary.body.blocks[0].data_guid}`)).body.output).toBe("Pitch widgets");
    expect(await emulator.call("POST", `/v1/workflows/${empty}/trigger`, {})).toMatchObject(notFound("Workflow has no blocks"));
  });

  it("refuses playground runs without blocks, with unknown Actions, or with bad bodies", async () => {
    const pipeline = await workflowGuid("Pipeline");
    const empty = await workflowGuid("Empty");
    expect(await emulator.call("POST", "/v1/workflows/playground", { workflow: empty })).toMatchObject(notFound("Workflow has no blocks"));
    expect(await emulator.call("POST", "/v1/workflows/playground", { workflow: pipeline, blocks: [] })).toMatchObject(
      notFound("Workflow has no blocks"),
    );
    const echo = await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY);
    for (const action of [MISSING_GUID, echo]) {
      expect(
        await emulator.call("POST", "/v1/workflows/playground", { workflow: pipeline, blocks: [{ name: "b", action }] }),
      ).toMatchObject(notFound("Action not found"));
    }
    expect(await emulator.call("POST", "/v1/workflows/playground", { workflow: MISSING_GUID })).toMatchObject(
      notFound("Workflow not found"),
    );
    for (const body of [
      {},
      { workflow: "nope" },
      { workflow: pipeline, input: [{ text: 1 }] },
      { workflow: pipeline, blocks: [{ name: "b" }] },
      { workflow: pipeline, blocks: [{ name: "b", action: "nope" }] },
    ]) {
      const reply = await emulator.call("POST", "/v1/workflows/playground", body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("answers 429 once the workspace Workflow allowance is used up (fixture Workflows count)", async () => {
    await emulator.close();
    emulator = createTestEmulator(withWorkflows({ workflows: 3 }));
    support = await emulator.appGuid("Support");
    expect((await emulator.call("POST", "/v1/workflows", { name: "Third", app: support })).status).toBe(200);
    const refused = await emulator.call("POST", "/v1/workflows", { name: "Fourth", app: support });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/Workflow limit reached/);
    await emulator.call("DELETE", `/v1/workflows/${await workflowGuid("Empty")}`);
    expect((await emulator.call("POST", "/v1/workflows", { name: "Fits again", app: support })).status).toBe(200);
  });
});

describe("workflow fixtures", () => {
  it("refuses a block naming an Action its App does not have, naming the Action", () => {
    const store = new Store();
    const fixtures: Fixtures = {
      workspaces: [
        {
          name: "Bad",
          slug: "bad",
          apiKey: "gms_test_bad_key",
          apps: [
            {
              name: "A",
              actions: [{ name: "Known", prompt: "p" }],
              workflows: [{ name: "W", blocks: [{ name: "b", action: "Missing" }] }],
            },
          ],
        },
      ],
    };
    try {
      expect(() => loadFixtures(store, fixtures)).toThrow(FixturesError);
      expect(() => loadFixtures(store, fixtures)).toThrow(
        /workspaces\[0\]\.apps\[0\]\.workflows\[0\]\.blocks\[0\]\.action: unknown Action "Missing"/,
      );
      expect(store.workspaces.authenticate("gms_test_bad_key")).toBeUndefined();
    } finally {
      store.close();
    }
  });

  it("loads Workflows with blocks in order and is idempotent on reload", () => {
    const store = new Store();
    try {
      loadFixtures(store, withWorkflows());
      loadFixtures(store, withWorkflows());
      const caller = store.workspaces.authenticate("gms_test_acme_key")!;
      const apps = store.apps.list(caller, { skip: 0, limit: 10 }).items;
      const support = apps.find((app) => app.name === "Support")!;
      expect(store.workflows.listByApp(caller, support.guid, { skip: 0, limit: 10 }).map((workflow) => workflow.name)).toEqual([
        "Pipeline",
        "Empty",
      ]);
    } finally {
      store.close();
    }
  });
});
