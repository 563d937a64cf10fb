import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EMBEDDING_DIMENSIONS, embedText } from "../../src/emulator/store/documents";
import { parseSplitterConfig, splitText } from "../../src/emulator/store/splitter";
import { ACME_KEY, MISSING_GUID, OTHER_KEY, createTestEmulator } from "./harness";

const DOCUMENT_KEYS = ["content", "created_at", "embedding", "filter", "guid", "metadata", "updated_at"];

/** Words of varying length, so that chunk boundaries fall on spaces. */
const prose = (words: number): string => Array.from({ length: words }, (_, i) => `word${i}`).join(" ");

describe("documents routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let handbook: string;
  let faq: string;
  let elsewhere: string;
  const docs = (context = handbook) => `/v1/contexts/${context}/documents`;
  const contents = async (query = "", context = handbook): Promise<string[]> =>
    (await emulator.call("GET", `${docs(context)}${query}`)).body.data.map((document: { content: string }) => document.content);

  beforeEach(() => {
    emulator = createTestEmulator();
    const contextsOf = (key: string) => emulator.store.contexts.list(emulator.store.workspaces.authenticate(key)!);
    [handbook, faq] = contextsOf(ACME_KEY).map((context) => context.guid) as [string, string];
    elsewhere = contextsOf(OTHER_KEY)[0]!.guid;
  });
  afterEach(() => emulator.close());

  it("creates a Document and reads it back with exactly the public fields", async () => {
    const created = await emulator.call("POST", docs(), { content: "Refunds take 5 days.", filter: "billing", metadata: { lang: "en" } });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(["docs", "status"]);
    expect(created.body.status).toBe("success");
    expect(created.body.docs).toHaveLength(1);

    const read = await emulator.call("GET", `${docs()}/${created.body.docs[0]}`);
    expect(read.status).toBe(200);
    expect(Object.keys(read.body).sort()).toEqual(DOCUMENT_KEYS);
    expect(read.body).toMatchObject({
      guid: created.body.docs[0],
      content: "Refunds take 5 days.",
      filter: "billing",
      metadata: { lang: "en" },
      embedding: null,
    });
    expect(Date.parse(read.body.created_at)).not.toBeNaN();
    expect(read.body.updated_at).toBe(read.body.created_at);
  });

  it("accepts `text` for `content` and `meta_data` for `metadata`, with defaults for filter and metadata", async () => {
    const fromText = await emulator.call("POST", docs(), { text: "from text", meta_data: { old: true } });
    expect(fromText.status).toBe(200);
    const read = await emulator.call("GET", `${docs()}/${fromText.body.docs[0]}`);
    expect(read.body).toMatchObject({ content: "from text", filter: null, metadata: { old: true } });

    const both = await emulator.call("POST", docs(), { content: "content wins", text: "text loses" });
    expect((await emulator.call("GET", `${docs()}/${both.body.docs[0]}`)).body).toMatchObject({ content: "content wins", metadata: {} });
  });

  it("answers 400 without content or text, and for badly typed fields", async () => {
    const missing = await emulator.call("POST", docs(), { filter: "x" });
    expect(missing.status).toBe(400);
    expect(missing.body.detail[0].loc).toEqual(["body", "content"]);
    expect((await emulator.call("POST", docs(), { content: 42 })).status).toBe(400);
    expect((await emulator.call("POST", docs(), { content: "x", filter: 1 })).status).toBe(400);
    expect((await emulator.call("POST", docs(), { content: "x", metadata: ["not", "an", "object"] })).status).toBe(400);
    expect((await emulator.call("GET", docs())).body.total_count).toBe(0);
  });

  it("splits content longer than the default chunk size into several Documents with the same filter and metadata", async () => {
    const content = prose(400); // 3089 characters: three full chunks cut at spaces and a short one
    const created = await emulator.call("POST", docs(), { content, filter: "long", metadata: { part: "all" } });
    expect(created.body.docs).toHaveLength(4);
    const list = await emulator.call("GET", docs());
    expect(list.body.data.map((document: { guid: string }) => document.guid)).toEqual(created.body.docs);
    for (const document of list.body.data) {
      expect(document.content.length).toBeLessThanOrEqual(1000);
      expect(document).toMatchObject({ filter: "long", metadata: { part: "all" } });
    }
    expect(list.body.data.map((document: { content: string }) => document.content).join("")).toBe(content);

    const exactlyOne = await emulator.call("POST", docs(), { content: "x".repeat(1000) });
    expect(exactlyOne.body.docs).toHaveLength(1);
    const empty = await emulator.call("POST", docs(), { content: "" });
    expect(empty.body.docs).toHaveLength(1);
  });

  it("lists in the envelope with skip and limit, and `query` matches content ignoring case", async () => {
    for (const content of ["Alpha beta", "gamma", "BETA max", "Été à Paris"]) await emulator.call("POST", docs(), { content });
    const all = await emulator.call("GET", docs());
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total_count: 4, has_next_page: false });
    const page = await emulator.call("GET", `${docs()}?skip=1&limit=2`);
    expect(page.body).toMatchObject({ total_count: 4, has_next_page: true });
    expect(page.body.data.map((document: { content: string }) => document.content)).toEqual(["gamma", "BETA max"]);

    expect(await contents("?query=beta")).toEqual(["Alpha beta", "BETA max"]);
    expect((await emulator.call("GET", `${docs()}?query=beta&limit=1`)).body).toMatchObject({ total_count: 2, has_next_page: true });
    expect(await contents("?query=%C3%A9T%C3%89")).toEqual(["Été à Paris"]); // "éTÉ": non-ASCII letters fold too
    expect(await contents("?query=zeta")).toEqual([]);
    expect(await contents("", faq)).toEqual([]);
    expect((await emulator.call("GET", `${docs()}?limit=-1`)).status).toBe(400);
  });

  it("updates the fields sent, answers the Document, and drops a stale embedding", async () => {
    const { body } = await emulator.call("POST", docs(), { content: "old words", filter: "f", metadata: { a: 1 } });
    const guid = body.docs[0];
    await emulator.call("POST", `${docs()}/${guid}/embed`);

    const filtered = await emulator.call("PUT", `${docs()}/${guid}`, { filter: null, metadata: { b: 2 } });
    expect(filtered.status).toBe(200);
    expect(Object.keys(filtered.body).sort()).toEqual(DOCUMENT_KEYS);
    expect(filtered.body).toMatchObject({ guid, content: "old words", filter: null, metadata: { b: 2 } });
    expect(filtered.body.embedding).toHaveLength(EMBEDDING_DIMENSIONS);

    const rewritten = await emulator.call("PUT", `${docs()}/${guid}`, { content: "new words" });
    expect(rewritten.body).toMatchObject({ content: "new words", filter: null, metadata: { b: 2 }, embedding: null });
    expect((await emulator.call("PUT", `${docs()}/${guid}`, { text: "via text" })).body.content).toBe("via text");
    expect((await emulator.call("GET", `${docs()}/${guid}`)).body.content).toBe("via text");
    expect((await emulator.call("PUT", `${docs()}/${guid}`, {})).status).toBe(400);
    expect((await emulator.call("PUT", `${docs()}/${guid}`, { metadata: "x" })).status).toBe(400);
  });

  it("embeds deterministically into a unit vector", async () => {
    const { body } = await emulator.call("POST", docs(), { content: "The cat sat" });
    const embedded = await emulator.call("POST", `${docs()}/${body.docs[0]}/embed`);
    expect(embedded.status).toBe(200);
    expect(embedded.body).toEqual({ status: "success" });
    const { embedding } = (await emulator.call("GET", `${docs()}/${body.docs[0]}`)).body;
    expect(embedding).toHaveLength(EMBEDDING_DIMENSIONS);
    expect(Math.hypot(...embedding)).toBeCloseTo(1, 10);
    expect(embedding).toEqual(embedText("the CAT sat"));
    expect(embedText("the dog sat")).not.toEqual(embedding);
    expect(embedText("...")).toEqual(new Array(EMBEDDING_DIMENSIONS).fill(0));
  });

  it("soft deletes one Document: a message, then 404 everywhere and gone from the list", async () => {
    const { body } = await emulator.call("POST", docs(), { content: "doomed" });
    const guid = body.docs[0];
    const deleted = await emulator.call("DELETE", `${docs()}/${guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Document ${guid} deleted` });
    for (const [method, path, payload] of [
      ["GET", `${docs()}/${guid}`],
      ["PUT", `${docs()}/${guid}`, { content: "x" }],
      ["POST", `${docs()}/${guid}/embed`],
      ["DELETE", `${docs()}/${guid}`],
    ] as const) {
      const reply = await emulator.call(method, path, payload);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toEqual({ detail: "Document not found" });
    }
    expect((await emulator.call("GET", docs())).body.total_count).toBe(0);
  });

  it("bulk deletes by a filter from the body or the query, or everything without one", async () => {
    const seed = async () => {
      await emulator.call("POST", docs(), { content: "a1", filter: "a" });
      await emulator.call("POST", docs(), { content: "a2", filter: "a" });
      await emulator.call("POST", docs(), { content: "b1", filter: "b" });
      await emulator.call("POST", docs(), { content: "none" });
    };
    await seed();
    await emulator.call("POST", docs(faq), { content: "faq a", filter: "a" });

    const byBody = await emulator.call("DELETE", docs(), { filter: "a" });
    expect(byBody.status).toBe(200);
    expect(byBody.body).toEqual({ status: "success" });
    expect(await contents()).toEqual(["b1", "none"]);

    const byQuery = await emulator.call("DELETE", `${docs()}/?filter=b`);
    expect(byQuery.body).toEqual({ status: "success" });
    expect(await contents()).toEqual(["none"]);

    await seed();
    // As clients send it: a JSON content type and no body at all.
    const all = await emulator.call("DELETE", docs(), undefined, { headers: { "content-type": "application/json" } });
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ status: "success" });
    expect(await contents()).toEqual([]);
    expect(await contents("", faq)).toEqual(["faq a"]);
    expect((await emulator.call("DELETE", docs(), { filter: 5 })).status).toBe(400);
  });

  it("answers 404 `Context not found` for a missing or foreign Context on every route", async () => {
    const { body } = await emulator.call("POST", docs(), { content: "mine" });
    const guid = body.docs[0];
    for (const context of [MISSING_GUID, elsewhere]) {
      for (const [method, path, payload] of [
        ["GET", docs(context)],
        ["POST", docs(context), { content: "x" }],
        ["DELETE", docs(context)],
        ["GET", `${docs(context)}/${guid}`],
        ["PUT", `${docs(context)}/${guid}`, { content: "x" }],
        ["POST", `${docs(context)}/${guid}/embed`],
        ["DELETE", `${docs(context)}/${guid}`],
      ] as const) {
        const reply = await emulator.call(method, path, payload);
        expect(reply.status, `${method} ${path}`).toBe(404);
        expect(reply.body).toEqual({ detail: "Context not found" });
      }
    }
    // The other workspace reaches its own Context, and not Acme's Document through it.
    const other = { apiKey: OTHER_KEY };
    expect((await emulator.call("GET", docs(elsewhere), undefined, other)).status).toBe(200);
    expect((await emulator.call("GET", `${docs(elsewhere)}/${guid}`, undefined, other)).body).toEqual({ detail: "Document not found" });
    // A Document is only reachable under its own Context.
    expect((await emulator.call("GET", `${docs(faq)}/${guid}`)).body).toEqual({ detail: "Document not found" });
    expect((await emulator.call("GET", `${docs()}/${guid}`)).body.content).toBe("mine");
  });

  it("answers 400 for malformed UUIDs in the path", async () => {
    const badContext = await emulator.call("GET", "/v1/contexts/not-a-uuid/documents");
    expect(badContext.status).toBe(400);
    expect(badContext.body.detail[0].loc).toEqual(["path", "contextGuid"]);
    const badGuid = await emulator.call("GET", `${docs()}/nope`);
    expect(badGuid.status).toBe(400);
    expect(badGuid.body.detail[0].loc).toEqual(["path", "guid"]);
  });
});

describe("splitText", () => {
  it("keeps short text whole and gives nothing for empty text", () => {
    expect(splitText("short", { chunkSize: 10, chunkOverlap: 0 })).toEqual(["short"]);
    expect(splitText("", { chunkSize: 10, chunkOverlap: 0 })).toEqual([]);
  });

  it("prefers paragraph, then line, then word boundaries, and hard-cuts only without any", () => {
    expect(splitText("aaa bbb\nccc\n\nddd eee", { chunkSize: 14, chunkOverlap: 0 })).toEqual(["aaa bbb\nccc\n\n", "ddd eee"]);
    expect(splitText("aaa bbb\nccc ddd", { chunkSize: 14, chunkOverlap: 0 })).toEqual(["aaa bbb\n", "ccc ddd"]);
    expect(splitText("aaa bbb ccc", { chunkSize: 9, chunkOverlap: 0 })).toEqual(["aaa bbb ", "ccc"]);
    expect(splitText("abcdefghij", { chunkSize: 4, chunkOverlap: 0 })).toEqual(["abcd", "efgh", "ij"]);
  });

  it("starts each chunk `chunkOverlap` characters before the previous one ended", () => {
    expect(splitText("abcdefghij", { chunkSize: 4, chunkOverlap: 2 })).toEqual(["abcd", "cdef", "efgh", "ghij"]);
    const text = prose(300);
    const chunks = splitText(text, { chunkSize: 200, chunkOverlap: 50 });
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.startsWith(chunks[i - 1]!.slice(-50))).toBe(true);
    expect(chunks.every((chunk) => chunk.length <= 200)).toBe(true);
    expect(chunks.at(-1)!.endsWith("word299")).toBe(true);
  });

  it("never splits a surrogate pair on a hard cut", () => {
    const chunks = splitText("ab😀cd", { chunkSize: 3, chunkOverlap: 0 });
    expect(chunks).toEqual(["ab", "😀c", "d"]);
  });

  it("validates the wire configuration", () => {
    expect(parseSplitterConfig({ chunk_size: 500 })).toEqual({ chunkSize: 500, chunkOverlap: 0 });
    expect(parseSplitterConfig({ chunk_size: 500, chunk_overlap: 499, extra: true })).toEqual({ chunkSize: 500, chunkOverlap: 499 });
    for (const bad of [
      {},
      { chunk_size: 0 },
      { chunk_size: 1.5 },
      { chunk_size: "10" },
      { chunk_size: 10, chunk_overlap: 10 },
      { chunk_size: 10, chunk_overlap: -1 },
    ]) {
      expect(() => parseSplitterConfig(bad), JSON.stringify(bad)).toThrow("invalid splitter configuration");
    }
  });
});
