import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Fixtures, Store, loadFixtures, startEmulator } from "../../src/emulator";
import { FILES_LOADER_ID } from "../../src/api/context-sources";
import { MAX_SOURCE_BYTES } from "../../src/emulator/store/context-sources";
import { ACME_KEY, MISSING_GUID, OTHER_KEY, TEST_FIXTURES, callOverHttp, createTestEmulator } from "./harness";

const SOURCE_KEYS = [
  "created_at",
  "created_by_id",
  "guid",
  "indexed_at",
  "indexing_metadata",
  "indexing_status",
  "loader_config",
  "loader_id",
  "name",
  "splitter_config",
  "updated_at",
  "url",
];

interface Served {
  status?: number;
  type?: string;
  body: string | Buffer;
  /** Milliseconds before answering. */
  delay?: number;
  /** Send without content-length (chunked), to exercise the streamed size cap. */
  chunked?: boolean;
}

/** A small HTTP server standing in for wherever a source's object lives; tests set what each path answers. */
function fileServer() {
  const files = new Map<string, Served>();
  const requested: string[] = [];
  const server: Server = createServer((request, response) => {
    requested.push(request.url ?? "");
    const file = files.get(request.url ?? "");
    if (!file) {
      response.writeHead(404).end("missing");
      return;
    }
    setTimeout(() => {
      const headers: Record<string, string | number> = { "content-type": file.type ?? "text/plain; charset=utf-8" };
      if (!file.chunked) headers["content-length"] = Buffer.byteLength(file.body);
      response.writeHead(file.status ?? 200, headers);
      response.end(file.body);
    }, file.delay ?? 0);
  });
  let base = "";
  return {
    files,
    requested,
    url: (path: string) => `${base}${path}`,
    async start() {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const address = server.address();
      base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return typeof address === "object" && address ? address.port : 0;
}

const contextGuids = (store: Store, key: string): string[] =>
  store.contexts.list(store.workspaces.authenticate(key)!).map((context) => context.guid);

describe("context sources routes", () => {
  const files = fileServer();
  let emulator: ReturnType<typeof createTestEmulator>;
  let handbook: string;
  let faq: string;
  let elsewhere: string;
  const sources = (context = handbook) => `/v1/contexts/${context}/context_sources`;
  const create = async (url: string, context = handbook, apiKey = ACME_KEY) => {
    const reply = await emulator.call("POST", sources(context), { url }, { apiKey });
    expect(reply.status).toBe(200);
    return reply.body as { guid: string; name: string };
  };
  const read = async (guid: string, context = handbook) => (await emulator.call("GET", `${sources(context)}/${guid}`)).body;
  const documents = async (context = handbook) => (await emulator.call("GET", `/v1/contexts/${context}/documents`)).body.data;
  const processed = async (guid: string, context = handbook) => {
    const reply = await emulator.call("POST", `/v1/context_sources/${guid}/process`, { contextGuid: context });
    expect(reply.status).toBe(200);
    await emulator.store.contextSources.idle();
    return read(guid, context);
  };

  beforeAll(() => files.start());
  afterAll(() => files.stop());
  beforeEach(() => {
    files.files.clear();
    files.requested.length = 0;
    emulator = createTestEmulator();
    [handbook, faq] = contextGuids(emulator.store, ACME_KEY) as [string, string];
    elsewhere = contextGuids(emulator.store, OTHER_KEY)[0]!;
  });
  afterEach(() => emulator.close());

  it("creates a pending source on the Files loader with defaults, ignoring a chosen loader", async () => {
    const reply = await emulator.call("POST", sources(), {
      url: "https://files.example.com/uploads/Team%20Handbook.txt?sig=abc",
      loader_id: MISSING_GUID,
      loaderConfig: [{ name: "bucket", value: "x" }],
    });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(SOURCE_KEYS);
    expect(reply.body).toMatchObject({
      name: "Team Handbook.txt",
      url: "https://files.example.com/uploads/Team%20Handbook.txt?sig=abc",
      loader_id: FILES_LOADER_ID,
      loader_config: [],
      splitter_config: { chunk_size: 1000, chunk_overlap: 0 },
      indexing_status: "pending",
      indexed_at: null,
      indexing_metadata: null,
    });
    expect(reply.body.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(reply.body.created_by_id).toEqual(expect.any(String));
    expect(Date.parse(reply.body.created_at)).not.toBeNaN();
    expect(await read(reply.body.guid)).toEqual(reply.body);
    expect((await create("http://example.com")).name).toBe("example.com");
  });

  it("requires a well-formed http(s) URL", async () => {
    for (const body of [{}, { url: "not a url" }, { url: "ftp://example.com/file.txt" }, { url: 42 }]) {
      const reply = await emulator.call("POST", sources(), body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["body", "url"]);
    }
    expect((await emulator.call("GET", sources())).body).toEqual([]);
  });

  it("lists a Context's sources as a bare array, oldest first", async () => {
    const first = await create("https://example.com/a.txt");
    const second = await create("https://example.com/b.txt");
    await create("https://example.com/c.txt", faq);
    const list = await emulator.call("GET", `${sources()}?skip=1&limit=1`);
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((source: { guid: string }) => source.guid)).toEqual([first.guid, second.guid]);
    expect(Object.keys(list.body[0]).sort()).toEqual(SOURCE_KEYS);
  });

  it("replaces name, splitter and loader configuration on PUT, all three required", async () => {
    const source = await create("https://example.com/a.txt");
    const path = `${sources()}/${source.guid}`;
    const updated = await emulator.call("PUT", path, {
      name: "Renamed",
      splitterConfig: { chunk_size: 200, chunk_overlap: 20, separator: "ignored" },
      loaderConfig: [
        { name: "path", value: "/a", required: true },
        { name: "depth", value: 2 },
      ],
      loader_id: MISSING_GUID,
    });
    expect(updated.status).toBe(200);
    expect(Object.keys(updated.body).sort()).toEqual(SOURCE_KEYS);
    expect(updated.body).toMatchObject({
      name: "Renamed",
      loader_id: FILES_LOADER_ID,
      splitter_config: { chunk_size: 200, chunk_overlap: 20 },
      loader_config: [
        { name: "path", value: "/a", required: true },
        { name: "depth", value: 2 },
      ],
      indexing_status: "pending",
    });
    expect(await read(source.guid)).toEqual(updated.body);

    const replaced = await emulator.call("PUT", path, { name: "Again", splitterConfig: { chunk_size: 300 }, loaderConfig: [] });
    expect(replaced.body).toMatchObject({ name: "Again", splitter_config: { chunk_size: 300, chunk_overlap: 0 }, loader_config: [] });

    for (const body of [
      { splitterConfig: { chunk_size: 10 }, loaderConfig: [] },
      { name: "x", loaderConfig: [] },
      { name: "x", splitterConfig: { chunk_size: 10 } },
      { name: "x", splitterConfig: { chunk_size: 10 }, loaderConfig: [{ name: "no value" }] },
      { name: "x", splitterConfig: { chunk_size: 10 }, loaderConfig: [{ value: "no name" }] },
      { name: "x", splitter_config: { chunk_size: 10 }, loader_config: [] },
    ]) {
      const reply = await emulator.call("PUT", path, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.detail).toEqual(expect.any(Array));
    }
    for (const splitterConfig of [{ chunk_size: 0 }, { chunk_size: 100, chunk_overlap: 100 }, { chunk_size: 10.5 }, { chunk_overlap: 1 }]) {
      const reply = await emulator.call("PUT", path, { name: "x", splitterConfig, loaderConfig: [] });
      expect(reply.status, JSON.stringify(splitterConfig)).toBe(400);
      expect(reply.body).toEqual({ detail: "invalid splitter configuration" });
    }
    expect((await read(source.guid)).name).toBe("Again");
  });

  it("answers the generic 404 for a missing source and `Context not found` for a missing Context", async () => {
    const source = await create("https://example.com/a.txt");
    const update = { name: "x", splitterConfig: { chunk_size: 10 }, loaderConfig: [] };
    for (const guid of [MISSING_GUID]) {
      for (const [method, body] of [["GET"], ["PUT", update], ["DELETE"]] as const) {
        const reply = await emulator.call(method, `${sources()}/${guid}`, body);
        expect(reply.status, method).toBe(404);
        expect(reply.body).toEqual({ detail: "Not Found" });
        // A source is only reachable under its own Context.
        expect((await emulator.call(method, `${sources(faq)}/${source.guid}`, body)).body).toEqual({ detail: "Not Found" });
      }
    }
    for (const context of [MISSING_GUID, elsewhere]) {
      for (const [method, path, body] of [
        ["GET", sources(context)],
        ["POST", sources(context), { url: "https://example.com/a" }],
        ["GET", `${sources(context)}/${source.guid}`],
        ["PUT", `${sources(context)}/${source.guid}`, update],
        ["DELETE", `${sources(context)}/${source.guid}`],
        ["POST", `/v1/context_sources/${source.guid}/process`, { contextGuid: context }],
      ] as const) {
        const reply = await emulator.call(method, path, body);
        expect(reply.status, `${method} ${path}`).toBe(404);
        expect(reply.body).toEqual({ detail: "Context not found" });
      }
    }
  });

  it("scopes sources to the workspace of the key", async () => {
    const theirs = await create("https://example.com/theirs.txt", elsewhere, OTHER_KEY);
    const other = { apiKey: OTHER_KEY };
    expect((await emulator.call("GET", `${sources(elsewhere)}/${theirs.guid}`, undefined, other)).status).toBe(200);
    expect((await emulator.call("GET", sources(elsewhere), undefined, other)).body).toHaveLength(1);
    expect((await emulator.call("GET", `${sources(elsewhere)}/${theirs.guid}`)).body).toEqual({ detail: "Context not found" });
    const reply = await emulator.call("POST", `/v1/context_sources/${theirs.guid}/process`, { contextGuid: handbook });
    expect(reply.body).toEqual({ detail: "Context Source not found" });
  });

  it("answers 400 for malformed UUIDs", async () => {
    const badContext = await emulator.call("GET", "/v1/contexts/nope/context_sources");
    expect(badContext.status).toBe(400);
    expect(badContext.body.detail[0].loc).toEqual(["path", "contextGuid"]);
    expect((await emulator.call("GET", `${sources()}/nope`)).body.detail[0].loc).toEqual(["path", "guid"]);
    expect((await emulator.call("POST", "/v1/context_sources/nope/process", { contextGuid: handbook })).body.detail[0].loc).toEqual([
      "path",
      "guid",
    ]);
    const source = await create("https://example.com/a.txt");
    const badBody = await emulator.call("POST", `/v1/context_sources/${source.guid}/process`, { contextGuid: "nope" });
    expect(badBody.status).toBe(400);
    expect(badBody.body.detail[0].loc).toEqual(["body", "contextGuid"]);
    expect((await emulator.call("POST", `/v1/context_sources/${source.guid}/process`, {})).status).toBe(400);
    expect((await emulator.call("POST", "/v1/context_sources/process_batch", { sources: "x" })).status).toBe(400);
  });

  it("soft deletes: a message, then 404 everywhere, gone from the list, and the allowance freed", async () => {
    const limited: Fixtures = { workspaces: [{ ...TEST_FIXTURES.workspaces![0]!, limits: { context_sources: 1 } }] };
    await emulator.close();
    emulator = createTestEmulator(limited);
    [handbook] = contextGuids(emulator.store, ACME_KEY) as [string];

    const source = await create("https://example.com/a.txt");
    const refused = await emulator.call("POST", sources(), { url: "https://example.com/b.txt" });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/Context Source limit reached/);

    const deleted = await emulator.call("DELETE", `${sources()}/${source.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Context Source ${source.guid} deleted` });
    for (const method of ["GET", "DELETE"])
      expect((await emulator.call(method, `${sources()}/${source.guid}`)).body).toEqual({ detail: "Not Found" });
    const put = await emulator.call("PUT", `${sources()}/${source.guid}`, {
      name: "x",
      splitterConfig: { chunk_size: 10 },
      loaderConfig: [],
    });
    expect(put.status).toBe(404);
    const process = await emulator.call("POST", `/v1/context_sources/${source.guid}/process`, { contextGuid: handbook });
    expect(process.body).toEqual({ detail: "Context Source not found" });
    expect((await emulator.call("GET", sources())).body).toEqual([]);
    expect((await emulator.call("POST", sources(), { url: "https://example.com/b.txt" })).status).toBe(200);
  });

  it("processes in the background: processing at once, then indexed with Documents split per the splitter", async () => {
    const text = "First paragraph of the handbook.\n\nSecond paragraph, a little longer than the first.\n\nThird.";
    files.files.set("/handbook.txt", { body: text, delay: 50 });
    const source = await create(files.url("/handbook.txt"));
    await emulator.call("PUT", `${sources()}/${source.guid}`, {
      name: "Handbook",
      splitterConfig: { chunk_size: 55, chunk_overlap: 0 },
      loaderConfig: [],
    });

    const dispatched = await emulator.call("POST", `/v1/context_sources/${source.guid}/process`, { contextGuid: handbook });
    expect(dispatched.status).toBe(200);
    expect(dispatched.body).toEqual({ msg: "success" });
    expect(await read(source.guid)).toMatchObject({ indexing_status: "processing", indexed_at: null, indexing_metadata: null });

    await emulator.store.contextSources.idle();
    const indexed = await read(source.guid);
    expect(indexed).toMatchObject({
      indexing_status: "indexed",
      indexing_metadata: { documents: 3, characters: text.length, content_type: "text/plain" },
    });
    expect(Date.parse(indexed.indexed_at)).not.toBeNaN();
    const written = await documents();
    expect(written.map((document: { content: string }) => document.content)).toEqual([
      "First paragraph of the handbook.\n\n",
      "Second paragraph, a little longer than the first.\n\n",
      "Third.",
    ]);
    expect(written[1]).toMatchObject({ filter: null, metadata: { context_source: source.guid, chunk: 1 }, embedding: null });
    expect(await documents(faq)).toEqual([]);
  });

  it("replaces the source's earlier Documents on reprocessing and leaves other Documents alone", async () => {
    files.files.set("/notes.json", { body: '{"note": "version one"}', type: "application/json" });
    const source = await create(files.url("/notes.json"));
    await emulator.call("POST", `/v1/contexts/${handbook}/documents`, { content: "written by hand" });
    expect((await processed(source.guid)).indexing_metadata).toMatchObject({ documents: 1, content_type: "application/json" });

    files.files.set("/notes.json", { body: '{"note": "version two"}', type: "application/json" });
    const again = await processed(source.guid);
    expect(again.indexing_status).toBe("indexed");
    expect((await documents()).map((document: { content: string }) => document.content)).toEqual([
      "written by hand",
      '{"note": "version two"}',
    ]);
  });

  it("decodes the charset the response names", async () => {
    files.files.set("/latin1.txt", { body: Buffer.from("café crème", "latin1"), type: "text/plain; charset=ISO-8859-1" });
    const source = await create(files.url("/latin1.txt"));
    expect((await processed(source.guid)).indexing_status).toBe("indexed");
    expect((await documents())[0].content).toBe("café crème");
  });

  it("ends failed with the error in indexing_metadata, keeping the Documents of the last good run", async () => {
    files.files.set("/doc.txt", { body: "good content" });
    const source = await create(files.url("/doc.txt"));
    const good = await processed(source.guid);
    expect(good.indexing_status).toBe("indexed");

    const failures: Array<[Served | undefined, RegExp]> = [
      [{ body: "png bytes", type: "image/png" }, /^unsupported content type image\/png$/],
      [{ status: 500, body: "boom" }, /^the source answered HTTP 500$/],
      [undefined, /^the source answered HTTP 404$/],
      [{ body: "x", type: "text/plain; charset=klingon" }, /^unsupported charset klingon$/],
    ];
    for (const [served, error] of failures) {
      if (served) files.files.set("/doc.txt", served);
      else files.files.delete("/doc.txt");
      const failed = await processed(source.guid);
      expect(failed.indexing_status).toBe("failed");
      expect(failed.indexing_metadata.error).toMatch(error);
      expect(Object.keys(failed.indexing_metadata)).toEqual(["error"]);
      expect(failed.indexed_at).toBe(good.indexed_at);
    }
    expect((await documents()).map((document: { content: string }) => document.content)).toEqual(["good content"]);
  });

  it("fails on an unreachable URL and on an object past the size cap", async () => {
    const refused = await create(`http://127.0.0.1:${await closedPort()}/x.txt`);
    expect(await processed(refused.guid)).toMatchObject({
      indexing_status: "failed",
      indexing_metadata: { error: expect.stringMatching(/^fetch failed: connect ECONNREFUSED/) },
    });

    files.files.set("/huge.txt", { body: Buffer.alloc(MAX_SOURCE_BYTES + 1, "a") });
    files.files.set("/huge-chunked.txt", { body: Buffer.alloc(MAX_SOURCE_BYTES + 1, "a"), chunked: true });
    for (const path of ["/huge.txt", "/huge-chunked.txt"]) {
      const huge = await create(files.url(path));
      expect((await processed(huge.guid)).indexing_metadata).toEqual({ error: `the source is larger than ${MAX_SOURCE_BYTES} bytes` });
    }
    expect(await documents()).toEqual([]);
  });

  it("processes a batch, ignoring unknown, malformed and other workspaces' GUIDs", async () => {
    files.files.set("/a.txt", { body: "alpha" });
    files.files.set("/b.txt", { body: "beta" });
    const a = await create(files.url("/a.txt"));
    const b = await create(files.url("/b.txt"), faq);
    const theirs = await create(files.url("/a.txt"), elsewhere, OTHER_KEY);
    const reply = await emulator.call("POST", "/v1/context_sources/process_batch/", {
      sources: [a.guid, b.guid, a.guid, MISSING_GUID, theirs.guid, "nope"],
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ msg: "success" });
    await emulator.store.contextSources.idle();
    expect((await read(a.guid)).indexing_status).toBe("indexed");
    expect((await read(b.guid, faq)).indexing_status).toBe("indexed");
    expect((await documents()).map((document: { content: string }) => document.content)).toEqual(["alpha"]);
    expect((await documents(faq)).map((document: { content: string }) => document.content)).toEqual(["beta"]);
    const other = await emulator.call("GET", `${sources(elsewhere)}/${theirs.guid}`, undefined, { apiKey: OTHER_KEY });
    expect(other.body.indexing_status).toBe("pending");
    expect((await emulator.call("POST", "/v1/context_sources/process_batch", { sources: [] })).body).toEqual({ msg: "success" });
  });

  it("lets a source's newest dispatch win, staying processing until it ends", async () => {
    files.files.set("/v.txt", { body: "first", delay: 40 });
    const source = await create(files.url("/v.txt"));
    await emulator.call("POST", `/v1/context_sources/${source.guid}/process`, { contextGuid: handbook });
    // The first run has its answer under way before the object changes.
    while (!files.requested.includes("/v.txt")) await new Promise((resolve) => setTimeout(resolve, 1));
    files.files.set("/v.txt", { body: "second", delay: 150 });
    await emulator.call("POST", `/v1/context_sources/${source.guid}/process`, { contextGuid: handbook });
    await new Promise((resolve) => setTimeout(resolve, 90)); // the first run has ended, the second not
    expect((await read(source.guid)).indexing_status).toBe("processing");
    expect(await documents()).toEqual([]);
    await emulator.store.contextSources.idle();
    expect((await read(source.guid)).indexing_status).toBe("indexed");
    expect((await documents()).map((document: { content: string }) => document.content)).toEqual(["second"]);
  });

  it("does nothing for a source deleted before its run writes", async () => {
    files.files.set("/slow.txt", { body: "late", delay: 50 });
    const source = await create(files.url("/slow.txt"));
    await emulator.call("POST", `/v1/context_sources/${source.guid}/process`, { contextGuid: handbook });
    await emulator.call("DELETE", `${sources()}/${source.guid}`);
    await emulator.store.contextSources.idle();
    expect(await documents()).toEqual([]);
  });

  it("closing the server waits for running work", async () => {
    files.files.set("/slow.txt", { body: "slow but done", delay: 100 });
    const source = await create(files.url("/slow.txt"));
    await emulator.call("POST", `/v1/context_sources/${source.guid}/process`, { contextGuid: handbook });
    await emulator.server.close();
    const caller = emulator.store.workspaces.authenticate(ACME_KEY)!;
    expect(emulator.store.contextSources.get(caller, handbook, source.guid).indexingStatus).toBe("indexed");
  });
});

describe("context source processing around a closed store", () => {
  const files = fileServer();
  let directory: string;
  beforeAll(() => files.start());
  afterAll(() => files.stop());
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "gms-context-sources-"));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it("drops work that runs after the store closed, and a reopened store marks the interrupted run failed", async () => {
    files.files.set("/doc.txt", { body: "never stored", delay: 30 });
    const path = join(directory, "emulator.db");
    const store = new Store(path);
    loadFixtures(store, TEST_FIXTURES);
    const caller = store.workspaces.authenticate(ACME_KEY)!;
    const [context] = contextGuids(store, ACME_KEY) as [string];
    const source = store.contextSources.create(caller, context, { url: files.url("/doc.txt") });
    const late = store.contextSources.create(caller, context, { url: files.url("/doc.txt") });
    store.contextSources.process(caller, source.guid, context);
    await new Promise((resolve) => setTimeout(resolve, 5)); // the first run is fetching
    store.contextSources.process(caller, late.guid, context); // this one has not started
    store.close();
    await store.contextSources.idle();

    const reopened = new Store(path);
    try {
      for (const guid of [source.guid, late.guid]) {
        expect(reopened.contextSources.get(caller, context, guid)).toMatchObject({
          indexingStatus: "failed",
          indexingMetadata: { error: "interrupted: the emulator stopped while processing" },
        });
      }
    } finally {
      reopened.close();
    }
  });
});

describe("context source processing end to end over HTTP", () => {
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  beforeEach(async () => {
    emulator = await startEmulator({ fixtures: TEST_FIXTURES, port: 0 });
  });
  afterEach(() => emulator.close());

  const api = (method: string, path: string, body?: unknown) => callOverHttp(emulator, method, path, body);

  it("indexes a file uploaded to the emulator itself through its signed URL", async () => {
    const text = "Returns are accepted within 30 days.\nRefunds go to the original card.\nGift cards are final.";
    const upload = await api("POST", "/files/upload", { data: `data:text/plain;base64,${Buffer.from(text).toString("base64")}` });
    expect(upload.status).toBe(200);
    const [context] = contextGuids(emulator.store, ACME_KEY) as [string];

    const created = await api("POST", `/contexts/${context}/context_sources`, { url: upload.body.url });
    expect(created.status).toBe(200);
    const guid = created.body.guid;
    await api("PUT", `/contexts/${context}/context_sources/${guid}`, {
      name: "Policies",
      splitterConfig: { chunk_size: 40, chunk_overlap: 0 },
      loaderConfig: [],
    });
    expect((await api("POST", `/context_sources/${guid}/process`, { contextGuid: context })).body).toEqual({ msg: "success" });
    await emulator.store.contextSources.idle();

    const source = await api("GET", `/contexts/${context}/context_sources/${guid}`);
    expect(source.body).toMatchObject({
      name: "Policies",
      indexing_status: "indexed",
      indexing_metadata: { documents: 3, characters: text.length, content_type: "text/plain" },
    });
    expect(Date.parse(source.body.indexed_at)).not.toBeNaN();
    const documents = await api("GET", `/contexts/${context}/documents`);
    expect(documents.body.data.map((document: { content: string }) => document.content)).toEqual([
      "Returns are accepted within 30 days.\n",
      "Refunds go to the original card.\n",
      "Gift cards are final.",
    ]);
  });

  it.each([
    ["text/plain;charset=utf-8", "Plain words.", "text/plain"],
    ["text/markdown", "# Title\n\nSome *markdown*.", "text/markdown"],
    ["text/csv", "name,age\nAda,36\n", "text/csv"],
    ["text/tab-separated-values", "name\tage\nAda\t36\n", "text/tab-separated-values"],
    ["application/json", '{"policy": "returns within 30 days"}', "application/json"],
    // Served as octet-stream downloads, yet indexed by the type the uploader declared.
    ["text/html", "<h1>Handbook</h1><script>alert(1)</script>", "text/html"],
    ["text/yaml", "policy: returns\n", "text/yaml"],
    // PDF-looking text declared as text is text.
    ["text/plain", "%PDF-1.7 not really a PDF", "text/plain"],
  ])("indexes an upload declared as %s through its signed URL", async (type, text, contentType) => {
    const upload = await api("POST", "/files/upload", { data: `data:${type};base64,${Buffer.from(text).toString("base64")}` });
    expect(upload.status).toBe(200);
    const [context] = contextGuids(emulator.store, ACME_KEY) as [string];
    const created = await api("POST", `/contexts/${context}/context_sources`, { url: upload.body.url });
    await api("POST", `/context_sources/${created.body.guid}/process`, { contextGuid: context });
    await emulator.store.contextSources.idle();
    const source = await api("GET", `/contexts/${context}/context_sources/${created.body.guid}`);
    expect(source.body).toMatchObject({
      indexing_status: "indexed",
      indexing_metadata: { documents: 1, characters: text.length, content_type: contentType },
    });
    expect((await api("GET", `/contexts/${context}/documents`)).body.data.map((document: { content: string }) => document.content)).toEqual(
      [text],
    );
  });

  it.each([
    ["a declared PDF", `data:application/pdf;base64,${Buffer.from("%PDF-1.7\n%binary").toString("base64")}`, "application/pdf"],
    ["a sniffed PDF", Buffer.from("%PDF-1.4\n%binary").toString("base64"), "application/pdf"],
    ["a PNG", Buffer.from("89504e470d0a1a0a0000000d49484452", "hex").toString("base64"), "image/png"],
  ])("ends failed for %s upload, whose type the loader does not read", async (_label, data, type) => {
    const upload = await api("POST", "/files/upload", { data });
    const [context] = contextGuids(emulator.store, ACME_KEY) as [string];
    const created = await api("POST", `/contexts/${context}/context_sources`, { url: upload.body.url });
    await api("POST", `/context_sources/${created.body.guid}/process`, { contextGuid: context });
    await emulator.store.contextSources.idle();
    const source = await api("GET", `/contexts/${context}/context_sources/${created.body.guid}`);
    expect(source.body).toMatchObject({ indexing_status: "failed", indexing_metadata: { error: `unsupported content type ${type}` } });
  });

  it("ends failed for a URL nobody serves", async () => {
    const [context] = contextGuids(emulator.store, ACME_KEY) as [string];
    const created = await api("POST", `/contexts/${context}/context_sources`, { url: "http://127.0.0.1:9/x" });
    await api("POST", "/context_sources/process_batch", { sources: [created.body.guid] });
    await emulator.store.contextSources.idle();
    const source = await api("GET", `/contexts/${context}/context_sources/${created.body.guid}`);
    expect(source.body).toMatchObject({
      indexing_status: "failed",
      indexing_metadata: { error: expect.stringMatching(/^fetch failed: /) },
    });
    expect((await api("GET", `/contexts/${context}/documents`)).body.total_count).toBe(0);
  });
});
