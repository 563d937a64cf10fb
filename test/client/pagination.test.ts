import { describe, expect, it } from "vitest";
import { z } from "zod";
import { collect, listBare, listIgnoringPaging, paginateEnvelope, paginateUntilShort, path } from "../../src/client";
import { json, scriptedClients, type ReceivedRequest, type Step } from "./scripted-server";

const Item = z.object({ n: z.number() });
const items = (count: number) => Array.from({ length: count }, (_, n) => ({ n }));

const { connect } = scriptedClients();
const serve = (step: Step) => connect(step);

function pageOf(request: ReceivedRequest, all: unknown[]) {
  const query = new URL(request.url, "http://x").searchParams;
  const skip = Number(query.get("skip") ?? 0);
  const limit = Number(query.get("limit") ?? 100);
  return { page: all.slice(skip, skip + limit), skip, limit };
}

const queries = (received: ReceivedRequest[]) => received.map((request) => request.url);

describe("paginateEnvelope", () => {
  it("advances skip by limit while has_next_page is true", async () => {
    const all = items(25);
    const { server, client } = await serve((request, response) => {
      const { page, skip, limit } = pageOf(request, all);
      json(200, { data: page, total_count: all.length, has_next_page: skip + limit < all.length })(request, response);
    });
    const collected = await collect(paginateEnvelope(client, { path: path`/apps`, item: Item, limit: 10, query: { app: "a" } }));

    expect(collected).toEqual(all);
    expect(queries(server.requests)).toEqual([
      "/v1/apps?app=a&skip=0&limit=10",
      "/v1/apps?app=a&skip=10&limit=10",
      "/v1/apps?app=a&skip=20&limit=10",
    ]);
  });

  it("stops on an empty page that still claims a next page", async () => {
    const { server, client } = await serve(json(200, { data: [], total_count: 5, has_next_page: true }));
    expect(await collect(paginateEnvelope(client, { path: path`/apps`, item: Item }))).toEqual([]);
    expect(queries(server.requests)).toEqual(["/v1/apps?skip=0&limit=100"]);
  });

  it("fetches lazily: a consumer that stops early sends no further request", async () => {
    const { server, client } = await serve(json(200, { data: items(3), total_count: 300, has_next_page: true }));
    for await (const item of paginateEnvelope(client, { path: path`/apps`, item: Item, limit: 3 })) if (item.n === 1) break;
    expect(server.requests).toHaveLength(1);
  });
});

describe("paginateUntilShort (Model lists)", () => {
  const modelServer = (all: unknown[]) => serve((request, response) => json(200, pageOf(request, all).page)(request, response));

  it("stops on the first page shorter than limit", async () => {
    const { server, client } = await modelServer(items(25));
    expect(await collect(paginateUntilShort(client, { path: path`/models`, item: Item, limit: 10 }))).toEqual(items(25));
    expect(queries(server.requests)).toEqual(["/v1/models?skip=0&limit=10", "/v1/models?skip=10&limit=10", "/v1/models?skip=20&limit=10"]);
  });

  it("needs one empty page when the total is a multiple of limit", async () => {
    const { server, client } = await modelServer(items(20));
    expect(await collect(paginateUntilShort(client, { path: path`/models`, item: Item, limit: 10 }))).toHaveLength(20);
    expect(server.requests).toHaveLength(3);
  });

  it("refuses a limit that could never end the list", async () => {
    const { client } = await modelServer(items(1));
    await expect(collect(paginateUntilShort(client, { path: path`/models`, item: Item, limit: 0 }))).rejects.toThrow(RangeError);
  });
});

describe("listIgnoringPaging (Skill lists)", () => {
  it("makes one call, sends no paging and ignores a has_next_page that is true", async () => {
    const all = items(150);
    const { server, client } = await serve(json(200, { data: all, total_count: all.length, has_next_page: true }));
    expect(await listIgnoringPaging(client, { path: path`/skills`, item: Item })).toEqual(all);
    expect(queries(server.requests)).toEqual(["/v1/skills"]);
  });

  it("does not need total_count or has_next_page at all", async () => {
    const { client } = await serve(json(200, { data: items(2) }));
    expect(await listIgnoringPaging(client, { path: path`/skills`, item: Item })).toEqual(items(2));
  });
});

describe("listBare", () => {
  it("makes one call and returns the array", async () => {
    const { server, client } = await serve(json(200, items(4)));
    expect(await listBare(client, { path: path`/apps/${"a b"}/actions`, item: Item, query: { skip: 0, limit: 4 } })).toEqual(items(4));
    expect(queries(server.requests)).toEqual(["/v1/apps/a%20b/actions?skip=0&limit=4"]);
  });
});
