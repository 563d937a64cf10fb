import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

const withoutProvider = ({ __provider, ...rest }: Record<string, unknown>) => rest;

describe("Workflow through the dynamic-provider host", () => {
  let bed: Testbed;
  let workflow: Registration;
  let support: string;
  let sales: string;

  beforeAll(async () => {
    bed = await startTestbed();
    const apps = (await bed.api("GET", "/apps")).body.data as { name: string; guid: string }[];
    support = apps.find((app) => app.name === "Support")!.guid;
    sales = apps.find((app) => app.name === "Sales")!.guid;
    workflow = bed.capture(`new gms.Workflow("triage", { name: "Ticket triage", app: ${JSON.stringify(support)} });`)[0]!;
  });
  afterAll(() => bed?.close());

  const checked = async (inputs: Record<string, unknown>) => {
    const result = await bed.host.check(urnOf(workflow!), {}, { ...workflow!.inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };

  it("registers as gms:Workflow with a tiny __provider that requires the installed package", () => {
    expect(workflow!.type).toBe("pulumi-nodejs:dynamic/gms:Workflow");
    expect(workflow!.inputs.__provider).toContain('require("pulumi-gms/');
    expect(workflow!.secrets).toEqual([]);
  });

  it("creates, then a no-op diff costs no request, a rename updates in place, refresh shows drift, delete is idempotent", async () => {
    const inputs = await checked({});
    const created = await bed.counting(() => bed.host.create(urnOf(workflow!), inputs));
    expect(created.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/workflows"]);
    const { id, properties } = created.result;
    expect(withoutProvider(properties)).toMatchObject({ guid: id, name: "Ticket triage", app: support, slug: "ticket-triage" });
    expect(properties.createdAt).toEqual(expect.any(String));
    expect(properties.updatedAt).toEqual(expect.any(String));

    const same = await bed.counting(() => bed.host.diff(urnOf(workflow!), id, properties, inputs));
    expect(same.result).toEqual({ changes: "none", replaces: [], deleteBeforeReplace: false });
    expect(same.requests).toHaveLength(0);

    const renamed = await checked({ name: "Ticket routing" });
    expect(await bed.host.diff(urnOf(workflow!), id, properties, renamed)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
    const updated = await bed.counting(() => bed.host.update(urnOf(workflow!), id, properties, renamed));
    // The spec shows no PUT response: the Workflow is read back.
    expect(updated.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`PUT /v1/workflows/${id}`, `GET /v1/workflows/${id}`]);
    expect(updated.requests[0]!.status).toBe(200);
    expect(updated.result.properties).toMatchObject({ name: "Ticket routing", slug: "ticket-triage", app: support });
    expect((await bed.api("GET", `/workflows/${id}`)).body.name).toBe("Ticket routing");
    Object.assign(properties, updated.result.properties);

    const moved = await checked({ app: sales });
    const replace = await bed.counting(() => bed.host.diff(urnOf(workflow!), id, properties, moved));
    expect(replace.result).toEqual({ changes: "some", replaces: ["app"], deleteBeforeReplace: false });
    expect(replace.requests).toHaveLength(0);

    await bed.api("PUT", `/workflows/${id}`, { name: "Renamed out of band" });
    const refreshed = await bed.counting(() => bed.host.read(urnOf(workflow!), id, properties, renamed));
    expect(refreshed.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v1/workflows/${id}`]);
    expect(refreshed.result.id).toBe(id);
    expect(refreshed.result.properties.name).toBe("Renamed out of band");
    expect(refreshed.result.inputs).toMatchObject({ name: "Renamed out of band", app: support });
    const drift = await bed.host.diff(urnOf(workflow!), id, refreshed.result.properties, renamed);
    expect(drift).toEqual({ changes: "some", replaces: [], deleteBeforeReplace: false });

    const deleted = await bed.counting(() => bed.host.delete(urnOf(workflow!), id, refreshed.result.properties));
    expect(deleted.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([`DELETE /v1/workflows/${id} 200`]);
    expect((await bed.api("GET", `/workflows/${id}`)).status).toBe(404);
    const again = await bed.counting(() => bed.host.delete(urnOf(workflow!), id, refreshed.result.properties));
    expect(again.requests.map((r) => r.status)).toEqual([404]);
    expect((await bed.host.read(urnOf(workflow!), id, refreshed.result.properties)).id).toBe("");
  });

  it("adopts an existing Workflow by GUID, renaming it to the program; another App is a clear error", async () => {
    const existing = (await bed.api("POST", "/workflows", { name: "Legacy flow", app: support })).body;
    const inputs = await checked({ adopt: existing.guid });
    const adopted = await bed.counting(() => bed.host.create(urnOf(workflow!), inputs));
    expect(adopted.result.id).toBe(existing.guid);
    expect(adopted.requests.map((r) => r.method)).toEqual(["GET", "PUT", "GET"]);
    expect(adopted.result.properties).toMatchObject({ guid: existing.guid, name: "Ticket triage", slug: "legacy-flow" });
    expect((await bed.api("GET", `/workflows/${existing.guid}`)).body.name).toBe("Ticket triage");

    const untouched = await checked({ adopt: existing.guid });
    const noop = await bed.counting(() => bed.host.create(urnOf(workflow!), untouched));
    expect(noop.requests.map((r) => r.method)).toEqual(["GET"]);
  });

  it("refuses to adopt a Workflow of another App, and explains a missing App on create", async () => {
    const elsewhere = (await bed.api("POST", "/workflows", { name: "Ticket triage", app: sales })).body;
    const inputs = await checked({ adopt: elsewhere.guid });
    await expect(bed.host.create(urnOf(workflow!), inputs)).rejects.toThrow(
      new RegExp(`Cannot adopt Workflow ${elsewhere.guid}: app differs from the program and cannot be changed in place`),
    );
    expect((await bed.api("GET", `/workflows/${elsewhere.guid}`)).body.app).toBe(sales);

    const missing = "00000000-0000-4000-8000-000000000000";
    const orphan = await checked({ app: missing });
    await expect(bed.host.create(urnOf(workflow!), orphan)).rejects.toThrow(
      `Cannot create Workflow "Ticket triage": App ${missing} does not exist in the workspace (or was deleted); set app to the GUID of an existing App`,
    );
  });

  it("reports bad input in check, naming the field, before any request", async () => {
    const bad = await bed.counting(() =>
      bed.host.check(urnOf(workflow!), {}, { ...workflow!.inputs, name: "", app: "support", blocks: [] }),
    );
    expect(bad.requests).toHaveLength(0);
    expect(bad.result.failures.map((f) => f.property).sort()).toEqual(["app", "blocks", "name"]);
    expect(bad.result.failures.find((f) => f.property === "app")!.reason).toBe("must be a UUID");
    const missing = await bed.host.check(urnOf(workflow!), {}, { __provider: workflow!.inputs.__provider });
    expect(missing.failures).toEqual([
      { property: "name", reason: "name is required" },
      { property: "app", reason: "app is required" },
    ]);
  });

  it("lets unknown values through check and diff during preview", async () => {
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    const result = await bed.host.check(urnOf(workflow!), {}, { ...workflow!.inputs, app: unknown });
    expect(result.failures).toEqual([]);
    const diff = await bed.host.diff(urnOf(workflow!), "x", { name: "Ticket triage", app: support }, result.inputs);
    expect(diff).toEqual({ changes: "some", replaces: ["app"], deleteBeforeReplace: false });
  });
});
