import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

const withoutProvider = ({ __provider, ...rest }: Record<string, unknown>) => rest;
const MISSING = "00000000-0000-4000-8000-000000000000";

describe("Experiment through the dynamic-provider host", () => {
  let bed: Testbed;
  let experiment: Registration;
  let support: string;
  let sales: string;
  let summarize: string;
  let classify: string;
  let pitch: string;

  beforeAll(async () => {
    bed = await startTestbed();
    const apps = (await bed.api("GET", "/apps")).body.data as { name: string; guid: string }[];
    support = apps.find((app) => app.name === "Support")!.guid;
    sales = apps.find((app) => app.name === "Sales")!.guid;
    const actionOf = async (app: string, name: string) =>
      ((await bed.api("GET", `/apps/${app}/actions`)).body as { name: string; guid: string }[]).find((action) => action.name === name)!
        .guid;
    summarize = await actionOf(support, "Summarize");
    classify = await actionOf(support, "Classify");
    pitch = await actionOf(sales, "Pitch");
    experiment = bed.capture(
      `new gms.Experiment("tone", { name: "Tone test", app: ${JSON.stringify(support)}, primaryAction: ` +
        `${JSON.stringify(summarize)}, secondaryAction: ${JSON.stringify(classify)} });`,
    )[0]!;
  });
  afterAll(() => bed?.close());

  const checked = async (inputs: Record<string, unknown>) => {
    const result = await bed.host.check(urnOf(experiment!), {}, { ...experiment!.inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };

  it("registers as gms:Experiment with a tiny __provider that requires the installed package", () => {
    expect(experiment!.type).toBe("pulumi-nodejs:dynamic/gms:Experiment");
    expect(experiment!.inputs.__provider).toContain('require("pulumi-gms/');
    expect(experiment!.secrets).toEqual([]);
  });

  it("creates, then a no-op diff costs no request, each field updates in place, refresh shows drift, delete is idempotent", async () => {
    const inputs = await checked({});
    const created = await bed.counting(() => bed.host.create(urnOf(experiment!), inputs));
    expect(created.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/experiments"]);
    const { id, properties } = created.result;
    expect(withoutProvider(properties)).toMatchObject({
      guid: id,
      name: "Tone test",
      app: support,
      primaryAction: summarize,
      secondaryAction: classify,
      status: "active",
    });
    expect(properties.createdAt).toEqual(expect.any(String));

    const same = await bed.counting(() => bed.host.diff(urnOf(experiment!), id, properties, inputs));
    expect(same.result).toEqual({ changes: "none", replaces: [], deleteBeforeReplace: false });
    expect(same.requests).toHaveLength(0);

    const wire = { name: "name", primaryAction: "primary_action", secondaryAction: "secondary_action" } as const;
    for (const [field, value] of [
      ["name", "Tone test v2"],
      ["primaryAction", classify],
      ["secondaryAction", summarize],
    ] as const) {
      const news = await checked({ ...withoutProvider(properties), [field]: value });
      const diff = await bed.counting(() => bed.host.diff(urnOf(experiment!), id, properties, news));
      expect(diff.result).toEqual({ changes: "some", replaces: [], deleteBeforeReplace: false });
      expect(diff.requests).toHaveLength(0);
      const updated = await bed.counting(() => bed.host.update(urnOf(experiment!), id, properties, news));
      // The spec shows no PUT response: the Experiment is read back.
      expect(updated.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`PUT /v1/experiments/${id}`, `GET /v1/experiments/${id}`]);
      expect(updated.result.properties[field]).toBe(value);
      expect((await bed.api("GET", `/experiments/${id}`)).body[wire[field]]).toBe(value);
      Object.assign(properties, updated.result.properties);
    }

    // Only the changed field is sent: a rename leaves an out-of-band Action change alone.
    await bed.api("PUT", `/experiments/${id}`, { secondary_action: classify });
    const renamed = await checked({ ...withoutProvider(properties), name: "Tone test v3" });
    await bed.host.update(urnOf(experiment!), id, properties, renamed);
    expect((await bed.api("GET", `/experiments/${id}`)).body).toMatchObject({ name: "Tone test v3", secondary_action: classify });

    const moved = await checked({ app: sales, primaryAction: pitch, secondaryAction: pitch });
    const replace = await bed.counting(() => bed.host.diff(urnOf(experiment!), id, properties, moved));
    expect(replace.result).toEqual({ changes: "some", replaces: ["app"], deleteBeforeReplace: false });
    expect(replace.requests).toHaveLength(0);

    const refreshed = await bed.counting(() => bed.host.read(urnOf(experiment!), id, properties, inputs));
    expect(refreshed.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v1/experiments/${id}`]);
    expect(refreshed.result.id).toBe(id);
    expect(refreshed.result.properties).toMatchObject({ name: "Tone test v3", secondaryAction: classify });
    expect(refreshed.result.inputs).toMatchObject({
      name: "Tone test v3",
      app: support,
      primaryAction: classify,
      secondaryAction: classify,
    });
    const drift = await bed.host.diff(urnOf(experiment!), id, refreshed.result.properties, inputs);
    expect(drift).toEqual({ changes: "some", replaces: [], deleteBeforeReplace: false });

    const deleted = await bed.counting(() => bed.host.delete(urnOf(experiment!), id, refreshed.result.properties));
    expect(deleted.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([`DELETE /v1/experiments/${id} 200`]);
    expect((await bed.api("GET", `/experiments/${id}`)).status).toBe(404);
    const again = await bed.counting(() => bed.host.delete(urnOf(experiment!), id, refreshed.result.properties));
    expect(again.requests.map((r) => r.status)).toEqual([404]);
    expect((await bed.host.read(urnOf(experiment!), id, refreshed.result.properties)).id).toBe("");
  });

  it("names the App, the foreign Action and the App's own Actions when an Action belongs to another App", async () => {
    const foreign = await checked({ primaryAction: pitch });
    const refused = await bed.counting(() => bed.host.create(urnOf(experiment!), foreign).catch((error: Error) => error));
    expect(refused.result).toBeInstanceOf(Error);
    const message = (refused.result as Error).message;
    expect(message).toContain(
      `Cannot create Experiment "Tone test": both Actions must belong to App "Support" (${support}), but primaryAction ${pitch} belongs to another App.`,
    );
    expect(message).toContain(`Actions of "Support": Summarize (${summarize}), Classify (${classify}).`);
    expect(message).toContain("set app to the App that owns the Actions");
    // The explanation costs two reads, only on the error path; nothing was created.
    expect(refused.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      "POST /v1/experiments 400",
      `GET /v1/apps/${support} 200`,
      `GET /v1/apps/${support}/actions 200`,
    ]);
    expect((await bed.api("GET", "/experiments")).body.total_count).toBe(0);

    const created = await bed.host.create(urnOf(experiment!), await checked({}));
    const both = await checked({ primaryAction: pitch, secondaryAction: pitch });
    await expect(bed.host.update(urnOf(experiment!), created.id, created.properties, both)).rejects.toThrow(
      `Cannot update Experiment "Tone test": both Actions must belong to App "Support" (${support}), ` +
        `but primaryAction ${pitch} and secondaryAction ${pitch} belong to another App.`,
    );
    expect((await bed.api("GET", `/experiments/${created.id}`)).body).toMatchObject({
      primary_action: summarize,
      secondary_action: classify,
    });

    const gone = await checked({ secondaryAction: MISSING });
    await expect(bed.host.update(urnOf(experiment!), created.id, created.properties, gone)).rejects.toThrow(
      `Cannot update Experiment "Tone test": an Action does not exist in the workspace ` +
        `(or was deleted); check primaryAction ${summarize} and secondaryAction ${MISSING}`,
    );
    await expect(bed.host.create(urnOf(experiment!), await checked({ app: MISSING }))).rejects.toThrow(
      `Cannot create Experiment "Tone test": App ${MISSING} does not exist in the workspace (or was deleted); set app to the GUID of an existing App`,
    );
    await bed.host.delete(urnOf(experiment!), created.id, created.properties);
  });

  it("adopts an existing Experiment by GUID and updates it to the program; another App is a clear error", async () => {
    const existing = (
      await bed.api("POST", "/experiments", { name: "Legacy", app: support, primary_action: classify, secondary_action: classify })
    ).body;
    const inputs = await checked({ adopt: existing.guid });
    const adopted = await bed.counting(() => bed.host.create(urnOf(experiment!), inputs));
    expect(adopted.result.id).toBe(existing.guid);
    expect(adopted.requests.map((r) => r.method)).toEqual(["GET", "PUT", "GET"]);
    expect((await bed.api("GET", `/experiments/${existing.guid}`)).body).toMatchObject({
      name: "Tone test",
      primary_action: summarize,
      secondary_action: classify,
    });

    const elsewhere = (
      await bed.api("POST", "/experiments", { name: "Tone test", app: sales, primary_action: pitch, secondary_action: pitch })
    ).body;
    const mismatch = await bed.counting(() =>
      bed.host.create(urnOf(experiment!), { ...inputs, adopt: elsewhere.guid }).catch((error: Error) => error),
    );
    expect((mismatch.result as Error).message).toContain(
      `Cannot adopt Experiment ${elsewhere.guid}: app differs from the program and cannot be changed in place`,
    );
    expect(mismatch.requests.map((r) => r.method)).toEqual(["GET"]);
  });

  it("reports bad input in check, naming the field, before any request", async () => {
    const bad = await bed.counting(() =>
      bed.host.check(urnOf(experiment!), {}, { ...experiment!.inputs, name: "", primaryAction: "summarize", traffic: 0.5 }),
    );
    expect(bad.requests).toHaveLength(0);
    expect(bad.result.failures.map((f) => f.property).sort()).toEqual(["name", "primaryAction", "traffic"]);
    const missing = await bed.host.check(urnOf(experiment!), {}, { __provider: experiment!.inputs.__provider });
    expect(missing.failures.map((f) => f.property)).toEqual(["name", "app", "primaryAction", "secondaryAction"]);
  });

  it("lets unknown values through check and diff during preview", async () => {
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    const result = await bed.host.check(urnOf(experiment!), {}, { ...experiment!.inputs, primaryAction: unknown });
    expect(result.failures).toEqual([]);
    const olds = { name: "Tone test", app: support, primaryAction: summarize, secondaryAction: classify };
    expect(await bed.host.diff(urnOf(experiment!), "x", olds, result.inputs)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
  });
});
