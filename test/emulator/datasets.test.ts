import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RecordNotFoundError } from "../../src/emulator/store/errors";
import { ACME_KEY, MISSING_GUID, OTHER_KEY, TEST_FIXTURES, createTestEmulator } from "./harness";

const notFound = (detail: string) => ({ status: 404, body: { detail } });

const DATASET_KEYS = ["app", "created_by_id", "description", "guid", "name"];
const ITEM_KEYS = ["created_at", "data", "guid", "input", "output"];

describe("datasets routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let support: string;
  let summarize: string;
  /** Logs a Data record through the public route and returns its GUID. */
  const data = async (input: unknown, output: unknown, apiKey = ACME_KEY, action = summarize): Promise<string> => {
    const reply = await emulator.call("POST", "/v1/data", { action, input, output }, { apiKey });
    expect(reply.status).toBe(200);
    return reply.body.guid;
  };
  const items = async (guid: string) => (await emulator.call("GET", `/v1/datasets/${guid}/items`)).body.data;
  beforeEach(async () => {
    emulator = createTestEmulator();
    support = await emulator.appGuid("Support");
    summarize = await emulator.actionGuid("Support", "Summarize");
  });
  afterEach(() => emulator.close());

  it("creates a Dataset with exactly its five fields and one Item per resolving Data GUID", async () => {
    const first = await data({ text: "a" }, "A");
    const second = await data("b", ["B"]);
    const theirs = await data("x", "y", OTHER_KEY, await emulator.actionGuid("Elsewhere", "Echo", OTHER_KEY));
    const created = await emulator.call("POST", "/v1/datasets", {
      name: "Golden",
      description: "examples",
      app: support,
      data: [first, MISSING_GUID, "not-a-guid", theirs, second],
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(DATASET_KEYS);
    expect(created.body).toMatchObject({ name: "Golden", description: "examples", app: support, created_by_id: expect.any(String) });

    const listed = await emulator.call("GET", `/v1/datasets/${created.body.guid}/items`);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ total_count: 2, has_next_page: false });
    expect(Object.keys(listed.body.data[0]).sort()).toEqual(ITEM_KEYS);
    expect(listed.body.data.map(({ input, output, data: link }: Record<string, unknown>) => ({ input, output, data: link }))).toEqual([
      { input: { text: "a" }, output: "A", data: first },
      { input: "b", output: ["B"], data: second },
    ]);
    expect(Date.parse(listed.body.data[0].created_at)).not.toBeNaN();
  });

  it("creates without App, description or data, and refuses a missing name or an App it cannot see", async () => {
    const bare = await emulator.call("POST", "/v1/datasets/", { name: "Bare" });
    expect(bare.status).toBe(200);
    expect(bare.body).toMatchObject({ name: "Bare", description: null, app: null });
    expect((await items(bare.body.guid)).length).toBe(0);
    expect(await emulator.call("POST", "/v1/datasets", { name: "x", app: MISSING_GUID })).toMatchObject(notFound("App not found"));
    const elsewhere = await emulator.appGuid("Elsewhere", OTHER_KEY);
    expect(await emulator.call("POST", "/v1/datasets", { name: "x", app: elsewhere })).toMatchObject(notFound("App not found"));
    const noName = await emulator.call("POST", "/v1/datasets", { description: "d" });
    expect(noName.status).toBe(400);
    expect(noName.body.detail[0].loc).toEqual(["body", "name"]);
    expect((await emulator.call("POST", "/v1/datasets", { name: "x", data: "not-an-array" })).status).toBe(400);
    expect((await emulator.call("POST", "/v1/datasets", { name: "x", app: "nope" })).status).toBe(400);
  });

  it("gets a Dataset with the same five fields", async () => {
    const { body: created } = await emulator.call("POST", "/v1/datasets", { name: "Get me", app: support });
    const got = await emulator.call("GET", `/v1/datasets/${created.guid}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);
  });

  it("keeps Items as copies when the Data record later changes", async () => {
    const record = await data("before", "before out");
    const { body: dataset } = await emulator.call("POST", "/v1/datasets", { name: "Copies", data: [record] });
    expect((await emulator.call("PUT", `/v1/data/${record}`, { output: "after out" })).status).toBe(200);
    expect((await items(dataset.guid))[0]).toMatchObject({ input: "before", output: "before out", data: record });
  });

  it("updates name and description, retains the App, and keeps Items when datapoints is absent", async () => {
    const record = await data("in", "out");
    const { body: dataset } = await emulator.call("POST", "/v1/datasets", { name: "Old", description: "d", app: support, data: [record] });
    const sales = await emulator.appGuid("Sales");
    const updated = await emulator.call("PUT", `/v1/datasets/${dataset.guid}`, { name: "New", description: null, app: sales });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...dataset, name: "New", description: null, app: support });
    expect((await items(dataset.guid)).map((item: { data: string }) => item.data)).toEqual([record]);
    expect((await emulator.call("GET", `/v1/datasets/${dataset.guid}`)).body).toMatchObject({ name: "New", app: support });

    // A Dataset without App stays without one.
    const { body: loose } = await emulator.call("POST", "/v1/datasets", { name: "Loose" });
    expect((await emulator.call("PUT", `/v1/datasets/${loose.guid}`, { app: support })).body.app).toBeNull();
    expect((await emulator.call("PUT", `/v1/datasets/${loose.guid}`, {})).body).toEqual(loose);
    expect((await emulator.call("PUT", `/v1/datasets/${loose.guid}`, { name: "" })).status).toBe(400);
  });

  it("replaces every Item with datapoints; unresolvable GUIDs create none and [] empties the Dataset", async () => {
    const [a, b, c] = [await data("a", "A"), await data("b", "B"), await data("c", "C")];
    const { body: dataset } = await emulator.call("POST", "/v1/datasets", { name: "Replace", data: [a, b] });
    const before = await items(dataset.guid);
    const replaced = await emulator.call("PUT", `/v1/datasets/${dataset.guid}`, { datapoints: [c, MISSING_GUID, b] });
    expect(replaced.status).toBe(200);
    const after = await items(dataset.guid);
    expect(after.map((item: { data: string }) => item.data)).toEqual([c, b]);
    // The Item for b is a new copy, not the old one.
    expect(after.map((item: { guid: string }) => item.guid)).not.toContain(before[1].guid);
    await emulator.call("PUT", `/v1/datasets/${dataset.guid}`, { datapoints: [] });
    expect(await emulator.call("GET", `/v1/datasets/${dataset.guid}/items`)).toMatchObject({ body: { data: [], total_count: 0 } });
  });

  it("soft deletes the Dataset and its Items: a message, then 404 and gone from lists", async () => {
    const record = await data("a", "A");
    const { body: dataset } = await emulator.call("POST", "/v1/datasets", { name: "Doomed", app: support, data: [record] });
    const deleted = await emulator.call("DELETE", `/v1/datasets/${dataset.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Dataset ${dataset.guid} deleted` });
    for (const [method, path, body] of [
      ["GET", `/v1/datasets/${dataset.guid}`],
      ["PUT", `/v1/datasets/${dataset.guid}`, { name: "x" }],
      ["DELETE", `/v1/datasets/${dataset.guid}`],
      ["GET", `/v1/datasets/${dataset.guid}/items`],
      ["GET", `/v1/datasets/${dataset.guid}/data`],
    ] as const) {
      expect(await emulator.call(method, path, body), `${method} ${path}`).toMatchObject(notFound("Dataset not found"));
    }
    expect((await emulator.call("GET", "/v1/datasets")).body).toMatchObject({ data: [], total_count: 0 });
    expect((await emulator.call("GET", `/v1/datasets/app/${support}`)).body).toEqual([]);
    const live = emulator.store.db.get<{ n: number }>("SELECT count(*) AS n FROM dataset_items WHERE deleted_at IS NULL")!.n;
    expect(live).toBe(0);
  });

  it("lists Datasets in the envelope with skip and limit", async () => {
    for (const name of ["One", "Two", "Three"]) await emulator.call("POST", "/v1/datasets", { name });
    const all = await emulator.call("GET", "/v1/datasets/");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total_count: 3, has_next_page: false });
    expect(all.body.data.map((dataset: { name: string }) => dataset.name)).toEqual(["One", "Two", "Three"]);
    expect(Object.keys(all.body.data[0]).sort()).toEqual(DATASET_KEYS);
    const page = await emulator.call("GET", "/v1/datasets?skip=1&limit=1");
    expect(page.body).toMatchObject({ total_count: 3, has_next_page: true });
    expect(page.body.data.map((dataset: { name: string }) => dataset.name)).toEqual(["Two"]);
    expect((await emulator.call("GET", "/v1/datasets?limit=-1")).status).toBe(400);
  });

  it("lists an App's Datasets as a bare array with skip and limit", async () => {
    const sales = await emulator.appGuid("Sales");
    for (const [name, app] of [
      ["S1", support],
      ["Elsewhere", sales],
      ["S2", support],
      ["None", null],
    ] as const) {
      await emulator.call("POST", "/v1/datasets", { name, app });
    }
    const all = await emulator.call("GET", `/v1/datasets/app/${support}`);
    expect(all.status).toBe(200);
    expect(all.body.map((dataset: { name: string }) => dataset.name)).toEqual(["S1", "S2"]);
    expect(Object.keys(all.body[0]).sort()).toEqual(DATASET_KEYS);
    expect((await emulator.call("GET", `/v1/datasets/app/${support}?skip=1&limit=5`)).body.map((d: { name: string }) => d.name)).toEqual([
      "S2",
    ]);
    expect(await emulator.call("GET", `/v1/datasets/app/${MISSING_GUID}`)).toMatchObject(notFound("App not found"));
    const elsewhere = await emulator.appGuid("Elsewhere", OTHER_KEY);
    expect(await emulator.call("GET", `/v1/datasets/app/${elsewhere}`)).toMatchObject(notFound("App not found"));
    const malformed = await emulator.call("GET", "/v1/datasets/app/nope");
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail[0].loc).toEqual(["path", "app"]);
  });

  it("pages Items in the envelope", async () => {
    const guids = [await data("a", "A"), await data("b", "B"), await data("c", "C")];
    const { body: dataset } = await emulator.call("POST", "/v1/datasets", { name: "Paged", data: guids });
    const page = await emulator.call("GET", `/v1/datasets/${dataset.guid}/items?skip=1&limit=1`);
    expect(page.body).toMatchObject({ total_count: 3, has_next_page: true });
    expect(page.body.data.map((item: { data: string }) => item.data)).toEqual([guids[1]]);
  });

  it("lists the linked Data records that still exist as a bare array of public Data, with skip and limit", async () => {
    const [a, b, c] = [await data("a", "A"), await data("b", "B"), await data("c", "C")];
    const { body: dataset } = await emulator.call("POST", "/v1/datasets", { name: "Linked", data: [a, b, c] });
    const all = await emulator.call("GET", `/v1/datasets/${dataset.guid}/data`);
    expect(all.status).toBe(200);
    expect(all.body.map((record: { guid: string }) => record.guid)).toEqual([a, b, c]);
    expect(all.body[0]).toEqual((await emulator.call("GET", `/v1/data/${a}`)).body);

    expect((await emulator.call("DELETE", `/v1/data/${b}`)).status).toBe(200);
    expect((await emulator.call("GET", `/v1/datasets/${dataset.guid}/data`)).body.map((record: { guid: string }) => record.guid)).toEqual([
      a,
      c,
    ]);
    // The page is taken over the records that still exist.
    const page = await emulator.call("GET", `/v1/datasets/${dataset.guid}/data?skip=1&limit=1`);
    expect(page.body.map((record: { guid: string }) => record.guid)).toEqual([c]);
    // The Item itself stays.
    expect((await items(dataset.guid)).length).toBe(3);
  });

  it("scopes Datasets to the workspace of the key", async () => {
    const { body: theirs } = await emulator.call("POST", "/v1/datasets", { name: "Theirs" }, { apiKey: OTHER_KEY });
    for (const [method, path, body] of [
      ["GET", `/v1/datasets/${theirs.guid}`],
      ["PUT", `/v1/datasets/${theirs.guid}`, { name: "mine" }],
      ["DELETE", `/v1/datasets/${theirs.guid}`],
      ["GET", `/v1/datasets/${theirs.guid}/items`],
      ["GET", `/v1/datasets/${theirs.guid}/data`],
    ] as const) {
      expect(await emulator.call(method, path, body), `${method} ${path}`).toMatchObject(notFound("Dataset not found"));
    }
    expect((await emulator.call("GET", "/v1/datasets")).body.total_count).toBe(0);
    expect((await emulator.call("GET", `/v1/datasets/${theirs.guid}`, undefined, { apiKey: OTHER_KEY })).body.name).toBe("Theirs");
  });

  it("answers 400 for malformed GUIDs and 404 for unknown ones", async () => {
    for (const [method, path] of [
      ["GET", "/v1/datasets/nope"],
      ["PUT", "/v1/datasets/nope"],
      ["DELETE", "/v1/datasets/nope"],
      ["GET", "/v1/datasets/nope/items"],
      ["GET", "/v1/datasets/nope/data"],
    ] as const) {
      const reply = await emulator.call(method, path, {});
      expect(reply.status, `${method} ${path}`).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["path", "guid"]);
    }
    expect(await emulator.call("GET", `/v1/datasets/${MISSING_GUID}`)).toMatchObject(notFound("Dataset not found"));
  });

  it("resolves Datasets for other stores through store.datasets.get", async () => {
    const { body: dataset } = await emulator.call("POST", "/v1/datasets", { name: "Contract" });
    const acme = emulator.store.workspaces.authenticate(ACME_KEY)!;
    const other = emulator.store.workspaces.authenticate(OTHER_KEY)!;
    expect(emulator.store.datasets.get(acme, dataset.guid)).toMatchObject({ guid: dataset.guid, name: "Contract", id: expect.any(Number) });
    expect(() => emulator.store.datasets.get(other, dataset.guid)).toThrow(RecordNotFoundError);
    expect(() => emulator.store.datasets.get(acme, MISSING_GUID)).toThrow("Dataset not found");
  });

  it("answers 429 once the workspace Dataset allowance is used up", async () => {
    await emulator.close();
    emulator = createTestEmulator({
      ...TEST_FIXTURES,
      workspaces: TEST_FIXTURES.workspaces!.map((workspace) =>
        workspace.slug === "acme" ? { ...workspace, limits: { datasets: 1 } } : workspace,
      ),
    });
    expect((await emulator.call("POST", "/v1/datasets", { name: "First" })).status).toBe(200);
    const refused = await emulator.call("POST", "/v1/datasets", { name: "Second" });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/Dataset limit reached/);
    const { body: list } = await emulator.call("GET", "/v1/datasets");
    await emulator.call("DELETE", `/v1/datasets/${list.data[0].guid}`);
    expect((await emulator.call("POST", "/v1/datasets", { name: "Fits again" })).status).toBe(200);
  });
});
