import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Store, buildServer, loadFixtures } from "../../src/emulator";
import { MAX_JSON_DEPTH } from "../../src/emulator/routes/json-body";
import { ACME_KEY, TEST_FIXTURES, createTestEmulator } from "./harness";

/** Authenticated routes of several kinds, each with a body it would accept. */
const GUARDED = [
  ["GET", "/v1/apps"],
  ["POST", "/v1/apps", { name: "x" }],
  ["GET", "/v1/data"],
  ["POST", "/v1/data", { action: "00000000-0000-4000-8000-000000000000", input: "i", output: "o" }],
  ["GET", "/v1/workspaces/current"],
  ["POST", "/v1/files/upload", { data: "aGk=" }],
  ["GET", "/v1/providers"],
] as const;

describe("server", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  beforeEach(() => {
    emulator = createTestEmulator();
  });
  afterEach(() => emulator.close());

  it("answers 401 Not authenticated without a bearer Authorization header", async () => {
    for (const [method, path, body] of GUARDED) {
      const reply = await emulator.call(method, path, body, { apiKey: null });
      expect(reply.status, `${method} ${path}`).toBe(401);
      expect(reply.body).toEqual({ detail: "Not authenticated" });
      expect(reply.headers["www-authenticate"]).toBe("Bearer");
    }
    const basic = await emulator.call("GET", "/v1/apps", undefined, { apiKey: null, headers: { authorization: `Basic ${ACME_KEY}` } });
    expect(basic.status).toBe(401);
    expect(basic.body).toEqual({ detail: "Not authenticated" });
  });

  it("answers a body that is not JSON as the README says: text/plain 400, other media types 415, broken JSON 400", async () => {
    const send = (contentType: string | undefined, payload: string) =>
      emulator.server.inject({
        method: "POST",
        url: "/v1/apps",
        headers: { authorization: `Bearer ${ACME_KEY}`, ...(contentType ? { "content-type": contentType } : {}) },
        payload,
      });
    const text = await send("text/plain", "Support");
    expect(text.statusCode).toBe(400);
    expect(text.json()).toEqual({
      detail: [{ loc: ["body"], msg: "Invalid input: expected object, received string", type: "invalid_type" }],
    });
    for (const [contentType, sent] of [
      ["application/x-www-form-urlencoded", "application/x-www-form-urlencoded"],
      [undefined, "a body without a Content-Type"],
    ] as const) {
      const refused = await send(contentType, "name=Support");
      expect(refused.statusCode, String(contentType)).toBe(415);
      expect(refused.json()).toEqual({ detail: `Unsupported Media Type: a request body must be application/json, not ${sent}` });
    }
    const broken = await send("application/json", "{name: Support}");
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toEqual({
      detail: "Malformed JSON body at line 1, column 2 (offset 1): expected a property name in double quotes or '}', found a letter",
    });
    expect((await emulator.call("GET", "/v1/apps")).body.total_count).toBe(2);
  });

  it("answers 401 Invalid API key for an unknown key, and writes nothing", async () => {
    for (const [method, path, body] of GUARDED) {
      const reply = await emulator.call(method, path, body, { apiKey: "gms_wrong_key" });
      expect(reply.status, `${method} ${path}`).toBe(401);
      expect(reply.body).toEqual({ detail: "Invalid API key" });
    }
    expect((await emulator.call("GET", "/v1/apps")).body.total_count).toBe(2);
  });

  it("answers an unknown route 404 naming the cause, a known path under another method 405, with or without a key", async () => {
    for (const apiKey of [ACME_KEY, null]) {
      for (const [method, path, status, detail] of [
        ["GET", "/v1/nothing-here", 404, /^Not Found: no route matches GET \/v1\/nothing-here; nearest known route: /],
        ["POST", "/v1/apps/extra/segments/here", 404, /^Not Found: no route matches POST \/v1\/apps\/extra\/segments\/here/],
        ["GET", "/apps", 404, "Not Found: /apps does not start with /v1, under which every route sits; try /v1/apps"],
        ["PATCH", "/v1/apps", 405, "Method Not Allowed: /v1/apps allows GET, HEAD, POST, not PATCH"],
      ] as const) {
        const reply = await emulator.call(method, path, undefined, { apiKey });
        expect(reply.status, `${method} ${path}`).toBe(status);
        expect(Object.keys(reply.body)).toEqual(["detail"]);
        expect(reply.body.detail).toMatch(detail);
      }
    }
  });

  it("pages lists 100 at a time by default", async () => {
    const action = await emulator.actionGuid("Support", "Summarize");
    for (let i = 0; i < 103; i++) {
      expect((await emulator.call("POST", "/v1/data", { action, input: `input ${i}`, output: "o" })).status).toBe(200);
    }
    const first = await emulator.call("GET", "/v1/data");
    expect(first.body).toMatchObject({ total_count: 103, has_next_page: true });
    expect(first.body.data).toHaveLength(100);
    expect(first.body.data[0].input).toBe("input 102");
    const rest = await emulator.call("GET", "/v1/data?skip=100");
    expect(rest.body).toMatchObject({ total_count: 103, has_next_page: false });
    expect(rest.body.data.map((data: { input: string }) => data.input)).toEqual(["input 2", "input 1", "input 0"]);
  });
});

describe("server body limit", () => {
  let store: Store;
  let server: ReturnType<typeof buildServer>;
  beforeEach(() => {
    store = new Store();
    loadFixtures(store, TEST_FIXTURES);
    server = buildServer(store, { bodyLimit: 1024 });
  });
  afterEach(async () => {
    await server.close();
    store.close();
  });

  const post = (url: string, payload: object) =>
    server.inject({ method: "POST", url, headers: { authorization: `Bearer ${ACME_KEY}` }, payload });

  it("answers 413 with a detail for a body over the limit, and accepts one under it", async () => {
    const big = await post("/v1/files/upload", { data: "A".repeat(2000) });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toEqual({ detail: expect.any(String) });
    expect(store.db.get("SELECT count(*) AS n FROM files")).toEqual({ n: 0 });

    const large = await post("/v1/apps", { name: "x".repeat(1100) });
    expect(large.statusCode).toBe(413);
    expect((await post("/v1/apps", { name: "small" })).statusCode).toBe(200);
  });
});

/** A server over the test fixtures whose 500 log the test reads. */
function loggedServer(options: { logError?: (entry: string) => void } = {}) {
  const store = new Store();
  loadFixtures(store, TEST_FIXTURES);
  const logged: string[] = [];
  const server = buildServer(store, { logError: (entry) => logged.push(entry), ...options });
  const send = (method: string, url: string, payload?: string | object, headers: Record<string, string> = {}) =>
    server.inject({
      method: method as "POST",
      url,
      headers: { authorization: `Bearer ${ACME_KEY}`, "content-type": "application/json", ...headers },
      ...(payload === undefined ? {} : { payload: typeof payload === "string" ? payload : JSON.stringify(payload) }),
    });
  return {
    store,
    server,
    logged,
    send,
    async close() {
      await server.close();
      store.close();
    },
  };
}

/** `{"a": {"a": ... "leaf" ...}}`, `levels` objects deep. */
const nestedObject = (levels: number): string => `${'{"a":'.repeat(levels)}"leaf"${"}".repeat(levels)}`;

describe("server JSON nesting limit", () => {
  let emulator: ReturnType<typeof loggedServer>;
  let action: string;
  beforeEach(async () => {
    emulator = loggedServer();
    const apps = (await emulator.send("GET", "/v1/apps")).json().data;
    const support = apps.find((app: { name: string }) => app.name === "Support").guid;
    action = (await emulator.send("GET", `/v1/apps/${support}/actions`)).json()[0].guid;
  });
  afterEach(() => emulator.close());

  const dataCount = () => emulator.store.db.get<{ n: number }>("SELECT count(*) AS n FROM data")!.n;

  it("answers 400 with a detail for a body nested thousands of levels deep, storing and logging nothing", async () => {
    const before = dataCount();
    const bodies = [
      `{"action":"${action}","input":"i","output":"o","metadata":${nestedObject(5000)}}`,
      `{"action":"${action}","input":${"[".repeat(100_000)}${"]".repeat(100_000)},"output":"o"}`,
      // Malformed as well as deep: the depth is what the answer names.
      `{"action":"${action}","input":"i","output":"o","metadata":${'{"a":'.repeat(5000)}`,
    ];
    for (const body of bodies) {
      const reply = await emulator.send("POST", "/v1/data", body);
      expect(reply.statusCode).toBe(400);
      expect(reply.json()).toEqual({ detail: `JSON body nested deeper than ${MAX_JSON_DEPTH} levels` });
    }
    const app = await emulator.send("POST", "/v1/apps", `{"name":"deep","description":${"[".repeat(10_000)}${"]".repeat(10_000)}}`);
    expect(app.statusCode).toBe(400);
    expect(app.json()).toEqual({ detail: `JSON body nested deeper than ${MAX_JSON_DEPTH} levels` });
    expect(dataCount()).toBe(before);
    expect(emulator.logged).toEqual([]);
  });

  it(`accepts a legitimately nested body, up to ${MAX_JSON_DEPTH} levels counting the body itself`, async () => {
    const twenty = await emulator.send(
      "POST",
      "/v1/data",
      `{"action":"${action}","input":"i","output":${nestedObject(20)},"metadata":${nestedObject(20)}}`,
    );
    expect(twenty.statusCode).toBe(200);
    expect(twenty.json().metadata).toEqual(JSON.parse(nestedObject(20)));
    const read = await emulator.send("GET", `/v1/data/${twenty.json().guid}`);
    expect(read.json().output).toEqual(JSON.parse(nestedObject(20)));

    const atLimit = await emulator.send(
      "POST",
      "/v1/data",
      `{"action":"${action}","input":"i","output":"o","metadata":${nestedObject(MAX_JSON_DEPTH - 1)}}`,
    );
    expect(atLimit.statusCode).toBe(200);
    const overLimit = await emulator.send(
      "POST",
      "/v1/data",
      `{"action":"${action}","input":"i","output":"o","metadata":${nestedObject(MAX_JSON_DEPTH)}}`,
    );
    expect(overLimit.statusCode).toBe(400);
  });

  it("does not count brackets inside strings, escaped quotes included", async () => {
    const text = `${"[{".repeat(5000)} \\" ${"{".repeat(200)}`;
    const reply = await emulator.send("POST", "/v1/data", { action, input: text, output: "o" });
    expect(reply.statusCode).toBe(200);
    expect(reply.json().input).toBe(text);
    // Malformed JSON that is not deep still reads as malformed.
    expect((await emulator.send("POST", "/v1/data", '{"action":')).json()).toEqual({
      detail:
        "Malformed JSON body at line 1, column 11 (offset 10): expected a JSON value (object, array, string, number, true, false or null), found end of body",
    });
  });
});

describe("server error log", () => {
  let emulator: ReturnType<typeof loggedServer>;
  beforeEach(() => {
    emulator = loggedServer();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    return emulator.close();
  });

  it("logs every 500 (method, path, error, stack) without the key, the body or the query string", async () => {
    vi.spyOn(emulator.store.apps, "create").mockImplementation(() => {
      throw new TypeError("boom\nfrom the store");
    });
    const reply = await emulator.send(
      "POST",
      "/v1/apps?signature=query-secret-7c1f&expires=1",
      { name: "body-secret-93ab" },
      { "x-extra": "header-secret-51de" },
    );
    expect(reply.statusCode).toBe(500);
    expect(reply.json()).toEqual({ detail: "Internal Server Error" });
    expect(emulator.logged).toHaveLength(1);
    const [entry] = emulator.logged as [string];
    const lines = entry.trimEnd().split("\n");
    expect(lines[0]).toBe("500 POST /v1/apps TypeError: boom from the store");
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines.slice(1)) expect(line).toMatch(/^\s+at /);
    expect(entry).toMatch(/\n$/);
    for (const secret of [ACME_KEY, "Bearer", "body-secret-93ab", "query-secret-7c1f", "expires", "header-secret-51de"]) {
      expect(entry).not.toContain(secret);
    }
  });

  it("logs nothing for answers that are not 500s", async () => {
    await emulator.send("GET", "/v1/apps");
    await emulator.send("GET", "/v1/nothing-here");
    await emulator.send("POST", "/v1/apps", "{not json");
    await emulator.send("POST", "/v1/apps", {});
    await emulator.send("GET", "/v1/apps", undefined, { authorization: "Bearer wrong" });
    expect(emulator.logged).toEqual([]);
  });

  it("writes to stderr when no logError is given", async () => {
    const store = new Store();
    loadFixtures(store, TEST_FIXTURES);
    const server = buildServer(store);
    const written: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    vi.spyOn(store.apps, "list").mockImplementation(() => {
      throw new Error("list failed");
    });
    try {
      const reply = await server.inject({ method: "GET", url: "/v1/apps?skip=0", headers: { authorization: `Bearer ${ACME_KEY}` } });
      expect(reply.statusCode).toBe(500);
    } finally {
      vi.restoreAllMocks();
      await server.close();
      store.close();
    }
    expect(written.join("")).toMatch(/^500 GET \/v1\/apps Error: list failed\n\s+at /);
  });
});
