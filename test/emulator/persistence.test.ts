/**
 * A restart on the same database file loses nothing: one record of every kind is created over real HTTP,
 * the emulator is stopped and started again on the file with the same fixtures, and every read answers
 * exactly what it answered before.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { ACME_KEY, OTHER_KEY, withApps } from "./harness";

const PROVIDER_KEY = "sk-persisted-provider-secret-7f3a";
const MODEL_KEY = "sk-persisted-model-secret-91c2";
const FILE_TEXT = "Refunds are paid within five days.\n\nShipping is free above fifty euros.";

/** The shared fixtures plus a Workflow with blocks (the public interface only creates Workflows without any). */
const FIXTURES = withApps({
  Support: (app) => ({
    ...app,
    workflows: [
      {
        name: "Pipeline",
        blocks: [
          { name: "Summarize step", action: "Summarize" },
          { name: "Classify step", action: "Classify" },
        ],
      },
    ],
  }),
});

interface Answer {
  status: number;
  body: any;
  text: string;
}

/**
 * The connections of one emulator run: a fresh pool per run, so that no request after the restart goes
 * out on a kept-alive socket the stopped server closed.
 */
let connections = new Agent();

/** One request over the socket; the body is parsed when it is JSON. */
async function request(base: string, method: string, path: string, body?: unknown, apiKey: string | null = ACME_KEY): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (apiKey !== null) headers.authorization = `Bearer ${apiKey}`;
  const init = { method, headers, dispatcher: connections, ...(body === undefined ? {} : { body: JSON.stringify(body) }) };
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a served file: keep the text
  }
  return { status: response.status, body: parsed, text };
}

/** Every public read of the workspace, by caller and path, with what it answered. */
type Snapshot = Record<string, { status: number; body: any }>;

async function snapshot(base: string, reads: [apiKey: string, path: string][]): Promise<Snapshot> {
  const result: Snapshot = {};
  for (const [apiKey, path] of reads) {
    const { status, body } = await request(base, "GET", path, undefined, apiKey);
    result[`${apiKey === ACME_KEY ? "acme" : "other"} ${path}`] = { status, body };
  }
  return result;
}

describe("persistence across a restart on the same database file", () => {
  const dir = mkdtempSync(join(tmpdir(), "gms-persistence-"));
  const db = join(dir, "emulator.db");
  let emulator: RunningEmulator;
  let base: string;
  const call = (method: string, path: string, body?: unknown, apiKey?: string | null) => request(base, method, path, body, apiKey);
  /** Answers `path` with 200 and returns the body, so that a failed setup step names itself. */
  const ok = async (method: string, path: string, body?: unknown): Promise<any> => {
    const answer = await call(method, path, body);
    expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(200);
    return answer.body;
  };

  // What the first run created, and what it answered.
  const ids: Record<string, string> = {};
  let fileUrl: string;
  let reads: [string, string][];
  let before: Snapshot;
  let after: Snapshot;
  let fileBefore: Answer;

  beforeAll(async () => {
    emulator = await startEmulator({ db, fixtures: FIXTURES, port: 0 });
    base = emulator.url.replace(/\/v1$/, "");
    const port = Number(new URL(base).port);

    const apps = await ok("GET", "/v1/apps");
    ids.support = apps.data.find((app: { name: string }) => app.name === "Support").guid;
    const actions = await ok("GET", `/v1/apps/${ids.support}/actions`);
    const action = (name: string) => actions.find((candidate: { name: string }) => candidate.name === name).guid;
    ids.summarize = action("Summarize");
    ids.classify = action("Classify");
    ids.workspace = (await ok("GET", "/v1/workspaces/current")).guid;
    const contexts = await ok("GET", `/v1/workspaces/${ids.workspace}/context`);
    ids.handbook = contexts.find((context: { name: string }) => context.name === "Handbook").guid;
    ids.faq = contexts.find((context: { name: string }) => context.name === "FAQ").guid;
    ids.exactMatch = (await ok("GET", "/v1/evals/types")).find((type: { name: string }) => type.name === "Exact match").guid;

    // Apps: one updated (so last_updated_by_id is set), one soft-deleted.
    ids.app = (await ok("POST", "/v1/apps", { name: "Persisted", description: "first" })).guid;
    await ok("PUT", `/v1/apps/${ids.app}`, { description: "kept across restarts" });
    ids.deletedApp = (await ok("POST", "/v1/apps", { name: "Doomed" })).guid;
    await ok("DELETE", `/v1/apps/${ids.deletedApp}`);

    ids.data = (
      await ok("POST", "/v1/data", {
        action: ids.summarize,
        app: ids.support,
        input: { text: "hello" },
        output: "hi",
        model: "gpt-4o-mini",
        model_provider: "openai",
        num_input_tokens: 12,
        num_output_tokens: 3,
        latency: 0.42,
        metadata: { source: "persistence test" },
      })
    ).guid;

    // Workflows: the fixture one triggered (its run and Data records), one created through the API.
    ids.pipeline = (await ok("GET", `/v1/apps/${ids.support}/workflows`)).find(
      (workflow: { name: string }) => workflow.name === "Pipeline",
    ).guid;
    const run = await ok("POST", `/v1/workflows/${ids.pipeline}/trigger`, { input: [{ text: "persist me" }] });
    ids.run = run.run_guid;
    ids.runData = run.blocks[0].data_guid;
    ids.workflow = (await ok("POST", "/v1/workflows", { name: "Created flow", app: ids.support })).guid;

    ids.provider = (await ok("POST", "/v1/providers", { provider: "openai", key: PROVIDER_KEY, name: "Primary", model: "gpt-4o" })).guid;
    ids.model = (await ok("POST", "/v1/models", { llm: "claude-3-5-sonnet", provider: "anthropic", key: MODEL_KEY })).guid;

    // A Skill is created from the name of an existing one (the fixture's), then renamed.
    ids.skill = (
      await ok("POST", "/v1/skills", { name: "web-search", type: "web", metadata: [{ name: "region", required: false, value: "eu" }] })
    ).guid;
    await ok("PUT", `/v1/skills/${ids.skill}`, { name: "web-search-eu" });

    ids.dataset = (
      await ok("POST", "/v1/datasets", { name: "Golden", description: "reviewed", app: ids.support, data: [ids.data, ids.runData] })
    ).guid;
    const variables = [{ name: "threshold", value: 0.9 }];
    ids.datasetEval = (
      await ok("POST", "/v1/evals", {
        name: "Offline",
        action: ids.summarize,
        eval_types: [{ guid: ids.exactMatch, metadata: { variables } }],
        dataset: ids.dataset,
      })
    ).guid;
    ids.liveEval = (
      await ok("POST", "/v1/evals", { name: "Live", action: ids.classify, eval_types: [], sampling_rate: 0.5, alert_on_fail: true })
    ).guid;
    ids.experiment = (
      await ok("POST", "/v1/experiments", { name: "A/B", app: ids.support, primary_action: ids.summarize, secondary_action: ids.classify })
    ).guid;

    ids.session = (await ok("POST", "/v1/sessions", { action: ids.summarize, name: "Chat", extUserId: "user-1" })).guid;
    const actionRun = { action: ids.summarize, input: { text: "remember me" }, session: ids.session, async_mode: true };
    ids.generation = (await ok("POST", "/v1/actions", actionRun)).generation_guid;
    // A signed streaming URL, which must open after the restart as a signed file URL does.
    const streamingUrl = new URL((await ok("POST", "/v1/actions", { ...actionRun, async_mode: false, streaming: true })).streaming_url);
    ids.stream = `${streamingUrl.pathname}${streamingUrl.search}`;

    fileUrl = (await ok("POST", "/v1/files/upload", { data: Buffer.from(FILE_TEXT).toString("base64") })).url;

    const created = await ok("POST", `/v1/contexts/${ids.handbook}/documents`, {
      content: "Refunds take 5 days.",
      filter: "billing",
      metadata: { lang: "en" },
    });
    ids.document = created.docs[0];
    await ok("POST", `/v1/contexts/${ids.handbook}/documents/${ids.document}/embed`);

    // A Context Source that reads the uploaded file through its signed URL, with a splitter that cuts it in two.
    const sources = `/v1/contexts/${ids.faq}/context_sources`;
    ids.source = (await ok("POST", sources, { url: fileUrl })).guid;
    await ok("PUT", `${sources}/${ids.source}`, {
      name: "Policies",
      splitterConfig: { chunk_size: 40, chunk_overlap: 0 },
      loaderConfig: [{ name: "encoding", value: "utf-8" }],
    });
    await ok("POST", `/v1/context_sources/${ids.source}/process`, { contextGuid: ids.faq });
    await emulator.store.contextSources.idle();

    ids.secondWorkspace = (await ok("POST", "/v1/workspaces", { name: "Second", slug: "second" })).guid;

    const otherApp = (await request(base, "GET", "/v1/apps", undefined, OTHER_KEY)).body.data[0].guid;
    reads = [
      ...[
        "/v1/apps",
        `/v1/apps/${ids.app}`,
        `/v1/apps/${ids.support}`,
        `/v1/apps/${ids.deletedApp}`,
        `/v1/apps/${ids.support}/actions`,
        `/v1/apps/${ids.support}/finetunes`,
        `/v1/apps/${ids.support}/data`,
        `/v1/apps/${ids.support}/workflows`,
        "/v1/data",
        `/v1/data/${ids.data}`,
        `/v1/data/${ids.runData}`,
        `/v1/workflows/${ids.pipeline}`,
        `/v1/workflows/${ids.workflow}`,
        `/v1/workflows/${ids.pipeline}/result/${ids.run}`,
        `/v1/workflows/${ids.pipeline}/result/${ids.run}/dataset`,
        "/v1/providers",
        `/v1/providers/${ids.provider}`,
        "/v1/models",
        `/v1/models/${ids.model}`,
        "/v1/skills",
        "/v1/skills/types",
        `/v1/skills/${ids.skill}`,
        "/v1/datasets",
        `/v1/datasets/${ids.dataset}`,
        `/v1/datasets/app/${ids.support}`,
        `/v1/datasets/${ids.dataset}/items`,
        `/v1/datasets/${ids.dataset}/data`,
        "/v1/evals",
        "/v1/evals/types",
        `/v1/evals/${ids.datasetEval}`,
        `/v1/evals/${ids.liveEval}`,
        `/v1/evals/${ids.datasetEval}/runs`,
        "/v1/experiments",
        `/v1/experiments/${ids.experiment}`,
        "/v1/sessions",
        `/v1/sessions/${ids.session}`,
        `/v1/sessions/${ids.session}/data`,
        `/v1/generations/${ids.generation}`,
        ids.stream,
        `/v1/contexts/${ids.handbook}/documents`,
        `/v1/contexts/${ids.handbook}/documents/${ids.document}`,
        `/v1/contexts/${ids.faq}/documents`,
        sources,
        `${sources}/${ids.source}`,
        "/v1/workspaces",
        "/v1/workspaces/current",
        `/v1/workspaces/${ids.secondWorkspace}`,
        `/v1/workspaces/${ids.workspace}/apps`,
        `/v1/workspaces/${ids.workspace}/context`,
        `/v1/workspaces/${ids.workspace}/providers`,
        `/v1/workspaces/${ids.workspace}/usage`,
        `/v1/workspaces/${ids.secondWorkspace}/usage`,
      ].map((path): [string, string] => [ACME_KEY, path]),
      ...["/v1/apps", `/v1/apps/${otherApp}/actions`, "/v1/workspaces", "/v1/workspaces/current"].map((path): [string, string] => [
        OTHER_KEY,
        path,
      ]),
    ];
    before = await snapshot(base, reads);
    fileBefore = await request("", "GET", fileUrl, undefined, null);

    await emulator.close();
    await connections.close();
    connections = new Agent();
    // The same port, so that absolute URLs handed out before the restart (the signed file URL) stay the same.
    emulator = await startEmulator({ db, fixtures: FIXTURES, port });
    base = emulator.url.replace(/\/v1$/, "");
    after = await snapshot(base, reads);
  });

  afterAll(async () => {
    await emulator?.close();
    await connections.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("created what it meant to before the restart", () => {
    const read = (path: string) => before[`acme ${path}`]!;
    for (const [key, { status }] of Object.entries(before)) {
      if (key !== `acme /v1/apps/${ids.deletedApp}`) expect(status, key).toBe(200);
    }
    expect(read(`/v1/apps/${ids.app}`).body).toMatchObject({ description: "kept across restarts", last_updated_by_id: expect.any(String) });
    expect(read(`/v1/skills/${ids.skill}`).body).toMatchObject({ name: "web-search-eu" });
    expect(read(`/v1/datasets/${ids.dataset}/items`).body).toMatchObject({ total_count: 2 });
    expect(read(`/v1/contexts/${ids.handbook}/documents/${ids.document}`).body.embedding).toEqual(
      expect.arrayContaining([expect.any(Number)]),
    );
    expect(read(`/v1/contexts/${ids.faq}/context_sources/${ids.source}`).body).toMatchObject({
      name: "Policies",
      url: fileUrl,
      indexing_status: "indexed",
      splitter_config: { chunk_size: 40, chunk_overlap: 0 },
      indexing_metadata: { documents: 2, characters: FILE_TEXT.length, content_type: "text/plain" },
    });
    expect(read(`/v1/contexts/${ids.faq}/documents`).body.total_count).toBe(2);
    expect(read(`/v1/workflows/${ids.pipeline}/result/${ids.run}/dataset`).body.blocks).toHaveLength(2);
    expect(read("/v1/workspaces").body.total_count).toBe(2);
    expect(read(`/v1/sessions/${ids.session}/data`).body).toMatchObject({
      total_count: 2,
      data: [{ output: "Summarize: remember me" }, { output: "Summarize: remember me" }],
    });
    expect(read(`/v1/generations/${ids.generation}`).body).toMatchObject({ status: "SUCCESS", msg: "Summarize: remember me" });
    expect(read(ids.stream!).body).toBe(
      'data: {"token":"Summarize: "}\n\ndata: {"token":"remember "}\n\ndata: {"token":"me"}\n\ndata: END_STREAM\n\n',
    );
  });

  it("answers every read, record and list, exactly as before", () => {
    expect(Object.keys(after)).toEqual(Object.keys(before));
    for (const key of Object.keys(before)) expect(after[key], key).toEqual(before[key]);
  });

  it("keeps the soft-deleted App deleted", () => {
    const key = `acme /v1/apps/${ids.deletedApp}`;
    expect(before[key]).toEqual({ status: 404, body: { detail: "App not found" } });
    expect(after[key]).toEqual(before[key]);
    const listed = after["acme /v1/apps"]!.body.data.map((app: { guid: string }) => app.guid);
    expect(listed).not.toContain(ids.deletedApp);
  });

  it("does not load the fixtures a second time", () => {
    const body = (path: string, apiKey = ACME_KEY) => after[`${apiKey === ACME_KEY ? "acme" : "other"} ${path}`]!.body;
    expect(body("/v1/apps").data.map((app: { name: string }) => app.name)).toEqual(["Support", "Sales", "Persisted"]);
    expect(body(`/v1/apps/${ids.support}/actions`)).toHaveLength(2);
    expect(body(`/v1/apps/${ids.support}/workflows`).map((workflow: { name: string }) => workflow.name)).toEqual([
      "Pipeline",
      "Created flow",
    ]);
    expect(body(`/v1/workspaces/${ids.workspace}/context`).map((context: { name: string }) => context.name)).toEqual(["Handbook", "FAQ"]);
    expect(body("/v1/skills").data.map((skill: { name: string }) => skill.name)).toEqual(["web-search", "web-search-eu"]);
    expect(body("/v1/evals/types")).toHaveLength(2);
    expect(body("/v1/apps", OTHER_KEY).total_count).toBe(1);
    expect(body("/v1/workspaces", OTHER_KEY).total_count).toBe(1);
  });

  it("reports the same usage", () => {
    const usage: { feature: string; used: number }[] = after[`acme /v1/workspaces/${ids.workspace}/usage`]!.body;
    const used = Object.fromEntries(usage.map((entry) => [entry.feature, entry.used]));
    expect(used).toEqual({
      apps: 3,
      workflows: 2,
      datasets: 1,
      evals: 2,
      experiments: 1,
      skills: 2,
      models: 2,
      providers: 1,
      context_sources: 1,
    });
    expect(after[`acme /v1/workspaces/${ids.workspace}/usage`]).toEqual(before[`acme /v1/workspaces/${ids.workspace}/usage`]);
  });

  it("still serves the signed file URL handed out before the restart", async () => {
    expect(fileBefore).toMatchObject({ status: 200, text: FILE_TEXT });
    const served = await fetch(fileUrl, { dispatcher: connections });
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await served.text()).toBe(FILE_TEXT);
  });

  it("never answers a Provider or Model key", () => {
    const everything = JSON.stringify(after);
    expect(everything).not.toContain(PROVIDER_KEY);
    expect(everything).not.toContain(MODEL_KEY);
  });

  it("keeps accepting writes after the restart, listed after the records it kept", async () => {
    const app = await call("POST", "/v1/apps", { name: "After restart" });
    expect(app.status).toBe(200);
    const list = await call("GET", "/v1/apps");
    expect(list.body.data.map((entry: { name: string }) => entry.name)).toEqual(["Support", "Sales", "Persisted", "After restart"]);
  });
});
