import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GmsClient } from "../../src/client";
import { datasetKind } from "../../src/resources/dataset";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

const withoutProvider = ({ __provider, ...rest }: Record<string, unknown>) => rest;
const MISSING = "00000000-0000-4000-8000-000000000000";

describe("Dataset through the dynamic-provider host", () => {
  let bed: Testbed;
  let dataset: Registration;
  let loose: Registration;
  let support: string;
  let sales: string;
  let d1: string;
  let d2: string;
  let d3: string;

  /** The Data GUIDs the Dataset's Items link to, in Item order, and the Items' own GUIDs. */
  const itemsOf = async (guid: string) => {
    const items = (await bed.api("GET", `/datasets/${guid}/items`)).body.data as { guid: string; data: string }[];
    return { data: items.map((item) => item.data), items: items.map((item) => item.guid) };
  };

  beforeAll(async () => {
    bed = await startTestbed();
    const apps = (await bed.api("GET", "/apps")).body.data as { name: string; guid: string }[];
    support = apps.find((app) => app.name === "Support")!.guid;
    sales = apps.find((app) => app.name === "Sales")!.guid;
    const summarize = ((await bed.api("GET", `/apps/${support}/actions`)).body as { name: string; guid: string }[]).find(
      (a) => a.name === "Summarize",
    )!.guid;
    const record = async (input: string, output: string) =>
      (await bed.api("POST", "/data", { action: summarize, app: support, input, output })).body.guid as string;
    d1 = await record("The printer is on fire", "Hardware incident");
    d2 = await record("I forgot my password", "Account access");
    d3 = await record("Invoice is wrong", "Billing");
    const registrations = bed.capture(`
      new gms.Dataset("golden", { name: "Golden set", description: "reviewed answers", app: ${JSON.stringify(support)}, data: ${JSON.stringify([d1, d2])} });
      new gms.Dataset("loose", { name: "Curated elsewhere", app: ${JSON.stringify(support)} });
    `);
    dataset = registrations.find((registration) => registration.name === "golden")!;
    loose = registrations.find((registration) => registration.name === "loose")!;
  });
  afterAll(() => bed?.close());

  const checked = async (inputs: Record<string, unknown>, registration = dataset) => {
    const result = await bed.host.check(urnOf(registration!), {}, { ...registration!.inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };

  it("registers as gms:Dataset with a tiny __provider that requires the installed package", () => {
    expect(dataset!.type).toBe("pulumi-nodejs:dynamic/gms:Dataset");
    expect(dataset!.inputs.__provider).toContain('require("pulumi-gms/');
    expect(dataset!.secrets).toEqual([]);
  });

  it("creates with Items, then a no-op diff costs no request, each field updates in place, refresh shows drift, delete is idempotent", async () => {
    const inputs = await checked({});
    const created = await bed.counting(() => bed.host.create(urnOf(dataset!), inputs));
    const { id, properties } = created.result;
    // Datasets carry no creation time: the matching ones are listed first, so a lost answer can tell the new one apart.
    expect(created.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /v1/datasets/app/${support}`,
      "POST /v1/datasets",
      `GET /v1/datasets/${id}/data`,
    ]);
    expect(withoutProvider(properties)).toEqual({
      guid: id,
      name: "Golden set",
      description: "reviewed answers",
      app: support,
      data: [d1, d2],
    });
    expect((await itemsOf(id)).data).toEqual([d1, d2]);

    const same = await bed.counting(() => bed.host.diff(urnOf(dataset!), id, properties, inputs));
    expect(same.result).toEqual({ changes: "none", replaces: [], deleteBeforeReplace: false });
    expect(same.requests).toHaveLength(0);

    const wire = { name: "name", description: "description" } as const;
    for (const [field, value] of [
      ["name", "Golden set v2"],
      ["description", null],
    ] as const) {
      const before = await itemsOf(id);
      const news = await checked({ ...withoutProvider(properties), [field]: value });
      expect(await bed.host.diff(urnOf(dataset!), id, properties, news)).toEqual({
        changes: "some",
        replaces: [],
        deleteBeforeReplace: false,
      });
      const updated = await bed.counting(() => bed.host.update(urnOf(dataset!), id, properties, news));
      // The spec shows no PUT response: the Dataset is read back (the record and the Data records its Items copy).
      expect(updated.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        `PUT /v1/datasets/${id}`,
        `GET /v1/datasets/${id}`,
        `GET /v1/datasets/${id}/data`,
      ]);
      expect(updated.result.properties[field]).toEqual(value);
      expect((await bed.api("GET", `/datasets/${id}`)).body[wire[field]]).toEqual(value);
      // The declared records travel with every PUT (a PUT without datapoints may empty the Dataset on the
      // real service), so the Items still copy the same records.
      const after = await itemsOf(id);
      expect(after.data).toEqual(before.data);
      expect(after.items).not.toEqual(before.items);
      Object.assign(properties, updated.result.properties);
    }

    const swapped = await checked({ ...withoutProvider(properties), data: [d2, d3] });
    expect(await bed.host.diff(urnOf(dataset!), id, properties, swapped)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
    const rewritten = await bed.counting(() => bed.host.update(urnOf(dataset!), id, properties, swapped));
    // The Dataset read back shows which records the Items copy.
    expect(rewritten.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `PUT /v1/datasets/${id}`,
      `GET /v1/datasets/${id}`,
      `GET /v1/datasets/${id}/data`,
    ]);
    expect(rewritten.result.properties.data).toEqual([d2, d3]);
    expect((await itemsOf(id)).data).toEqual([d2, d3]);
    Object.assign(properties, rewritten.result.properties);

    // The same records in another order: nothing to send, the program's order is stored, and it stays.
    const itemsBefore = (await itemsOf(id)).items;
    const reordered = await checked({ ...withoutProvider(properties), data: [d3, d2] });
    const reorder = await bed.counting(() => bed.host.update(urnOf(dataset!), id, properties, reordered));
    expect(reorder.requests).toHaveLength(0);
    expect(reorder.result.properties.data).toEqual([d3, d2]);
    expect((await itemsOf(id)).items).toEqual(itemsBefore);
    Object.assign(properties, reorder.result.properties);
    const kept = await bed.counting(() => bed.host.read(urnOf(dataset!), id, properties, reordered));
    expect(kept.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v1/datasets/${id}`, `GET /v1/datasets/${id}/data`]);
    expect(kept.result.properties.data).toEqual([d3, d2]);
    expect(await bed.host.diff(urnOf(dataset!), id, kept.result.properties, reordered)).toEqual({
      changes: "none",
      replaces: [],
      deleteBeforeReplace: false,
    });

    const moved = await checked({ ...withoutProvider(properties), app: sales });
    const replace = await bed.counting(() => bed.host.diff(urnOf(dataset!), id, properties, moved));
    expect(replace.result).toEqual({ changes: "some", replaces: ["app"], deleteBeforeReplace: false });
    expect(replace.requests).toHaveLength(0);

    await bed.api("PUT", `/datasets/${id}`, { name: "Renamed out of band", datapoints: [d1] });
    const refreshed = await bed.host.read(urnOf(dataset!), id, properties, reordered);
    expect(refreshed.id).toBe(id);
    expect(refreshed.properties).toMatchObject({ name: "Renamed out of band", data: [d1] });
    expect(refreshed.inputs).toMatchObject({ name: "Renamed out of band", data: [d1], app: support, description: null });
    expect(await bed.host.diff(urnOf(dataset!), id, refreshed.properties, reordered)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });

    const deleted = await bed.counting(() => bed.host.delete(urnOf(dataset!), id, refreshed.properties));
    expect(deleted.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([`DELETE /v1/datasets/${id} 200`]);
    expect((await bed.api("GET", `/datasets/${id}`)).status).toBe(404);
    const again = await bed.counting(() => bed.host.delete(urnOf(dataset!), id, refreshed.properties));
    expect(again.requests.map((r) => r.status)).toEqual([404]);
    expect((await bed.host.read(urnOf(dataset!), id, refreshed.properties)).id).toBe("");
  });

  it("leaves the Items alone when the program does not declare data", async () => {
    const inputs = await checked({}, loose);
    const created = await bed.counting(() => bed.host.create(urnOf(loose!), inputs));
    expect(created.requests.map((r) => r.method)).toEqual(["GET", "POST"]);
    const { id, properties } = created.result;
    expect(withoutProvider(properties)).toEqual({ guid: id, name: "Curated elsewhere", description: null, app: support, data: [] });

    await bed.api("PUT", `/datasets/${id}`, { datapoints: [d3] });
    const refreshed = await bed.host.read(urnOf(loose!), id, properties, inputs);
    expect(refreshed.properties.data).toEqual([d3]);
    expect(await bed.host.diff(urnOf(loose!), id, refreshed.properties, inputs)).toEqual({
      changes: "none",
      replaces: [],
      deleteBeforeReplace: false,
    });
    const renamed = await checked({ name: "Curated by hand" }, loose);
    const updated = await bed.counting(() => bed.host.update(urnOf(loose!), id, refreshed.properties, renamed));
    // Read back: the spec shows no PUT response.
    expect(updated.requests.map((r) => r.method)).toEqual(["PUT", "GET", "GET"]);
    expect(updated.result.properties.data).toEqual([d3]);
    expect((await itemsOf(id)).data).toEqual([d3]);
    await bed.host.delete(urnOf(loose!), id, updated.result.properties);
  });

  it("names Data GUIDs the service cannot resolve, and leaves no Dataset behind on create", async () => {
    const before = (await bed.api("GET", "/datasets")).body.total_count;
    const unresolvable = await checked({ data: [d1, MISSING] });
    const refused = await bed.counting(() => bed.host.create(urnOf(dataset!), unresolvable).catch((error: Error) => error));
    expect((refused.result as Error).message).toBe(
      `Cannot create Dataset "Golden set": data lists a Data record the service could not find in the workspace (${MISSING}), so no Item copies it. ` +
        "Remove it from data, or create the Data record first. The Dataset it had created (" +
        refused.requests[2]!.path.split("/")[3] +
        ") was deleted again.",
    );
    expect(refused.requests.map((r) => r.method)).toEqual(["GET", "POST", "GET", "DELETE"]);
    expect((await bed.api("GET", "/datasets")).body.total_count).toBe(before);

    const created = await bed.host.create(urnOf(dataset!), await checked({}));
    const doomed = (
      await bed.api("POST", "/data", { action: (await bed.api("GET", `/apps/${support}/actions`)).body[0].guid, input: "x", output: "y" })
    ).body.guid;
    await bed.api("DELETE", `/data/${doomed}`);
    const stale = await checked({ name: "Golden set v2", data: [d1, doomed] });
    await expect(bed.host.update(urnOf(dataset!), created.id, created.properties, stale)).rejects.toThrow(
      `Dataset "Golden set v2" (${created.id}) was updated, but data lists a Data record the service could not find in the workspace (${doomed})`,
    );
    expect((await itemsOf(created.id)).data).toEqual([d1]);
    await expect(bed.host.create(urnOf(dataset!), await checked({ app: MISSING, data: [] }))).rejects.toThrow(
      `Cannot create Dataset "Golden set": App ${MISSING} does not exist in the workspace (or was deleted); set app to the GUID of an existing App, or null`,
    );
    await bed.host.delete(urnOf(dataset!), created.id, created.properties);
  });

  it("adopts an existing Dataset by GUID and updates it to the program; another App is a clear error", async () => {
    const declared = await checked({ data: [d1, d2] });
    const existing = (await bed.api("POST", "/datasets", { name: "Legacy", app: support, data: [d3] })).body;
    const adopted = await bed.counting(() => bed.host.create(urnOf(dataset!), { ...declared, adopt: existing.guid }));
    expect(adopted.result.id).toBe(existing.guid);
    expect(adopted.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /v1/datasets/${existing.guid}`,
      `GET /v1/datasets/${existing.guid}/data`,
      `PUT /v1/datasets/${existing.guid}`,
      `GET /v1/datasets/${existing.guid}`,
      `GET /v1/datasets/${existing.guid}/data`,
    ]);
    expect(adopted.result.properties).toMatchObject({ name: "Golden set", description: "reviewed answers", data: [d1, d2] });
    expect((await bed.api("GET", `/datasets/${existing.guid}`)).body).toMatchObject({
      name: "Golden set",
      description: "reviewed answers",
      app: support,
    });
    expect((await itemsOf(existing.guid)).data).toEqual([d1, d2]);

    // The same records in another order: adopting reads and changes nothing.
    const twin = (await bed.api("POST", "/datasets", { name: "Golden set", description: "reviewed answers", app: support, data: [d2, d1] }))
      .body;
    const items = (await itemsOf(twin.guid)).items;
    const quiet = await bed.counting(() => bed.host.create(urnOf(dataset!), { ...declared, adopt: twin.guid }));
    expect(quiet.requests.map((r) => r.method)).toEqual(["GET", "GET"]);
    expect(quiet.result.properties.data).toEqual([d1, d2]);
    expect((await itemsOf(twin.guid)).items).toEqual(items);

    const elsewhere = (await bed.api("POST", "/datasets", { name: "Golden set", app: sales })).body;
    await expect(bed.host.create(urnOf(dataset!), { ...declared, adopt: elsewhere.guid })).rejects.toThrow(
      `Cannot adopt Dataset ${elsewhere.guid}: app differs from the program and cannot be changed in place`,
    );
  });

  it("finds a create's Dataset with its App's creation time as the bound of its age (a Dataset has none of its own)", async () => {
    const client = new GmsClient({ baseUrl: bed.emulator.url, apiKey: bed.emulator.apiKey });
    try {
      const app = (await bed.api("POST", "/apps", { name: "Bounded", description: null })).body as { guid: string; created_at: string };
      const made = (await bed.api("POST", "/datasets", { name: "Bounded set", description: null, app: app.guid, data: [] })).body.guid;
      const inputs = { name: "Bounded set", description: null, app: app.guid, data: [] };
      expect(await datasetKind.findCreated(client, inputs)).toEqual([{ guid: made, createdAt: undefined, notBefore: app.created_at }]);
      // Of no App, nothing bounds it.
      const loose = (await bed.api("POST", "/datasets", { name: "Unbounded set", description: null, app: null, data: [] })).body.guid;
      expect(await datasetKind.findCreated(client, { ...inputs, name: "Unbounded set", app: null })).toEqual([
        { guid: loose, createdAt: undefined },
      ]);
    } finally {
      await client.close();
    }
  });

  it("reports bad input in check, naming the field, before any request", async () => {
    const bad = await bed.counting(() =>
      bed.host.check(urnOf(dataset!), {}, { ...dataset!.inputs, name: "", app: "support", data: [d1, "row-2"], items: [] }),
    );
    expect(bad.requests).toHaveLength(0);
    expect(bad.result.failures.map((f) => f.property).sort()).toEqual(["app", "data.1", "items", "name"]);
    const twice = await bed.host.check(urnOf(dataset!), {}, { ...dataset!.inputs, data: [d1, d2, d1] });
    expect(twice.failures).toEqual([{ property: "data.2", reason: `lists Data record ${d1} more than once` }]);
    const missing = await bed.host.check(urnOf(dataset!), {}, { __provider: dataset!.inputs.__provider });
    expect(missing.failures).toEqual([{ property: "name", reason: "name is required" }]);
  });

  it("lets unknown values through check and diff during preview", async () => {
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    const result = await bed.host.check(urnOf(dataset!), {}, { ...dataset!.inputs, data: [d1, unknown] });
    expect(result.failures).toEqual([]);
    const olds = { name: "Golden set", description: "reviewed answers", app: support, data: [d1, d2] };
    expect(await bed.host.diff(urnOf(dataset!), "x", olds, result.inputs)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
  });
});
