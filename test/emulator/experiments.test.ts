import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readStream } from "./generation-stream";
import { MISSING_GUID, OTHER_KEY, TEST_FIXTURES, createTestEmulator, withApps } from "./harness";

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

  it("takes the official client's action_primary_guid and action_secondary_guid on update, agreeing with the create names", async () => {
    const { body: experiment } = await create();
    const url = `/v1/experiments/${experiment.guid}`;
    const swapped = await emulator.call("PUT", url, { action_primary_guid: classify, action_secondary_guid: summarize });
    expect(swapped.status).toBe(200);
    expect(swapped.body).toMatchObject({ primary_action: classify, secondary_action: summarize });
    expect((await emulator.call("PUT", url, { primary_action: summarize, action_primary_guid: summarize })).body).toMatchObject({
      primary_action: summarize,
      secondary_action: summarize,
    });
    for (const [body, field] of [
      [{ primary_action: classify, action_primary_guid: summarize }, "action_primary_guid"],
      [{ secondary_action: classify, action_secondary_guid: summarize }, "action_secondary_guid"],
      [{ action_primary_guid: "nope" }, "action_primary_guid"],
    ] as const) {
      const refused = await emulator.call("PUT", url, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.detail[0].loc).toEqual(["body", field]);
    }
    expect(await emulator.call("PUT", url, { action_secondary_guid: pitch })).toMatchObject({
      status: 400,
      body: { detail: "Both Actions must belong to the App" },
    });
    expect((await emulator.call("GET", url)).body).toMatchObject({ primary_action: summarize, secondary_action: summarize });
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

/** The shared fixtures plus Actions of Support with other variables and environments. */
const PROMPT_FIXTURES = withApps({
  Support: (app) => ({
    ...app,
    actions: [
      ...app.actions!,
      { name: "Greet", prompt: "Hello {{name}} from {{place}}", environments: ["Production", "Staging"] },
      { name: "Poem", prompt: "Write a poem" },
    ],
  }),
});

/** The Data GUID a feedback URL names. */
const dataOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);

describe("experiment prompt route", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let support: string;
  let summarize: string;
  let classify: string;
  let greet: string;
  let poem: string;
  const experimentOf = async (primary: string, secondary: string, apiKey?: string, app = support) => {
    const reply = await emulator.call(
      "POST",
      "/v1/experiments",
      { name: "A/B", app, primary_action: primary, secondary_action: secondary },
      { apiKey },
    );
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body.guid as string;
  };
  const prompt = (experiment: string, body: Record<string, unknown>) => emulator.call("POST", `/v1/experiments/${experiment}/prompt`, body);
  const metadataOf = async (reply: { body: { feedback_url: string } }) =>
    (await emulator.call("GET", `/v1/data/${dataOf(reply.body.feedback_url)}`)).body.metadata;
  const dataCount = async () => (await emulator.call("GET", "/v1/data")).body.total_count;
  beforeEach(async () => {
    emulator = createTestEmulator(PROMPT_FIXTURES);
    support = await emulator.appGuid("Support");
    summarize = await emulator.actionGuid("Support", "Summarize");
    classify = await emulator.actionGuid("Support", "Classify");
    greet = await emulator.actionGuid("Support", "Greet");
    poem = await emulator.actionGuid("Support", "Poem");
  });
  afterEach(() => emulator.close());

  it("alternates primary and secondary, starting with primary, and records each assignment in the Data record", async () => {
    const experiment = await experimentOf(summarize, classify);
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await prompt(experiment, { input: { text: `t${i}` } }));
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200]);
    expect(Object.keys(replies[0]!.body).sort()).toEqual(["action", "data_guid", "feedback_url", "msg", "streaming", "variant"]);
    expect(replies.map((reply) => reply.body.variant)).toEqual(["primary", "secondary", "primary", "secondary"]);
    expect(replies.map((reply) => reply.body.action)).toEqual([summarize, classify, summarize, classify]);
    expect(replies.map((reply) => reply.body.msg)).toEqual(["Summarize: t0", "Classify: t1", "Summarize: t2", "Classify: t3"]);
    expect(replies[1]!.body.streaming).toBe(false);
    expect(await metadataOf(replies[0]!)).toEqual({ environment: "Production", experiment, variant: "primary", forced: false });
    expect(await metadataOf(replies[1]!)).toEqual({ environment: "Production", experiment, variant: "secondary", forced: false });
    const data = await emulator.call("GET", `/v1/data/${dataOf(replies[1]!.body.feedback_url)}`);
    expect(data.body).toMatchObject({ input: { text: "t1" }, output: "Classify: t1", model: "gpt-4o" });
    expect(await dataCount()).toBe(4);

    // Each Experiment alternates on its own; the route takes a trailing slash.
    const second = await experimentOf(classify, summarize);
    const other = await emulator.call("POST", `/v1/experiments/${second}/prompt/`, { input: { text: "x" } });
    expect(other.body).toMatchObject({ variant: "primary", action: classify, msg: "Classify: x" });
    expect((await prompt(experiment, { input: { text: "x" } })).body.variant).toBe("primary");
  });

  it("forces the Action given as `force_action` (the official client's name) without moving the alternation; any other is 400", async () => {
    const experiment = await experimentOf(summarize, classify);
    expect((await prompt(experiment, { input: { text: "a" } })).body.variant).toBe("primary");
    const forced = await prompt(experiment, { input: { text: "b" }, force_action: summarize });
    expect(forced.body).toMatchObject({ variant: "primary", action: summarize, msg: "Summarize: b" });
    expect(await metadataOf(forced)).toEqual({ environment: "Production", experiment, variant: "primary", forced: true });
    expect((await prompt(experiment, { input: { text: "c" }, force_action: classify })).body.variant).toBe("secondary");
    expect((await prompt(experiment, { input: { text: "d" } })).body).toMatchObject({ variant: "secondary", action: classify });
    // `action` is not the forcing field (an unknown field, ignored): this prompt takes its turn, primary.
    const unforced = await prompt(experiment, { input: { text: "d2" }, action: classify });
    expect(unforced.body).toMatchObject({ variant: "primary", action: summarize });
    expect(await metadataOf(unforced)).toEqual({ environment: "Production", experiment, variant: "primary", forced: false });
    // A null force_action forces nothing: the alternation goes on.
    expect((await prompt(experiment, { input: { text: "d3" }, force_action: null })).body.variant).toBe("secondary");

    const pitch = await emulator.actionGuid("Sales", "Pitch");
    for (const action of [pitch, greet, MISSING_GUID]) {
      expect(await prompt(experiment, { input: { text: "e" }, force_action: action }), action).toMatchObject({
        status: 400,
        body: { detail: "Action is not one of the Experiment's Actions" },
      });
    }
    const malformed = await prompt(experiment, { input: { text: "e" }, force_action: "nope" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail[0].loc).toEqual(["body", "force_action"]);
    expect(await dataCount()).toBe(6);
  });

  it("demands every variable of both Actions when their variable sets differ, naming what is missing", async () => {
    const experiment = await experimentOf(greet, summarize);
    for (const [input, detail] of [
      [{ text: "t" }, "Missing input variables: name, place"],
      [{ name: "Ada", place: "Paris" }, "Missing input variable: text"],
      [{ name: "Ada", place: "Paris", text: "t", tone: "dry" }, "Unknown input variable: tone"],
      ["t", "Input must be an object with a value for each variable: name, place, text"],
    ] as const) {
      expect(await prompt(experiment, { input }), JSON.stringify(input)).toMatchObject({ status: 400, body: { detail } });
    }
    // Also when the Action forced or due needs fewer variables; refusals neither log nor move the alternation.
    expect((await prompt(experiment, { input: { text: "t" }, force_action: summarize })).status).toBe(400);
    expect(await dataCount()).toBe(0);
    const input = { name: "Ada", place: "Paris", text: "t" };
    expect((await prompt(experiment, { input })).body).toMatchObject({ variant: "primary", msg: "Hello Ada from Paris" });
    expect((await prompt(experiment, { input })).body).toMatchObject({ variant: "secondary", msg: "Summarize: t" });

    // An Action without variables serves its prompt as it is when the other one's variables are given; with one
    // variable between them, a string is that variable's value.
    const mixed = await experimentOf(poem, summarize);
    expect((await prompt(mixed, { input: { text: "t" } })).body).toMatchObject({ variant: "primary", msg: "Write a poem" });
    expect((await prompt(mixed, { input: "t" })).body).toMatchObject({ variant: "secondary", msg: "Summarize: t" });
    expect((await prompt(mixed, { input: { text: "u" }, force_action: summarize })).body.msg).toBe("Summarize: u");
    // Two Actions without variables take a string.
    const plain = await experimentOf(poem, poem);
    expect((await prompt(plain, { input: "about rain" })).body.msg).toBe("Write a poem\nabout rain");
  });

  it("streams and runs asynchronously like an Action run, the generation naming the Experiment and side", async () => {
    const experiment = await experimentOf(summarize, classify);
    const streamed = await prompt(experiment, { input: { text: "one two" }, streaming: true });
    expect(streamed.status).toBe(200);
    expect(Object.keys(streamed.body).sort()).toEqual([
      "action",
      "data_guid",
      "feedback_url",
      "msg",
      "streaming",
      "streaming_url",
      "variant",
    ]);
    expect(streamed.body).toMatchObject({ msg: "", streaming: true, variant: "primary", action: summarize });
    const tokens = await readStream(emulator.call, streamed.body.streaming_url);
    expect(tokens).toEqual(["Summarize: ", "one ", "two"]);

    const later = await prompt(experiment, { input: { text: "three" }, async_mode: true });
    expect(Object.keys(later.body).sort()).toEqual([
      "action",
      "data_guid",
      "feedback_url",
      "generation_guid",
      "msg",
      "result_url",
      "streaming",
      "variant",
    ]);
    expect(later.body).toMatchObject({ msg: "", streaming: false, variant: "secondary", action: classify });
    expect(later.body.result_url).toBe(`http://127.0.0.1/v1/generations/${later.body.generation_guid}`);
    expect((await emulator.call("GET", `/v1/generations/${later.body.generation_guid}`)).body).toEqual({
      guid: later.body.generation_guid,
      status: "SUCCESS",
      msg: "Classify: three",
      feedback_url: later.body.feedback_url,
      action: classify,
      experiment,
      variant: "secondary",
    });
    const both = await prompt(experiment, { input: { text: "x" }, streaming: true, async_mode: true });
    expect(both.status).toBe(400);
    expect(both.body.detail[0]).toMatchObject({ loc: ["body", "async_mode"], msg: "streaming and async_mode cannot both be true" });
  });

  it("answers 404 for a missing, deleted or foreign Experiment and 400 for a malformed GUID or body", async () => {
    expect(await prompt(MISSING_GUID, { input: { text: "t" } })).toMatchObject(notFound("Experiment not found"));
    const experiment = await experimentOf(summarize, classify);
    const elsewhere = await emulator.appGuid("Elsewhere", OTHER_KEY);
    const echo = await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY);
    const theirs = await experimentOf(echo, echo, OTHER_KEY, elsewhere);
    expect(await prompt(theirs, { input: { text: "t" } })).toMatchObject(notFound("Experiment not found"));
    await emulator.call("DELETE", `/v1/experiments/${experiment}`);
    expect(await prompt(experiment, { input: { text: "t" } })).toMatchObject(notFound("Experiment not found"));
    const malformed = await prompt("nope", { input: { text: "t" } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail[0].loc).toEqual(["path", "guid"]);
    const live = await experimentOf(summarize, classify);
    for (const [body, loc] of [
      [{}, ["body", "input"]],
      [{ input: 5 }, ["body", "input"]],
      [{ input: { text: "t" }, session: "nope" }, ["body", "session"]],
    ] as const) {
      const reply = await prompt(live, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(loc);
    }
    expect(await prompt(live, { input: { text: "t" }, session: MISSING_GUID })).toMatchObject(notFound("Session not found"));
    expect(await dataCount()).toBe(0);
  });

  it("counts an Action run naming the Experiment as a forced assignment; an Action outside it is 400", async () => {
    const experiment = await experimentOf(summarize, classify);
    const run = await emulator.call("POST", "/v1/actions", { action: classify, input: { text: "t" }, experiment, async_mode: true });
    expect(run.status).toBe(200);
    expect(await metadataOf(run)).toEqual({ environment: "Production", experiment, variant: "secondary", forced: true });
    expect((await emulator.call("GET", `/v1/generations/${run.body.generation_guid}`)).body).toMatchObject({
      experiment,
      variant: "secondary",
      action: classify,
    });
    const pitch = await emulator.actionGuid("Sales", "Pitch");
    expect(await emulator.call("POST", "/v1/actions", { action: pitch, input: { product: "p" }, experiment })).toMatchObject({
      status: 400,
      body: { detail: "Action is not one of the Experiment's Actions" },
    });
    // A run without an Experiment records no assignment.
    const plain = await emulator.call("POST", "/v1/actions", { action: classify, input: { text: "t" }, async_mode: true });
    expect((await emulator.call("GET", `/v1/generations/${plain.body.generation_guid}`)).body).toMatchObject({
      experiment: null,
      variant: null,
    });
    expect((await prompt(experiment, { input: { text: "t" } })).body.variant).toBe("primary");
  });

  it("checks an Action run naming the Experiment against the union of both Actions' variables, all of them required", async () => {
    const experiment = await experimentOf(greet, summarize);
    const actionRun = (action: string, input: unknown) => emulator.call("POST", "/v1/actions", { action, input, experiment });
    const union = { name: "Ada", place: "Paris", text: "t" };
    const summarized = await actionRun(summarize, union);
    expect(summarized).toMatchObject({ status: 200, body: { msg: "Summarize: t" } });
    expect(await metadataOf(summarized)).toEqual({ environment: "Production", experiment, variant: "secondary", forced: true });
    expect(await actionRun(greet, union)).toMatchObject({ status: 200, body: { msg: "Hello Ada from Paris" } });
    for (const [action, input, detail] of [
      [summarize, { text: "t" }, "Missing input variables: name, place"],
      [summarize, { name: "Ada", text: "t" }, "Missing input variable: place"],
      [greet, { name: "Ada", place: "Paris" }, "Missing input variable: text"],
      [greet, { ...union, tone: "dry" }, "Unknown input variable: tone"],
      [summarize, "t", "Input must be an object with a value for each variable: name, place, text"],
    ] as const) {
      expect(await actionRun(action, input), JSON.stringify(input)).toMatchObject({ status: 400, body: { detail } });
    }
    expect(await dataCount()).toBe(2);
    // Without the Experiment the Action's own variables are the whole input.
    expect(await emulator.call("POST", "/v1/actions", { action: summarize, input: union })).toMatchObject({
      status: 400,
      body: { detail: "Unknown input variables: name, place" },
    });
    // With one variable between both Actions, a string is its value.
    const mixed = await experimentOf(poem, summarize);
    const poemRun = await emulator.call("POST", "/v1/actions", { action: poem, input: "t", experiment: mixed });
    expect(poemRun).toMatchObject({ status: 200, body: { msg: "Write a poem" } });
    expect(await emulator.call("POST", "/v1/actions", { action: poem, input: {}, experiment: mixed })).toMatchObject({
      status: 400,
      body: { detail: "Missing input variable: text" },
    });
  });

  it("answers a cached generation with cache and records no assignment for it", async () => {
    const experiment = await experimentOf(summarize, classify);
    const first = await prompt(experiment, { input: { text: "t" }, cache: true });
    expect(first.body).toMatchObject({ variant: "primary", msg: "Summarize: t" });
    expect((await prompt(experiment, { input: { text: "t" }, cache: true })).body).toMatchObject({
      variant: "secondary",
      msg: "Classify: t",
    });
    expect(await dataCount()).toBe(2);
    // Primary's turn again: its cached generation answers, nothing is logged, so primary stays due.
    const hit = await prompt(experiment, { input: { text: "t" }, cache: true });
    expect(hit.body).toEqual(first.body);
    expect((await prompt(experiment, { input: { text: "t" }, cache: true })).body.feedback_url).toBe(first.body.feedback_url);
    expect(await dataCount()).toBe(2);
  });

  it("runs each side only in the environments its Action is deployed to", async () => {
    const experiment = await experimentOf(greet, summarize);
    const input = { name: "Ada", place: "Paris", text: "t" };
    const staged = await prompt(experiment, { input, environment: "Staging" });
    expect(staged.body).toMatchObject({ variant: "primary", msg: "Hello Ada from Paris" });
    expect(await metadataOf(staged)).toEqual({ environment: "Staging", experiment, variant: "primary", forced: false });
    expect(await prompt(experiment, { input, environment: "Staging" })).toMatchObject({
      status: 400,
      body: { detail: "Action is not deployed to Staging" },
    });
    expect((await prompt(experiment, { input })).body).toMatchObject({ variant: "secondary", msg: "Summarize: t" });
  });
});
