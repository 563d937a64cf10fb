import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Store, buildServer, loadFixtures } from "../../src/emulator";
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

  it("answers 401 Invalid API key for an unknown key, and writes nothing", async () => {
    for (const [method, path, body] of GUARDED) {
      const reply = await emulator.call(method, path, body, { apiKey: "gms_wrong_key" });
      expect(reply.status, `${method} ${path}`).toBe(401);
      expect(reply.body).toEqual({ detail: "Invalid API key" });
    }
    expect((await emulator.call("GET", "/v1/apps")).body.total_count).toBe(2);
  });

  it("answers 404 Not Found for an unknown route, with or without a key", async () => {
    for (const apiKey of [ACME_KEY, null]) {
      for (const [method, path] of [
        ["GET", "/v1/nothing-here"],
        ["POST", "/v1/apps/extra/segments/here"],
        ["GET", "/apps"],
        ["PATCH", "/v1/apps"],
      ] as const) {
        const reply = await emulator.call(method, path, undefined, { apiKey });
        expect(reply.status, `${method} ${path}`).toBe(404);
        expect(reply.body).toEqual({ detail: "Not Found" });
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
