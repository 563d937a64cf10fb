import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ACME_KEY, MISSING_GUID, OTHER_KEY, createTestEmulator } from "./harness";

const SECRET = "sk-model-secret-1717";
const PUBLIC_KEYS = [
  "created_at",
  "created_by_id",
  "default",
  "deleted",
  "guid",
  "last_updated_by_id",
  "llm",
  "provider_guid",
  "provider_name",
  "updated_at",
];
const CREATED_KEYS = [
  "createdAt",
  "createdById",
  "default",
  "deleted",
  "guid",
  "id",
  "key",
  "lastUpdatedById",
  "llm",
  "providerId",
  "updatedAt",
  "url",
  "workspaceId",
  "workspaceModelProviderId",
];

describe("models routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  beforeEach(() => {
    emulator = createTestEmulator();
  });
  afterEach(() => emulator.close());

  const acme = () => emulator.store.workspaces.authenticate(ACME_KEY)!;
  const rawText = async (url: string) =>
    (await emulator.server.inject({ method: "GET", url, headers: { authorization: `Bearer ${ACME_KEY}` } })).body;

  it("answers create with the persistence-shaped record, echoing the submitted key (the spec's quirk)", async () => {
    const created = await emulator.call("POST", "/v1/models", { llm: "claude-3-haiku", provider: "anthropic", key: SECRET });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(CREATED_KEYS);
    expect(created.body).toMatchObject({
      llm: "claude-3-haiku",
      key: SECRET,
      workspaceId: acme().workspaceId,
      workspaceModelProviderId: null,
      providerId: 2,
      url: null,
      default: false,
      deleted: false,
      createdById: acme().userId,
      lastUpdatedById: null,
    });
    expect(created.body.id).toEqual(expect.any(Number));
    expect(Date.parse(created.body.createdAt)).not.toBeNaN();
    // The catalog numbers types from 1 in order: openai is 1, ollama (the last) is 11.
    expect((await emulator.call("POST", "/v1/models", { llm: "gpt-4o", provider: "openai", key: SECRET })).body.providerId).toBe(1);
    expect(
      (
        await emulator.call("POST", "/v1/models/", {
          llm: "llama3",
          provider: "ollama",
          key: SECRET,
          url: "http://localhost:11434",
          default: true,
        })
      ).body,
    ).toMatchObject({
      providerId: 11,
      url: "http://localhost:11434",
      default: true,
    });
  });

  it("never returns the key from GET list or detail", async () => {
    const { body: created } = await emulator.call("POST", "/v1/models", { llm: "gpt-4o", provider: "openai", key: SECRET });
    const list = await rawText("/v1/models");
    const detail = await rawText(`/v1/models/${created.guid}`);
    expect(list).toContain(created.guid);
    expect(detail).toContain(created.guid);
    expect(list).not.toContain(SECRET);
    expect(detail).not.toContain(SECRET);
    const updated = await emulator.call("PUT", `/v1/models/${created.guid}`, { llm: "gpt-4.1" });
    expect(JSON.stringify(updated.body)).not.toContain(SECRET);
  });

  it("shows the public Model with provider type and linked connection", async () => {
    const { body: connection } = await emulator.call("POST", "/v1/providers", { provider: "openai", key: "sk-conn" });
    const { body: created } = await emulator.call("POST", "/v1/models", { llm: "gpt-4o", provider: "openai", key: SECRET });
    const detail = await emulator.call("GET", `/v1/models/${created.guid}`);
    expect(detail.status).toBe(200);
    expect(Object.keys(detail.body).sort()).toEqual(PUBLIC_KEYS);
    expect(detail.body).toMatchObject({
      guid: created.guid,
      llm: "gpt-4o",
      provider_name: "openai",
      provider_guid: connection.guid,
      default: false,
      deleted: false,
    });
    expect(detail.body.created_at).toBe(created.createdAt);
    const [record] = emulator.store.providers.list(acme());
    expect(created.workspaceModelProviderId).toBe(record!.id);
  });

  it("links to the default connection of the type, else the newest, and never to another type", async () => {
    const make = async (body: object) => (await emulator.call("POST", "/v1/providers", body)).body.guid as string;
    const linkOf = async () => {
      const { body } = await emulator.call("POST", "/v1/models", { llm: "m", provider: "openai", key: SECRET });
      return (await emulator.call("GET", `/v1/models/${body.guid}`)).body.provider_guid as string | null;
    };
    await make({ provider: "anthropic", key: "k" });
    expect(await linkOf()).toBeNull();
    await make({ provider: "openai", key: "k" });
    const newest = await make({ provider: "openai", key: "k" });
    expect(await linkOf()).toBe(newest);
    const chosen = await make({ provider: "openai", key: "k", default: true });
    const latest = await make({ provider: "openai", key: "k" });
    expect(await linkOf()).toBe(chosen);
    await emulator.call("DELETE", `/v1/providers/${chosen}`);
    expect(await linkOf()).toBe(latest);
  });

  it("accepts a provider type in any case and links as for the catalog's spelling", async () => {
    const { body: connection } = await emulator.call("POST", "/v1/providers", { provider: "openai", key: "sk-conn" });
    const created = await emulator.call("POST", "/v1/models", { llm: "gpt-4o", provider: "OpenAI", key: SECRET });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      providerId: 1,
      workspaceModelProviderId: emulator.store.providers.get(acme(), connection.guid).id,
    });
    expect((await emulator.call("GET", `/v1/models/${created.body.guid}`)).body).toMatchObject({
      provider_name: "openai",
      provider_guid: connection.guid,
    });
    expect((await emulator.call("POST", "/v1/models", { llm: "claude", provider: "ANTHROPIC", key: SECRET })).body.providerId).toBe(2);
  });

  it("accepts a Provider connection GUID as `provider`: links to that connection and takes its type", async () => {
    const make = async (body: object) => (await emulator.call("POST", "/v1/providers", body)).body.guid as string;
    const chosen = await make({ provider: "anthropic", key: "k" });
    // Neither the default nor the newest connection of its type: a GUID names exactly one.
    await make({ provider: "anthropic", key: "k", default: true });
    await make({ provider: "anthropic", key: "k" });
    const created = await emulator.call("POST", "/v1/models", { llm: "claude-3-haiku", provider: chosen, key: SECRET });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ providerId: 2, workspaceModelProviderId: emulator.store.providers.get(acme(), chosen).id });
    const detail = (await emulator.call("GET", `/v1/models/${created.body.guid}`)).body;
    expect(detail).toMatchObject({ provider_name: "anthropic", provider_guid: chosen });
    // Answered the same way as a Model made with the type name.
    const byName = (await emulator.call("POST", "/v1/models", { llm: "claude-3-haiku", provider: "anthropic", key: SECRET })).body;
    expect(Object.keys((await emulator.call("GET", `/v1/models/${byName.guid}`)).body).sort()).toEqual(Object.keys(detail).sort());
  });

  it("answers 404 `Provider not found` for a connection GUID that is unknown, deleted or another workspace's", async () => {
    const { body: gone } = await emulator.call("POST", "/v1/providers", { provider: "openai", key: "k" });
    await emulator.call("DELETE", `/v1/providers/${gone.guid}`);
    const { body: theirs } = await emulator.call("POST", "/v1/providers", { provider: "openai", key: "k" }, { apiKey: OTHER_KEY });
    for (const provider of [MISSING_GUID, gone.guid, theirs.guid]) {
      const reply = await emulator.call("POST", "/v1/models", { llm: "gpt-4o", provider, key: SECRET });
      expect(reply.status, provider).toBe(404);
      expect(reply.body).toEqual({ detail: "Provider not found" });
    }
    expect((await emulator.call("GET", "/v1/models")).body).toEqual([]);
  });

  it("answers 400 for missing fields, an unknown provider and a malformed URL", async () => {
    for (const body of [
      { provider: "openai", key: SECRET },
      { llm: "gpt-4o", key: SECRET },
      { llm: "gpt-4o", provider: "openai" },
      { llm: "gpt-4o", provider: "openai", key: "" },
      { llm: "gpt-4o", provider: "openai", key: SECRET, url: "nope" },
      { llm: "gpt-4o", provider: "openai", key: SECRET, default: "true" },
    ]) {
      const reply = await emulator.call("POST", "/v1/models", body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(reply.body)).not.toContain(SECRET);
    }
    const unknown = await emulator.call("POST", "/v1/models", { llm: "x", provider: "skynet", key: SECRET });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ detail: "Invalid provider 'skynet'" });
    expect((await emulator.call("GET", "/v1/models")).body).toEqual([]);
  });

  it("lists a bare array with skip and limit applied", async () => {
    for (const llm of ["a", "b", "c"]) await emulator.call("POST", "/v1/models", { llm, provider: "openai", key: SECRET });
    const all = await emulator.call("GET", "/v1/models");
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body.map((model: { llm: string }) => model.llm)).toEqual(["a", "b", "c"]);
    expect((await emulator.call("GET", "/v1/models?limit=2")).body.map((model: { llm: string }) => model.llm)).toEqual(["a", "b"]);
    expect((await emulator.call("GET", "/v1/models?skip=2&limit=2")).body.map((model: { llm: string }) => model.llm)).toEqual(["c"]);
    expect((await emulator.call("GET", "/v1/models?limit=-1")).status).toBe(400);
  });

  it("updates `llm` only and answers the public Model", async () => {
    const { body: created } = await emulator.call("POST", "/v1/models", { llm: "gpt-4o", provider: "openai", key: SECRET });
    const updated = await emulator.call("PUT", `/v1/models/${created.guid}`, {
      llm: "gpt-4.1",
      provider: "anthropic",
      default: true,
      key: "sk-new",
      url: "https://x.example.com",
    });
    expect(updated.status).toBe(200);
    expect(Object.keys(updated.body).sort()).toEqual(PUBLIC_KEYS);
    expect(updated.body).toMatchObject({
      llm: "gpt-4.1",
      provider_name: "openai",
      default: false,
      last_updated_by_id: created.createdById,
    });
    expect((await emulator.call("GET", `/v1/models/${created.guid}`)).body).toEqual(updated.body);
    expect((await emulator.call("PUT", `/v1/models/${created.guid}`, { default: true })).status).toBe(400);
  });

  it("soft deletes: answers the message, then 404 and gone from the list", async () => {
    const { body: created } = await emulator.call("POST", "/v1/models", { llm: "gpt-4o", provider: "openai", key: SECRET });
    const deleted = await emulator.call("DELETE", `/v1/models/${created.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Model ${created.guid} deleted` });
    for (const [method, body] of [["GET"], ["PUT", { llm: "x" }], ["DELETE"]] as const) {
      const reply = await emulator.call(method, `/v1/models/${created.guid}`, body);
      expect(reply.status, method).toBe(404);
      expect(reply.body).toEqual({ detail: "Model not found" });
    }
    expect((await emulator.call("GET", "/v1/models")).body).toEqual([]);
  });

  it("answers 429 once the workspace Model allowance is used up", async () => {
    const limited = createTestEmulator({ workspaces: [{ name: "Tight", slug: "tight", apiKey: "gms_tight_key", limits: { models: 1 } }] });
    try {
      const options = { apiKey: "gms_tight_key" };
      expect((await limited.call("POST", "/v1/models", { llm: "a", provider: "openai", key: SECRET }, options)).status).toBe(200);
      const refused = await limited.call("POST", "/v1/models", { llm: "b", provider: "openai", key: SECRET }, options);
      expect(refused.status).toBe(429);
      expect(refused.body.detail).toMatch(/Model limit reached/);
    } finally {
      await limited.close();
    }
  });

  it("scopes Models to the workspace of the key and rejects malformed UUIDs", async () => {
    const { body: theirs } = await emulator.call(
      "POST",
      "/v1/models",
      { llm: "gpt-4o", provider: "openai", key: SECRET },
      { apiKey: OTHER_KEY },
    );
    expect(theirs.workspaceId).not.toBe(acme().workspaceId);
    expect((await emulator.call("GET", `/v1/models/${theirs.guid}`)).status).toBe(404);
    expect((await emulator.call("PUT", `/v1/models/${theirs.guid}`, { llm: "x" })).status).toBe(404);
    expect((await emulator.call("DELETE", `/v1/models/${theirs.guid}`)).status).toBe(404);
    expect((await emulator.call("GET", "/v1/models")).body).toEqual([]);
    expect((await emulator.call("GET", `/v1/models/${theirs.guid}`, undefined, { apiKey: OTHER_KEY })).status).toBe(200);
    const malformed = await emulator.call("GET", "/v1/models/not-a-uuid");
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail[0]).toMatchObject({ loc: ["path", "guid"] });
    expect((await emulator.call("GET", `/v1/models/${MISSING_GUID}`)).body).toEqual({ detail: "Model not found" });
  });
});
