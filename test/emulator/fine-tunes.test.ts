import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi, onTestFinished } from "vitest";
import { startEmulator } from "../../src/emulator";
import { ACME_KEY, MISSING_GUID, OTHER_KEY, TEST_FIXTURES, createTestEmulator } from "./harness";

const FINE_TUNE_FIELDS = [
  "app",
  "base_model",
  "created_at",
  "created_by_id",
  "data_ids",
  "dataset",
  "failure_reason",
  "guid",
  "last_updated_by_id",
  "name",
  "provider",
  "status",
  "training_dataset",
  "updated_at",
  "vendor_finetune_name",
].sort();

/** Any way to call the API (in-process or over HTTP), by a path from the server's root: `/v1/...` or `/_emulator/...`. */
type Caller = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/**
 * What a fine-tune create needs, made through the public routes: `count` Data records of the Support App
 * (their GUIDs and numeric ids) and a Provider connection (its GUID and numeric id).
 */
async function prepare(call: Caller, count = 12) {
  const support = (await call("GET", "/v1/apps")).body.data.find((app: { name: string }) => app.name === "Support").guid as string;
  const action = (await call("GET", `/v1/apps/${support}/actions`)).body[0].guid as string;
  const data: { guid: string; id: number }[] = [];
  for (let i = 0; i < count; i++) {
    const created = await call("POST", "/v1/data", { action, input: `question ${i}`, output: `answer ${i}` });
    data.push((await call("GET", `/_emulator/data/${created.body.guid}`)).body);
  }
  const connection = (await call("POST", "/v1/providers", { provider: "openai", key: "sk-fine-tune-secret" })).body.guid as string;
  const provider = (await call("GET", `/_emulator/providers/${connection}`)).body as { guid: string; id: number };
  return { app: support, data, provider };
}

describe("fine-tune routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let call: Caller;
  let setup: Awaited<ReturnType<typeof prepare>>;
  beforeEach(async () => {
    emulator = createTestEmulator();
    call = (method, path, body) => emulator.call(method, path, body);
    setup = await prepare(call);
  });
  afterEach(async () => {
    vi.useRealTimers();
    await emulator.close();
  });

  const body = (extra: Record<string, unknown> = {}) => ({
    name: "Support tone",
    app: setup.app,
    dataset: null,
    data_ids: setup.data.map((record) => record.id),
    base_model: "gpt-4o-mini",
    workspaceModelProviderId: setup.provider.id,
    ...extra,
  });
  const create = async (extra: Record<string, unknown> = {}) => {
    const reply = await call("POST", "/v1/finetune", body(extra));
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  };

  it("gives every Data record and Provider connection's numeric id on the emulator-only routes, behind the key", async () => {
    const [first, second] = setup.data;
    expect(first).toEqual({ guid: expect.any(String), id: expect.any(Number) });
    expect(second!.id).not.toBe(first!.id);
    expect(setup.provider.id).toBe(emulator.store.providers.list(emulator.store.workspaces.authenticate(ACME_KEY)!)[0]!.id);
    const unauthenticated = await emulator.call("GET", `/_emulator/data/${first!.guid}`, undefined, { apiKey: null });
    expect(unauthenticated.status).toBe(401);
    for (const path of [`/_emulator/data/${first!.guid}`, `/_emulator/providers/${setup.provider.guid}`]) {
      expect((await emulator.call("GET", path, undefined, { apiKey: OTHER_KEY })).status, path).toBe(404);
    }
    expect((await emulator.call("GET", `/_emulator/data/${MISSING_GUID}`)).body).toEqual({ detail: "Data not found" });
    expect((await emulator.call("GET", "/_emulator/data/not-a-uuid")).status).toBe(400);
    // Outside `/v1` only: the spec's routes stay as they are.
    expect((await emulator.call("GET", `/v1/_emulator/data/${first!.guid}`)).status).toBe(404);
  });

  it("creates a fine-tune as processing, with a training Dataset built from the resolved records", async () => {
    const source = (await call("POST", "/v1/datasets", { name: "Picked", app: setup.app })).body.guid as string;
    const ids = setup.data.map((record) => record.id);
    // Unresolvable ids are skipped and repeats count once; the order given is kept.
    const created = await create({ dataset: source, data_ids: [ids[3], ...ids, ids[3], 999_999] });
    expect(Object.keys(created).sort()).toEqual(FINE_TUNE_FIELDS);
    expect(created).toMatchObject({
      name: "Support tone",
      app: setup.app,
      dataset: source,
      data_ids: [ids[3], ...ids.filter((id) => id !== ids[3])],
      base_model: "gpt-4o-mini",
      provider: setup.provider.guid,
      status: "processing",
      vendor_finetune_name: `ftjob-${created.guid.replaceAll("-", "")}`,
      failure_reason: null,
      last_updated_by_id: null,
    });
    expect(created.training_dataset).not.toBe(source);

    const training = await call("GET", `/v1/datasets/${created.training_dataset}`);
    expect(training.body).toMatchObject({ name: "Support tone (fine-tune training data)", app: setup.app });
    const items = (await call("GET", `/v1/datasets/${created.training_dataset}/items`)).body;
    expect(items.total_count).toBe(12);
    expect(items.data[0]).toMatchObject({ input: "question 3", output: "answer 3", data: setup.data[3]!.guid });
    expect(items.data[1]).toMatchObject({ input: "question 0", output: "answer 0", data: setup.data[0]!.guid });

    expect((await call("GET", `/v1/finetune/${created.guid}`)).body).toEqual(created);
    const status = await call("GET", `/v1/finetune/${created.guid}/status/`);
    expect(status.body).toEqual({ status: "processing", vendor_finetune_name: created.vendor_finetune_name });
  });

  it("stays processing for 3 seconds, then succeeds", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.parse("2030-01-01T00:00:00.000Z");
    vi.setSystemTime(start);
    const created = await create();
    vi.setSystemTime(start + 3000);
    expect((await call("GET", `/v1/finetune/${created.guid}/status`)).body.status).toBe("processing");
    vi.setSystemTime(start + 3001);
    expect((await call("GET", `/v1/finetune/${created.guid}/status`)).body).toEqual({
      status: "succeeded",
      vendor_finetune_name: created.vendor_finetune_name,
    });
    expect((await call("GET", `/v1/finetune/${created.guid}`)).body).toMatchObject({ status: "succeeded", failure_reason: null });
  });

  it("keeps a job's status across a restart on the same database", async () => {
    const dbDir = mkdtempSync(join(tmpdir(), "gms-finetune-db-"));
    onTestFinished(() => rmSync(dbDir, { recursive: true, force: true }));
    const path = join(dbDir, "gms.db");
    const first = createTestEmulator(TEST_FIXTURES, path);
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.parse("2030-01-01T00:00:00.000Z");
    vi.setSystemTime(start);
    try {
      const prepared = await prepare((method, url, payload) => first.call(method, url, payload), 10);
      const created = await first.call("POST", "/v1/finetune", {
        ...body(),
        app: prepared.app,
        data_ids: prepared.data.map((record) => record.id),
        workspaceModelProviderId: prepared.provider.id,
        base_model: "fail-me",
      });
      expect(created.status).toBe(200);
      await first.close();
      const second = createTestEmulator(TEST_FIXTURES, path);
      try {
        vi.setSystemTime(start + 3000);
        expect((await second.call("GET", `/v1/finetune/${created.body.guid}/status`)).body.status).toBe("processing");
        vi.setSystemTime(start + 60_000);
        expect((await second.call("GET", `/v1/finetune/${created.body.guid}`)).body).toMatchObject({
          status: "failed",
          failure_reason: "The vendor rejected the job: base model 'fail-me' cannot be fine-tuned",
        });
      } finally {
        await second.close();
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it("fails a job whose base model's name contains `fail`, with the vendor's reason once it has finished", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.parse("2030-01-01T00:00:00.000Z");
    vi.setSystemTime(start);
    const created = await create({ base_model: "gpt-FAIL-test" });
    expect(created).toMatchObject({ status: "processing", failure_reason: null });
    vi.setSystemTime(start + 10_000);
    expect((await call("GET", `/v1/finetune/${created.guid}`)).body).toMatchObject({
      status: "failed",
      failure_reason: "The vendor rejected the job: base model 'gpt-FAIL-test' cannot be fine-tuned",
    });
    expect((await call("GET", `/v1/finetune/${created.guid}/status`)).body.status).toBe("failed");
  });

  it("answers 404 for a missing App, Dataset or Provider connection, and creates nothing", async () => {
    const theirs = (await emulator.call("POST", "/v1/providers", { provider: "openai", key: "k" }, { apiKey: OTHER_KEY })).body.guid;
    const theirId = (await emulator.call("GET", `/_emulator/providers/${theirs}`, undefined, { apiKey: OTHER_KEY })).body.id;
    const gone = (await call("POST", "/v1/providers", { provider: "groq", key: "k" })).body.guid;
    const goneId = (await call("GET", `/v1/../_emulator/providers/${gone}`)).body.id;
    await call("DELETE", `/v1/providers/${gone}`);
    for (const [extra, detail] of [
      [{ app: MISSING_GUID }, "App not found"],
      [{ dataset: MISSING_GUID }, "Dataset not found"],
      [{ workspaceModelProviderId: 987_654 }, "Provider not found"],
      [{ workspaceModelProviderId: theirId }, "Provider not found"],
      [{ workspaceModelProviderId: goneId }, "Provider not found"],
    ] as const) {
      const reply = await call("POST", "/v1/finetune", body(extra));
      expect(reply.status, detail).toBe(404);
      expect(reply.body).toEqual({ detail });
    }
    expect((await call("GET", "/v1/finetune")).body.total_count).toBe(0);
    expect((await call("GET", "/v1/datasets")).body.total_count).toBe(0);
  });

  it("answers 400 when fewer than 10 of data_ids resolve to live Data records of the workspace", async () => {
    const ids = setup.data.map((record) => record.id);
    const echo = await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY);
    const foreign = (await emulator.call("POST", "/v1/data", { action: echo, input: "a", output: "b" }, { apiKey: OTHER_KEY })).body.guid;
    const foreignId = (await emulator.call("GET", `/_emulator/data/${foreign}`, undefined, { apiKey: OTHER_KEY })).body.id;
    await call("DELETE", `/v1/data/${setup.data[0]!.guid}`);
    await call("DELETE", `/v1/data/${setup.data[1]!.guid}`);
    await call("DELETE", `/v1/data/${setup.data[2]!.guid}`);

    // 9 live records of the workspace, a repeat, a deleted one, another workspace's one and an unknown id.
    const reply = await call("POST", "/v1/finetune", body({ data_ids: [...ids.slice(3), ids[3], ids[0], foreignId, 999_999] }));
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ detail: "A fine-tune needs at least 10 Data records; 9 of data_ids resolved to one" });
    expect((await call("GET", "/v1/finetune")).body.total_count).toBe(0);
    expect((await call("GET", "/v1/datasets")).body.total_count).toBe(0);

    const more = await call("POST", "/v1/data", { action: await emulator.actionGuid("Support", "Summarize"), input: "i", output: "o" });
    const moreId = (await call("GET", `/v1/../_emulator/data/${more.body.guid}`)).body.id;
    expect((await call("POST", "/v1/finetune", body({ data_ids: [...ids.slice(3), moreId] }))).status).toBe(200);
  });

  it("answers 400 for malformed bodies: GUIDs as data_ids, a non-integer connection id, missing fields", async () => {
    const guids = await call("POST", "/v1/finetune", body({ data_ids: setup.data.map((record) => record.guid) }));
    expect(guids.status).toBe(400);
    expect(guids.body.detail[0]).toMatchObject({ loc: ["body", "data_ids", "0"] });
    expect((await call("POST", "/v1/finetune", body({ workspaceModelProviderId: 1.5 }))).body.detail[0]).toMatchObject({
      loc: ["body", "workspaceModelProviderId"],
    });
    expect((await call("POST", "/v1/finetune", body({ workspaceModelProviderId: setup.provider.guid }))).status).toBe(400);
    for (const field of ["name", "app", "data_ids", "base_model", "workspaceModelProviderId"]) {
      const reply = await call("POST", "/v1/finetune", body({ [field]: undefined }));
      expect(reply.status, field).toBe(400);
      expect(reply.body.detail[0], field).toMatchObject({ loc: ["body", field] });
    }
    expect((await call("POST", "/v1/finetune", body({ name: "" }))).status).toBe(400);
    expect((await call("GET", "/v1/finetune")).body.total_count).toBe(0);
  });

  it("answers 429 and creates nothing when the training Dataset exceeds the Dataset allowance", async () => {
    const limited = createTestEmulator({
      workspaces: [{ ...TEST_FIXTURES.workspaces![0]!, limits: { datasets: 0 } }],
    });
    try {
      const limitedCall: Caller = (method, path, payload) => limited.call(method, path, payload);
      const prepared = await prepare(limitedCall, 10);
      const reply = await limitedCall("POST", "/v1/finetune", {
        ...body(),
        app: prepared.app,
        data_ids: prepared.data.map((record) => record.id),
        workspaceModelProviderId: prepared.provider.id,
      });
      expect(reply.status).toBe(429);
      expect((await limitedCall("GET", "/v1/finetune")).body.total_count).toBe(0);
    } finally {
      await limited.close();
    }
  });

  it("renames on PUT and answers the fine-tune; nothing else changes", async () => {
    const created = await create();
    const renamed = await call("PUT", `/v1/finetune/${created.guid}`, { name: "Calmer tone", base_model: "other", app: MISSING_GUID });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({
      ...created,
      name: "Calmer tone",
      updated_at: renamed.body.updated_at,
      last_updated_by_id: created.created_by_id,
    });
    expect((await call("GET", `/v1/finetune/${created.guid}`)).body).toEqual(renamed.body);
    // The training Dataset keeps its name.
    expect((await call("GET", `/v1/datasets/${created.training_dataset}`)).body.name).toBe("Support tone (fine-tune training data)");
    expect((await call("PUT", `/v1/finetune/${created.guid}`, { name: "" })).status).toBe(400);
    expect((await call("PUT", `/v1/finetune/${created.guid}`, {})).body.detail[0]).toMatchObject({ loc: ["body", "name"] });
  });

  it("soft deletes: answers the message, then 404 `Fine-tune not found` everywhere; the training Dataset stays", async () => {
    const created = await create();
    const kept = await create({ name: "Kept" });
    const deleted = await call("DELETE", `/v1/finetune/${created.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Fine-tune ${created.guid} deleted` });
    for (const [method, path, payload] of [
      ["GET", `/finetune/${created.guid}`],
      ["GET", `/finetune/${created.guid}/status`],
      ["PUT", `/finetune/${created.guid}`, { name: "x" }],
      ["DELETE", `/finetune/${created.guid}`],
    ] as const) {
      const reply = await call(method, `/v1${path}`, payload);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toEqual({ detail: "Fine-tune not found" });
    }
    expect((await call("GET", "/v1/finetune")).body).toEqual({ data: [kept], total_count: 1, has_next_page: false });
    expect((await call("GET", `/v1/apps/${setup.app}/finetunes`)).body).toEqual([kept]);
    expect((await call("GET", `/v1/datasets/${created.training_dataset}`)).status).toBe(200);
  });

  it("lists the workspace's fine-tunes oldest first in the envelope with skip and limit", async () => {
    const made = [await create({ name: "one" }), await create({ name: "two" }), await create({ name: "three" })];
    expect((await call("GET", "/v1/finetune/?skip=1&limit=1")).body).toEqual({ data: [made[1]], total_count: 3, has_next_page: true });
    expect((await call("GET", "/v1/finetune?skip=2")).body).toEqual({ data: [made[2]], total_count: 3, has_next_page: false });
    expect((await call("GET", "/v1/finetune?limit=-1")).status).toBe(400);
  });

  it("scopes fine-tunes to the workspace of the key and rejects malformed UUIDs", async () => {
    const mine = await create();
    for (const [method, path, payload] of [
      ["GET", `/v1/finetune/${mine.guid}`],
      ["GET", `/v1/finetune/${mine.guid}/status`],
      ["PUT", `/v1/finetune/${mine.guid}`, { name: "theirs" }],
      ["DELETE", `/v1/finetune/${mine.guid}`],
    ] as const) {
      expect((await emulator.call(method, path, payload, { apiKey: OTHER_KEY })).status, `${method} ${path}`).toBe(404);
    }
    expect((await emulator.call("GET", "/v1/finetune", undefined, { apiKey: OTHER_KEY })).body.total_count).toBe(0);
    // This workspace's connection id does not resolve for another workspace.
    const otherApp = await emulator.appGuid("Elsewhere", OTHER_KEY);
    const theirs = await emulator.call("POST", "/v1/finetune", body({ app: otherApp }), { apiKey: OTHER_KEY });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ detail: "Provider not found" });
    expect((await call("GET", "/v1/finetune/not-a-uuid")).body.detail[0]).toMatchObject({ loc: ["path", "guid"] });
    expect((await call("GET", `/v1/finetune/${MISSING_GUID}/status`)).body).toEqual({ detail: "Fine-tune not found" });
  });
});

/** Calls a running emulator over HTTP by a path from its root. */
const overHttp =
  (url: string, apiKey: string): Caller =>
  async (method, path, payload) => {
    const response = await fetch(new URL(path, url), {
      method,
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
    });
    return { status: response.status, body: await response.json() };
  };

/** Creates a fine-tune on the base model and answers its status as created and as read a few milliseconds later. */
async function statusesOf(call: Caller, baseModel: string): Promise<{ created: string; later: any }> {
  const { app, data, provider } = await prepare(call, 10);
  const payload = {
    name: "timed",
    app,
    data_ids: data.map((record) => record.id),
    base_model: baseModel,
    workspaceModelProviderId: provider.id,
  };
  const created = await call("POST", "/v1/finetune", payload);
  await new Promise((resolve) => setTimeout(resolve, 5));
  return { created: created.body.status, later: (await call("GET", `/v1/finetune/${created.body.guid}`)).body };
}

describe("fine-tune timing options", () => {
  it("startEmulator({ fineTuneSeconds: 0 }) finishes a job at the first read after its create", async () => {
    const emulator = await startEmulator({ fixtures: TEST_FIXTURES, fineTuneSeconds: 0 });
    try {
      const over = overHttp(emulator.url, ACME_KEY);
      expect(await statusesOf(over, "gpt-4o-mini")).toMatchObject({ created: "processing", later: { status: "succeeded" } });
      expect(await statusesOf(over, "will-fail")).toMatchObject({
        created: "processing",
        later: { status: "failed", failure_reason: "The vendor rejected the job: base model 'will-fail' cannot be fine-tuned" },
      });
    } finally {
      await emulator.close();
    }
  });

  it("startEmulator refuses a negative or non-finite fineTuneSeconds", async () => {
    await expect(startEmulator({ fineTuneSeconds: -1 })).rejects.toThrow(/fineTuneSeconds must be a number of seconds, 0 or more/);
    await expect(startEmulator({ fineTuneSeconds: Number.NaN })).rejects.toThrow(/fineTuneSeconds/);
  });

  it("the CLI takes --finetune-seconds and refuses a value that is not a number of seconds", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gms-finetune-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const fixtures = join(dir, "fixtures.yaml");
    writeFileSync(
      fixtures,
      [
        "workspaces:",
        "  - { name: Acme, slug: acme, apiKey: " +
          ACME_KEY +
          ", apps: [{ name: Support, actions: [{ name: Summarize, prompt: 'S: {{text}}' }] }] }",
        "",
      ].join("\n"),
    );
    /** Starts the built CLI; `listening` resolves with its URL once it says so, `closed` with its exit code. */
    const start = (args: string[]) => {
      const child = spawn(process.execPath, [
        join(__dirname, "../../dist/cli/main.js"),
        "emulator",
        "--port",
        "0",
        "--db",
        ":memory:",
        ...args,
      ]);
      let stdout = "";
      let stderr = "";
      const listening = new Promise<string>((resolve) =>
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk;
          const url = stdout.match(/^gms-emulator listening on (\S+)$/m)?.[1];
          if (url && /^api keys?: /m.test(stdout)) resolve(url);
        }),
      );
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
      return { child, listening, closed, stderr: () => stderr };
    };

    for (const value of ["-1", "soon", ""]) {
      const refused = start([`--finetune-seconds=${value}`]);
      expect(await refused.closed, value).toBe(2);
      expect(refused.stderr(), value).toContain("--finetune-seconds must be a number of seconds, 0 or more");
    }
    const cli = start(["--fixtures", fixtures, "--finetune-seconds", "0"]);
    try {
      const over = overHttp(await cli.listening, ACME_KEY);
      expect(await statusesOf(over, "gpt-4o-mini")).toMatchObject({ created: "processing", later: { status: "succeeded" } });
    } finally {
      cli.child.kill("SIGTERM");
      await cli.closed;
    }
  });
});
