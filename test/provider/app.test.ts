import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startScriptedServer } from "../client/scripted-server";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

const withoutProvider = ({ __provider, ...rest }: Record<string, unknown>) => rest;

describe("App through the dynamic-provider host", () => {
  let bed: Testbed;
  let app: Registration;

  beforeAll(async () => {
    bed = await startTestbed();
    app = bed.capture(`new gms.App("support-bot", { name: "Support bot", description: "answers tickets" });`)[0]!;
  });
  afterAll(() => bed?.close());

  const checked = async (inputs: Record<string, unknown>) => {
    const result = await bed.host.check(urnOf(app!), {}, { ...app!.inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };

  it("registers as gms:App with a tiny __provider that requires the installed package", () => {
    expect(app!.type).toBe("pulumi-nodejs:dynamic/gms:App");
    expect(app!.inputs.__provider).toContain('require("pulumi-gms/');
  });

  it("creates, then a no-op diff costs no request, an update changes in place, refresh shows drift, delete is idempotent", async () => {
    const inputs = await checked({});
    const created = await bed.counting(() => bed.host.create(urnOf(app!), inputs));
    expect(created.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/apps"]);
    const { id, properties } = created.result;
    expect(withoutProvider(properties)).toMatchObject({
      guid: id,
      name: "Support bot",
      description: "answers tickets",
      slug: "support-bot",
    });

    const same = await bed.counting(() => bed.host.diff(urnOf(app!), id, properties, inputs));
    expect(same.result).toEqual({ changes: "none", replaces: [], deleteBeforeReplace: false });
    expect(same.requests).toHaveLength(0);

    for (const [field, value] of [
      ["name", "Support assistant"],
      ["description", null],
    ] as const) {
      const news = await checked({ [field]: value });
      const diff = await bed.host.diff(urnOf(app!), id, properties, news);
      expect(diff).toEqual({ changes: "some", replaces: [], deleteBeforeReplace: false });
      const updated = await bed.counting(() => bed.host.update(urnOf(app!), id, properties, news));
      expect(updated.requests.map((r) => r.method)).toEqual(["PUT", "GET"]);
      expect(updated.result.properties[field]).toEqual(value);
      expect((await bed.api("GET", `/apps/${id}`)).body[field]).toEqual(value);
      Object.assign(properties, updated.result.properties);
    }

    await bed.api("PUT", `/apps/${id}`, { name: "Renamed out of band" });
    const refreshed = await bed.host.read(urnOf(app!), id, properties, inputs);
    expect(refreshed.id).toBe(id);
    expect(refreshed.properties.name).toBe("Renamed out of band");
    expect(refreshed.inputs?.name).toBe("Renamed out of band");
    const drift = await bed.host.diff(urnOf(app!), id, refreshed.properties, inputs);
    expect(drift.changes).toBe("some");

    const deleted = await bed.counting(() => bed.host.delete(urnOf(app!), id, refreshed.properties));
    expect(deleted.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["DELETE 200"]);
    expect((await bed.api("GET", `/apps/${id}`)).status).toBe(404);
    await expect(bed.host.delete(urnOf(app!), id, refreshed.properties)).resolves.toBeUndefined();
    expect((await bed.host.read(urnOf(app!), id, refreshed.properties)).id).toBe("");
  });

  it("adopts an existing App by GUID and updates it to the program", async () => {
    const existing = await bed.api("POST", "/apps", { name: "Legacy", description: "made by hand" });
    const inputs = await checked({ adopt: existing.body.guid });
    const adopted = await bed.counting(() => bed.host.create(urnOf(app!), inputs));
    expect(adopted.result.id).toBe(existing.body.guid);
    expect(adopted.requests.map((r) => r.method)).toEqual(["GET", "PUT", "GET"]);
    expect((await bed.api("GET", `/apps/${existing.body.guid}`)).body).toMatchObject({
      name: "Support bot",
      description: "answers tickets",
    });
    expect((await bed.api("GET", "/apps")).body.total_count).toBe(3);

    const missing = await checked({ adopt: "00000000-0000-4000-8000-000000000000" });
    await expect(bed.host.create(urnOf(app!), missing)).rejects.toThrow(
      /Cannot adopt App 00000000-0000-4000-8000-000000000000: no such object/,
    );
  });

  it("words a refused create (the spec's 429 for an exhausted App allowance) and a refused update in the user's terms", async () => {
    const throttled = json(429, { detail: "Too many requests" }, { "retry-after": "0" });
    const limited = json(429, { detail: "App limit reached: the workspace allows 1 and uses 1" });
    const refused = json(400, { detail: [{ loc: ["body", "name"], msg: "name is taken" }] });
    const service = await startScriptedServer([throttled, throttled, throttled, throttled, limited, refused]);
    try {
      const inputs = await checked({ connection: { baseUrl: service.baseUrl, apiKey: "gms_elsewhere_key" } });
      // A rate limit (429 with Retry-After) is waited out, more times than gms:maxRetries (3); the allowance's 429 (no
      // Retry-After) then is final at once, since no wait cures it; the message counts the attempts.
      await expect(bed.host.create(urnOf(app!), inputs)).rejects.toThrow(
        'Cannot create App "Support bot": the service answered 429 App limit reached: the workspace allows 1 and uses 1 (after 5 attempts).',
      );
      expect(service.requests.map((request) => request.method)).toEqual(["POST", "POST", "POST", "POST", "POST"]);

      const id = "6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f";
      const olds = { ...inputs, guid: id, slug: "support-bot" };
      await expect(bed.host.update(urnOf(app!), id, olds, { ...inputs, name: "Taken" })).rejects.toThrow(
        `Cannot update App ${id}: the service answered 400 body.name: name is taken.`,
      );
      expect(service.requests.map((request) => `${request.method} ${request.url}`).slice(5)).toEqual([`PUT /v1/apps/${id}`]);
    } finally {
      await service.close();
    }
  });

  it("reports bad input in check, naming the field, before any request", async () => {
    const bad = await bed.counting(() =>
      bed.host.check(urnOf(app!), {}, { ...app!.inputs, name: "", colour: "blue", adopt: "not-a-guid" }),
    );
    expect(bad.requests).toHaveLength(0);
    expect(bad.result.failures.map((f) => f.property).sort()).toEqual(["adopt", "colour", "name"]);
    expect(bad.result.failures.find((f) => f.property === "name")?.reason).toBe("must not be empty");
    const missing = await bed.host.check(urnOf(app!), {}, { __provider: app!.inputs.__provider });
    expect(missing.failures).toEqual([{ property: "name", reason: "name is required" }]);
  });

  it("reports a property the kind does not have, even one the program slipped past the type checker", async () => {
    const [typo] = bed.capture(`new gms.App("typo", { name: "Support", nmae: "Support bot", created_at: "yesterday" });`);
    const result = await bed.counting(() => bed.host.check(urnOf(typo!), {}, typo!.inputs));
    expect(result.requests).toHaveLength(0);
    expect([...result.result.failures].sort((a, b) => a.property.localeCompare(b.property))).toEqual([
      { property: "created_at", reason: 'App has no property "created_at"; it takes name, description, connection, adopt' },
      { property: "nmae", reason: 'App has no property "nmae"; it takes name, description, connection, adopt' },
    ]);
  });

  it("lets unknown values through check and diff during preview", async () => {
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    const result = await bed.host.check(urnOf(app!), {}, { ...app!.inputs, name: unknown });
    expect(result.failures).toEqual([]);
    const diff = await bed.host.diff(urnOf(app!), "x", { name: "Support bot", description: "answers tickets" }, result.inputs);
    expect(diff.changes).toBe("some");
  });
});
