import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

const withoutProvider = ({ __provider, ...rest }: Record<string, unknown>) => rest;
const MISSING = "00000000-0000-4000-8000-000000000000";

describe("Eval through the dynamic-provider host", () => {
  let bed: Testbed;
  let evaluation: Registration;
  let action: string;
  let otherAction: string;
  let exactMatch: string;
  let toxicity: string;

  beforeAll(async () => {
    bed = await startTestbed();
    const apps = (await bed.api("GET", "/apps")).body.data as { guid: string; name: string }[];
    const actionsOf = async (app: string) =>
      (await bed.api("GET", `/apps/${apps.find((a) => a.name === app)!.guid}/actions`)).body as { guid: string; name: string }[];
    action = (await actionsOf("Support")).find((a) => a.name === "Summarize")!.guid;
    otherAction = (await actionsOf("Sales")).find((a) => a.name === "Pitch")!.guid;
    const types = (await bed.api("GET", "/evals/types")).body as { guid: string; name: string }[];
    exactMatch = types.find((t) => t.name === "Exact match")!.guid;
    toxicity = types.find((t) => t.name === "Toxicity")!.guid;
    evaluation = bed.capture(`
      new gms.Eval("quality", {
        name: "Summary quality",
        action: "${action}",
        evalTypes: [{ guid: "${exactMatch}", variables: [{ name: "threshold", value: 0.8 }, { name: "labels", value: { ok: true } }] }],
        samplingRate: 0.25,
        alertOnFail: true,
      });
    `)[0]!;
  });
  afterAll(() => bed?.close());

  const checked = async (inputs: Record<string, unknown>) => {
    const result = await bed.host.check(urnOf(evaluation), {}, { ...evaluation.inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };

  it("registers as gms:Eval with a tiny __provider that requires the installed package", () => {
    expect(evaluation.type).toBe("pulumi-nodejs:dynamic/gms:Eval");
    expect(evaluation.inputs.__provider).toContain('require("pulumi-gms/');
  });

  it("creates with one POST, then a no-op diff costs no request, evalTypes update in place, refresh shows drift, delete is idempotent", async () => {
    const inputs = await checked({});
    const created = await bed.counting(() => bed.host.create(urnOf(evaluation), inputs));
    expect(created.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/evals"]);
    const { id, properties } = created.result;
    expect(withoutProvider(properties)).toEqual({
      guid: id,
      name: "Summary quality",
      action,
      evalTypes: [
        {
          guid: exactMatch,
          variables: [
            { name: "threshold", value: 0.8 },
            { name: "labels", value: { ok: true } },
          ],
        },
      ],
      dataset: null,
      version: null,
      samplingRate: 0.25,
      alertOnFail: true,
      dataType: "LIVE",
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });

    const same = await bed.counting(() => bed.host.diff(urnOf(evaluation), id, properties, inputs));
    expect(same.result).toEqual({ changes: "none", replaces: [], deleteBeforeReplace: false });
    expect(same.requests).toHaveLength(0);

    const evalTypes = [{ guid: toxicity }, { guid: exactMatch, variables: [{ name: "threshold", value: 0.9 }] }];
    const news = await checked({ evalTypes });
    expect(await bed.host.diff(urnOf(evaluation), id, properties, news)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
    const updated = await bed.counting(() => bed.host.update(urnOf(evaluation), id, properties, news));
    // The PUT response is not specified: the Eval is read back.
    expect(updated.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["PUT 200", "GET 200"]);
    expect(updated.result.properties.evalTypes).toEqual(evalTypes);
    expect((await bed.api("GET", `/evals/${id}`)).body.eval_types).toEqual([
      { guid: toxicity, name: "Toxicity", metadata: null },
      { guid: exactMatch, name: "Exact match", metadata: { variables: [{ name: "threshold", value: 0.9 }] } },
    ]);
    Object.assign(properties, updated.result.properties);

    for (const [field, value] of [
      ["name", "Renamed"],
      ["action", otherAction],
      ["dataset", MISSING],
      ["version", MISSING],
      ["samplingRate", 1],
      ["alertOnFail", false],
    ] as const) {
      const changed = await checked({ evalTypes, [field]: value });
      const diff = await bed.counting(() => bed.host.diff(urnOf(evaluation), id, properties, changed));
      expect(diff.result).toEqual({ changes: "some", replaces: [field], deleteBeforeReplace: false });
      expect(diff.requests).toHaveLength(0);
    }

    await bed.api("PUT", `/evals/${id}`, { eval_types: [{ guid: exactMatch }] });
    const refreshed = await bed.counting(() => bed.host.read(urnOf(evaluation), id, properties, news));
    expect(refreshed.requests.map((r) => r.method)).toEqual(["GET"]);
    expect(refreshed.result.id).toBe(id);
    expect(refreshed.result.properties.evalTypes).toEqual([{ guid: exactMatch }]);
    expect(refreshed.result.inputs?.evalTypes).toEqual([{ guid: exactMatch }]);
    expect(await bed.host.diff(urnOf(evaluation), id, refreshed.result.properties, news)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });

    const deleted = await bed.counting(() => bed.host.delete(urnOf(evaluation), id, refreshed.result.properties));
    expect(deleted.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["DELETE 200"]);
    expect((await bed.api("GET", `/evals/${id}`)).status).toBe(404);
    await expect(bed.host.delete(urnOf(evaluation), id, refreshed.result.properties)).resolves.toBeUndefined();
    expect((await bed.host.read(urnOf(evaluation), id, refreshed.result.properties)).id).toBe("");
  });

  it("creates a Dataset Eval", async () => {
    const dataset = await bed.api("POST", "/datasets", { name: "Golden summaries" });
    const inputs = await checked({ dataset: dataset.body.guid, samplingRate: null, alertOnFail: undefined });
    const created = await bed.host.create(urnOf(evaluation), inputs);
    expect(created.properties).toMatchObject({ dataset: dataset.body.guid, dataType: "DATASET", samplingRate: null, alertOnFail: false });
    expect(await bed.host.diff(urnOf(evaluation), created.id, created.properties, inputs)).toMatchObject({ changes: "none" });
    await bed.host.delete(urnOf(evaluation), created.id, created.properties);
  });

  it("explains references that do not resolve, listing the Eval types", async () => {
    const unknownType = await checked({ evalTypes: [{ guid: MISSING }] });
    const attempt = await bed.counting(() => bed.host.create(urnOf(evaluation), unknownType).catch((error: Error) => error));
    expect(attempt.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(["POST /v1/evals 404", "GET /v1/evals/types 200"]);
    expect((attempt.result as Error).message).toBe(
      `Cannot create Eval "Summary quality": the service answered 404 Eval type not found. Not every GUID of evalTypes ` +
        `(${MISSING}) is an Eval type; the available Eval types are: ${exactMatch} (Exact match), ${toxicity} (Toxicity).`,
    );

    const unknownAction = await checked({ action: MISSING });
    await expect(bed.host.create(urnOf(evaluation), unknownAction)).rejects.toThrow(
      `Cannot create Eval "Summary quality": the service answered 404 Action not found. action (${MISSING}) must be the GUID of an Action of this workspace.`,
    );

    const created = await bed.host.create(urnOf(evaluation), await checked({}));
    const badUpdate = await checked({ evalTypes: [{ guid: MISSING }] });
    await expect(bed.host.update(urnOf(evaluation), created.id, created.properties, badUpdate)).rejects.toThrow(
      `Cannot update the Eval types of Eval ${created.id}: the service answered 404 Eval type not found.`,
    );
    await bed.host.delete(urnOf(evaluation), created.id, created.properties);
  });

  it("adopts an existing Eval by GUID, updating its Eval types; a replace-only mismatch is a clear error", async () => {
    const existing = await bed.api("POST", "/evals", {
      name: "Summary quality",
      action,
      eval_types: [{ guid: toxicity }],
      sampling_rate: 0.25,
      alert_on_fail: true,
    });
    expect(existing.status).toBe(200);
    const inputs = await checked({ adopt: existing.body.guid });
    const adopted = await bed.counting(() => bed.host.create(urnOf(evaluation), inputs));
    expect(adopted.result.id).toBe(existing.body.guid);
    expect(adopted.requests.map((r) => r.method)).toEqual(["GET", "PUT", "GET"]);
    expect((await bed.api("GET", `/evals/${existing.body.guid}`)).body.eval_types.map((t: { guid: string }) => t.guid)).toEqual([
      exactMatch,
    ]);
    expect(await bed.host.diff(urnOf(evaluation), existing.body.guid, adopted.result.properties, inputs)).toMatchObject({
      changes: "none",
    });

    const other = await bed.api("POST", "/evals", { name: "Other", action, eval_types: [{ guid: exactMatch }] });
    const mismatch = await checked({ adopt: other.body.guid });
    await expect(bed.host.create(urnOf(evaluation), mismatch)).rejects.toThrow(
      `Cannot adopt Eval ${other.body.guid}: name, samplingRate, alertOnFail differ from the program and cannot be changed in place`,
    );
  });

  it("reports bad input in check, naming the field, before any request", async () => {
    const bad = await bed.counting(() =>
      bed.host.check(
        urnOf(evaluation),
        {},
        {
          ...evaluation.inputs,
          action: "not-a-guid",
          samplingRate: 1.5,
          evalTypes: [{ guid: "nope", variables: [{ name: "x", value: null }] }],
          alertOnFail: "yes",
          colour: "blue",
        },
      ),
    );
    expect(bad.requests).toHaveLength(0);
    expect(bad.result.failures.map((f) => f.property).sort()).toEqual([
      "action",
      "alertOnFail",
      "colour",
      "evalTypes.0.guid",
      "evalTypes.0.variables.0.value",
      "samplingRate",
    ]);
    expect(bad.result.failures.find((f) => f.property === "samplingRate")!.reason).toBe("must be between 0 and 1");
    const negative = await bed.host.check(urnOf(evaluation), {}, { ...evaluation.inputs, samplingRate: -0.1 });
    expect(negative.failures).toEqual([{ property: "samplingRate", reason: "must be between 0 and 1" }]);
    const missing = await bed.host.check(urnOf(evaluation), {}, { __provider: evaluation.inputs.__provider });
    expect(missing.failures).toEqual([
      { property: "name", reason: "name is required" },
      { property: "action", reason: "action is required" },
      { property: "evalTypes", reason: "evalTypes is required" },
    ]);
  });
});
