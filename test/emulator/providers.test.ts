import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ACME_KEY, MISSING_GUID, OTHER_KEY, TEST_FIXTURES, createTestEmulator } from "./harness";

const SECRET = "sk-provider-secret-4242";
const PROVIDER_KEYS = ["created_at", "created_by_id", "default", "guid", "last_updated_by_id", "name", "nickname", "updated_at", "url"];

describe("providers routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  beforeEach(() => {
    emulator = createTestEmulator();
  });
  afterEach(() => emulator.close());

  /** The response text exactly as the server sent it, to search for the credential. */
  const rawText = async (method: "GET" | "POST" | "PUT" | "DELETE", url: string, payload?: object) =>
    (await emulator.server.inject({ method, url, headers: { authorization: `Bearer ${ACME_KEY}` }, ...(payload ? { payload } : {}) })).body;

  it("creates a connection named after `name`, or after its provider type, without the key", async () => {
    const named = await emulator.call("POST", "/v1/providers", {
      provider: "openai",
      key: SECRET,
      name: "Main OpenAI",
      url: "https://api.example.com/v1",
      default: true,
    });
    expect(named.status).toBe(200);
    expect(Object.keys(named.body).sort()).toEqual(PROVIDER_KEYS);
    expect(named.body).toMatchObject({
      name: "Main OpenAI",
      nickname: "Main OpenAI",
      url: "https://api.example.com/v1",
      default: true,
      last_updated_by_id: null,
    });
    expect(named.body.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(named.body.created_at)).not.toBeNaN();

    const unnamed = await emulator.call("POST", "/v1/providers/", {
      provider: "anthropic",
      key: SECRET,
      name: null,
      default: null,
      url: null,
    });
    expect(unnamed.status).toBe(200);
    expect(unnamed.body).toMatchObject({ name: null, nickname: "anthropic", url: null, default: false });
    const bare = await emulator.call("POST", "/v1/providers", {
      provider: "ollama",
      key: SECRET,
      url: "http://127.0.0.1:11434",
      metadata: [{ name: "region" }, { name: "tier", value: 2 }],
    });
    expect(bare.body).toMatchObject({ name: null, nickname: "ollama", url: "http://127.0.0.1:11434", default: false });
  });

  it("never returns the key from any Provider route", async () => {
    const created = await rawText("POST", "/v1/providers", { provider: "openai", key: SECRET, model: "gpt-4o" });
    const { guid } = JSON.parse(created);
    const texts = [
      created,
      await rawText("GET", "/v1/providers"),
      await rawText("GET", `/v1/providers/${guid}`),
      await rawText("PUT", `/v1/providers/${guid}`, { nickname: "renamed", key: `${SECRET}-new` }),
      await rawText("POST", "/v1/providers", { provider: "nope", key: SECRET }),
      await rawText("POST", "/v1/providers", { provider: "openai", key: SECRET, url: "not a url" }),
      await rawText("POST", "/v1/providers", { provider: "openai", key: SECRET, providerId: 1 }),
      await rawText("DELETE", `/v1/providers/${guid}`),
    ];
    expect(texts[0]).toContain(guid);
    for (const text of texts) expect(text).not.toContain(SECRET);
  });

  it("rejects an unknown provider type with 400 `Invalid provider`", async () => {
    const reply = await emulator.call("POST", "/v1/providers", { provider: "nope", key: SECRET });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ detail: "Invalid provider 'nope'" });
    expect((await emulator.call("GET", "/v1/providers")).body).toEqual([]);
  });

  it("accepts a provider type in any case and answers it as the catalog writes it", async () => {
    const mixed = await emulator.call("POST", "/v1/providers", { provider: "OpenAI", key: SECRET, model: "gpt-4o" });
    expect(mixed.status).toBe(200);
    expect(mixed.body).toMatchObject({ name: null, nickname: "openai" });
    const upper = await emulator.call("POST", "/v1/providers", { provider: "ANTHROPIC", key: SECRET });
    expect(upper.body.nickname).toBe("anthropic");
    // Stored as the catalog type: its initial Model and the stored record say so.
    expect((await emulator.call("GET", "/v1/models")).body[0]).toMatchObject({ provider_name: "openai", provider_guid: mixed.body.guid });
    const [record] = emulator.store.providers.list(emulator.store.workspaces.authenticate(ACME_KEY)!);
    expect(record!.provider).toBe("openai");
    const unknown = await emulator.call("POST", "/v1/providers", { provider: "OpenAIX", key: SECRET });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ detail: "Invalid provider 'OpenAIX'" });
  });

  it("refuses `providerId` and tells to use `provider`", async () => {
    const reply = await emulator.call("POST", "/v1/providers", { provider: "openai", key: SECRET, providerId: 1 });
    expect(reply.status).toBe(400);
    expect(reply.body.detail[0]).toMatchObject({ loc: ["body", "providerId"] });
    expect(reply.body.detail[0].msg).toMatch(/use provider/);
    expect((await emulator.call("GET", "/v1/providers")).body).toEqual([]);
  });

  it("answers 400 for missing or empty fields and malformed URLs", async () => {
    for (const body of [
      { key: SECRET },
      { provider: "openai" },
      { provider: "openai", key: "" },
      { provider: "openai", key: SECRET, url: "not a url" },
      { provider: "openai", key: SECRET, url: "ftp://files.example.com" },
      { provider: "openai", key: SECRET, default: "yes" },
      { provider: "openai", key: SECRET, metadata: [{ value: 1 }] },
      { provider: "openai", key: SECRET, name: 7 },
    ]) {
      const reply = await emulator.call("POST", "/v1/providers", body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(Array.isArray(reply.body.detail)).toBe(true);
    }
    expect((await emulator.call("GET", "/v1/providers")).body).toEqual([]);
  });

  it("lists every connection as a bare array, ignoring skip and limit", async () => {
    for (const provider of ["openai", "anthropic", "groq"]) await emulator.call("POST", "/v1/providers", { provider, key: SECRET });
    const all = await emulator.call("GET", "/v1/providers");
    expect(all.status).toBe(200);
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body.map((connection: { nickname: string }) => connection.nickname)).toEqual(["openai", "anthropic", "groq"]);
    expect((await emulator.call("GET", "/v1/providers?skip=1&limit=1")).body).toHaveLength(3);
  });

  it("updates nickname and default only; key, url, name and metadata are ignored", async () => {
    const { body: created } = await emulator.call("POST", "/v1/providers", {
      provider: "openai",
      key: SECRET,
      name: "Orig",
      url: "https://a.example.com",
    });
    const updated = await emulator.call("PUT", `/v1/providers/${created.guid}`, {
      nickname: "Renamed",
      default: true,
      name: "Other name",
      url: "https://b.example.com",
      key: "sk-other",
      metadata: [{ name: "x", value: "y" }],
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      guid: created.guid,
      name: "Orig",
      nickname: "Renamed",
      url: "https://a.example.com",
      default: true,
    });
    expect(updated.body.last_updated_by_id).toBe(created.created_by_id);
    expect((await emulator.call("GET", `/v1/providers/${created.guid}`)).body).toEqual(updated.body);

    // `default` is optional and stays as it was when left out.
    const again = await emulator.call("PUT", `/v1/providers/${created.guid}`, { nickname: "Again" });
    expect(again.body).toMatchObject({ nickname: "Again", default: true });
    expect((await emulator.call("PUT", `/v1/providers/${created.guid}`, { default: false })).status).toBe(400);
    expect((await emulator.call("PUT", `/v1/providers/${created.guid}`, { nickname: "" })).status).toBe(400);
  });

  it("creates the initial Model given as `model`, linked to the connection", async () => {
    const { body: connection } = await emulator.call("POST", "/v1/providers", {
      provider: "anthropic",
      key: SECRET,
      model: "claude-3-5-sonnet",
    });
    const models = await emulator.call("GET", "/v1/models");
    expect(models.body).toHaveLength(1);
    expect(models.body[0]).toMatchObject({
      llm: "claude-3-5-sonnet",
      provider_name: "anthropic",
      provider_guid: connection.guid,
      default: false,
    });
  });

  it("deletes: answers the message, deletes its own Model, un-links the others, then 404", async () => {
    const { body: connection } = await emulator.call("POST", "/v1/providers", { provider: "openai", key: SECRET, model: "gpt-4o" });
    const { body: linked } = await emulator.call("POST", "/v1/models", { llm: "gpt-4o-mini", provider: "openai", key: SECRET });
    const [own] = (await emulator.call("GET", "/v1/models")).body;
    expect((await emulator.call("GET", `/v1/models/${linked.guid}`)).body.provider_guid).toBe(connection.guid);

    const deleted = await emulator.call("DELETE", `/v1/providers/${connection.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Model provider ${connection.guid} deleted` });

    expect((await emulator.call("GET", `/v1/models/${own.guid}`)).status).toBe(404);
    const survivor = await emulator.call("GET", `/v1/models/${linked.guid}`);
    expect(survivor.status).toBe(200);
    expect(survivor.body).toMatchObject({ llm: "gpt-4o-mini", provider_name: "openai", provider_guid: null });

    for (const [method, body] of [["GET"], ["PUT", { nickname: "x" }], ["DELETE"]] as const) {
      const reply = await emulator.call(method, `/v1/providers/${connection.guid}`, body);
      expect(reply.status, method).toBe(404);
      expect(reply.body).toEqual({ detail: "Provider not found" });
    }
    expect((await emulator.call("GET", "/v1/providers")).body).toEqual([]);
  });

  it("creates the connection and its Model together or not at all", async () => {
    const limited = createTestEmulator({
      ...TEST_FIXTURES,
      workspaces: [{ name: "Tight", slug: "tight", apiKey: "gms_tight_key", limits: { models: 0 } }],
    });
    try {
      const refused = await limited.call(
        "POST",
        "/v1/providers",
        { provider: "openai", key: SECRET, model: "gpt-4o" },
        { apiKey: "gms_tight_key" },
      );
      expect(refused.status).toBe(429);
      expect((await limited.call("GET", "/v1/providers", undefined, { apiKey: "gms_tight_key" })).body).toEqual([]);
      const plain = await limited.call("POST", "/v1/providers", { provider: "openai", key: SECRET }, { apiKey: "gms_tight_key" });
      expect(plain.status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it("answers 429 once the workspace Provider allowance is used up", async () => {
    const limited = createTestEmulator({
      workspaces: [{ name: "Tight", slug: "tight", apiKey: "gms_tight_key", limits: { providers: 1 } }],
    });
    try {
      expect((await limited.call("POST", "/v1/providers", { provider: "openai", key: SECRET }, { apiKey: "gms_tight_key" })).status).toBe(
        200,
      );
      const refused = await limited.call("POST", "/v1/providers", { provider: "groq", key: SECRET }, { apiKey: "gms_tight_key" });
      expect(refused.status).toBe(429);
      expect(refused.body.detail).toMatch(/Provider limit reached/);
    } finally {
      await limited.close();
    }
  });

  it("scopes connections to the workspace of the key", async () => {
    const { body: theirs } = await emulator.call("POST", "/v1/providers", { provider: "openai", key: SECRET }, { apiKey: OTHER_KEY });
    expect((await emulator.call("GET", `/v1/providers/${theirs.guid}`)).status).toBe(404);
    expect((await emulator.call("PUT", `/v1/providers/${theirs.guid}`, { nickname: "mine" })).status).toBe(404);
    expect((await emulator.call("DELETE", `/v1/providers/${theirs.guid}`)).status).toBe(404);
    expect((await emulator.call("GET", "/v1/providers")).body).toEqual([]);
    expect((await emulator.call("GET", `/v1/providers/${theirs.guid}`, undefined, { apiKey: OTHER_KEY })).body.nickname).toBe("openai");
  });

  it("answers 400 for a malformed UUID and 404 for an unknown one", async () => {
    const malformed = await emulator.call("GET", "/v1/providers/not-a-uuid");
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail[0]).toMatchObject({ loc: ["path", "guid"] });
    expect((await emulator.call("GET", `/v1/providers/${MISSING_GUID}`)).body).toEqual({ detail: "Provider not found" });
  });

  it("lists records with id, guid, name and nickname for other stores (store.providers.list)", async () => {
    const { body } = await emulator.call("POST", "/v1/providers", { provider: "mistral", key: SECRET, name: "EU" });
    const caller = emulator.store.workspaces.authenticate(ACME_KEY)!;
    const [record] = emulator.store.providers.list(caller);
    expect(record).toMatchObject({ guid: body.guid, name: "EU", nickname: "EU", provider: "mistral" });
    expect(record!.id).toEqual(expect.any(Number));
    expect(JSON.stringify(record)).not.toContain(SECRET);
    expect(emulator.store.providers.list(emulator.store.workspaces.authenticate(OTHER_KEY)!)).toEqual([]);
  });
});
