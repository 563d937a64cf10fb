/**
 * `GmsClient.create`: a POST whose answer is lost is resolved by a lookup, never blindly replayed. The
 * scripted server plays the service; `findCreated` is the caller's list of matching objects.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type CreatedCandidate, LimitExceededError, UnresolvedCreateError, ValidationError, path } from "../../src/client";
import { destroyAfterReceiving, json, scriptedClients } from "./scripted-server";

const { connect } = scriptedClients();
const GUID = "6f1d0c2a-3b4e-4f5a-8b6c-7d8e9f0a1b2c";
const OTHER = "0a9b8c7d-6e5f-4a3b-9c2d-1e0f2a3b4c5d";
const Record = z.object({ guid: z.string(), name: z.string() });
const noSleep = { retryTiming: { sleep: async () => {}, random: () => 0 } };

function creating(client: Awaited<ReturnType<typeof connect>>["client"], findCreated: () => Promise<CreatedCandidate[]>) {
  return client.create({
    path: path`/apps`,
    body: { name: "support" },
    schema: Record,
    findCreated,
  });
}

const methods = (requests: { method: string; url: string }[]) => requests.map((request) => `${request.method} ${request.url}`);

describe("GmsClient.create", () => {
  it("sends one POST when the answer arrives, and claims the GUID", async () => {
    const { server, client } = await connect(json(200, { guid: GUID, name: "support" }), noSleep);
    let lookups = 0;
    await expect(creating(client, async () => (lookups++, []))).resolves.toEqual({ guid: GUID, name: "support" });
    expect(methods(server.requests)).toEqual(["POST /v1/apps"]);
    expect(lookups).toBe(0);
    expect(client.claimed.has(GUID)).toBe(true);
  });

  it("adopts the object a POST created when its answer was lost, instead of creating a second one", async () => {
    const { server, client } = await connect([destroyAfterReceiving, json(200, { guid: GUID, name: "support" })], noSleep);
    const created = await creating(client, async () => [{ guid: GUID, createdAt: new Date().toISOString() }]);
    expect(created).toEqual({ guid: GUID, name: "support" });
    expect(methods(server.requests)).toEqual(["POST /v1/apps", `GET /v1/apps/${GUID}`]);
  });

  it("sends creates a lookup could not tell apart one at a time, so a lost answer never meets a concurrent twin", async () => {
    const { server, client } = await connect(
      [destroyAfterReceiving, json(200, { guid: GUID, name: "support" }), json(200, { guid: OTHER, name: "support" })],
      noSleep,
    );
    const now = () => new Date().toISOString();
    // Both start at once with the same body; the second POST leaves only once the first create is settled.
    const [first, second] = await Promise.all([
      creating(client, async () => [{ guid: GUID, createdAt: now() }]),
      creating(client, async () => [
        { guid: GUID, createdAt: now() },
        { guid: OTHER, createdAt: now() },
      ]),
    ]);
    expect([first.guid, second.guid]).toEqual([GUID, OTHER]);
    expect(methods(server.requests)).toEqual(["POST /v1/apps", `GET /v1/apps/${GUID}`, "POST /v1/apps"]);
    expect(client.creating.size).toBe(0);
  });

  it("sends the POST again only after the lookup proved nothing was created (a 503)", async () => {
    const { server, client } = await connect([json(503, { detail: "busy" }), json(200, { guid: GUID, name: "support" })], noSleep);
    let lookups = 0;
    await expect(creating(client, async () => (lookups++, []))).resolves.toMatchObject({ guid: GUID });
    expect(methods(server.requests)).toEqual(["POST /v1/apps", "POST /v1/apps"]);
    expect(lookups).toBe(1);
  });

  it("ignores objects created before the POST was sent, and objects this client already holds", async () => {
    const { server, client } = await connect(
      [json(200, { guid: OTHER, name: "support" }), destroyAfterReceiving, json(200, { guid: GUID, name: "support" })],
      noSleep,
    );
    await creating(client, async () => []);
    const old = { guid: "11111111-2222-4333-8444-555555555555", createdAt: "2020-01-01T00:00:00.000Z" };
    const created = await creating(client, async () => [old, { guid: OTHER }, { guid: GUID, createdAt: new Date().toISOString() }]);
    expect(created.guid).toBe(GUID);
    expect(methods(server.requests).slice(1)).toEqual(["POST /v1/apps", `GET /v1/apps/${GUID}`]);
  });

  it("gives up after maxRetries + 1 POSTs that each proved to do nothing, with the count on the error", async () => {
    const { server, client } = await connect(json(502, { detail: "bad gateway" }), { ...noSleep, maxRetries: 2 });
    const error = await creating(client, async () => []).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 502, attempts: 3 });
    expect(server.requests).toHaveLength(3);
  });

  it("stops with the creation window when the lookup fails too: it may exist", async () => {
    const { server, client } = await connect(destroyAfterReceiving, noSleep);
    const before = Date.now();
    const error = await creating(client, async () => {
      throw new Error("lookup unreachable");
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnresolvedCreateError);
    const { window, message } = error as UnresolvedCreateError;
    expect(message).toMatch(/answer was lost .* looking up whether the object was created failed too \(lookup unreachable\); it may exist/);
    expect(Date.parse(window.since)).toBeLessThan(before);
    expect(Date.parse(window.until)).toBeGreaterThan(Date.now() - 60_000);
    expect(server.requests).toHaveLength(1);
  });

  it("refuses to guess when several fresh objects match", async () => {
    const { client } = await connect(destroyAfterReceiving, noSleep);
    const now = new Date().toISOString();
    const error = await creating(client, async () => [
      { guid: GUID, createdAt: now },
      { guid: OTHER, createdAt: now },
    ]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnresolvedCreateError);
    expect((error as UnresolvedCreateError).candidates).toEqual([GUID, OTHER]);
  });

  it.each([
    [400, ValidationError, {}],
    [429, LimitExceededError, {}],
  ] as const)("passes a definite %i through without a lookup", async (status, type, headers) => {
    const { server, client } = await connect(json(status, { detail: "no" }, headers), noSleep);
    let lookups = 0;
    await expect(creating(client, async () => (lookups++, []))).rejects.toBeInstanceOf(type);
    expect(lookups).toBe(0);
    expect(server.requests).toHaveLength(1);
  });
});
