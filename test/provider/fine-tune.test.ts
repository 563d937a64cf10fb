/**
 * FineTune through the real dynamic-provider host against the emulator (a job stays `processing` for three
 * seconds there, and fails when its base model's name contains "fail"), plus scripted services for the
 * failures the emulator does not produce, and the progress lines the wait logs (in-process against a scripted
 * service on a fake clock, the lines taken where the host sends them to the engine's log: the wait's ten-second
 * progress lines need no real seconds; test/pulumi-cli/dynamic-provider-log.test.ts shows them on the real CLI).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as gms from "../../src";
import { Session } from "../../src/provider/session";
import { logProviderTo } from "../../src/provider/log";
import { makeFineTuneKind } from "../../src/resources/fine-tune";
import { MayExistError } from "../../src/testing/host";
import { type ScriptedServer, type Step, json, startScriptedServer } from "../client/scripted-server";
import { MISSING_GUID } from "../emulator/harness";
import { logData, providerConnection } from "./fine-tune-fixture";
import { partialOf, type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

type Props = Record<string, unknown>;
const withoutProvider = ({ __provider, ...rest }: Props) => rest;
const sent = (requests: { method: string; path: string }[]) => requests.map((request) => `${request.method} ${request.path}`);

/** A scripted service's fine-tune record `guid` of ten Data records, its provider job `job`, at each status asked for. */
const scriptedRecord = (guid: string, name: string, job: string) => (status: string) => ({
  guid,
  name,
  app: MISSING_GUID,
  dataset: MISSING_GUID,
  training_dataset: MISSING_GUID,
  data_ids: Array.from({ length: 10 }, (_, index) => index + 1),
  base_model: "gpt-4o-mini",
  provider: MISSING_GUID,
  status,
  vendor_finetune_name: job,
  failure_reason: null,
});

/** Never called: it only has to type-check (`npm test` runs tsc): a Model's connection id is what providerConnection takes. */
export function typeChecks(model: gms.Model): void {
  new gms.FineTune("typed", {
    name: "Typed",
    app: "a",
    dataset: "d",
    dataIds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    baseModel: "gpt-4o-mini",
    providerConnection: model.workspaceModelProviderId,
  });
}

describe("FineTune through the dynamic-provider host", () => {
  let bed: Testbed;
  let fineTune: Registration;
  let model: Registration;
  let support: string;
  let sales: string;
  let dataset: string;
  let otherDataset: string;
  /** Twelve Data records of Support: the first ten train, the other two make another set. */
  let ids: number[];
  let connection: { guid: string; id: number };
  let otherConnection: number;
  const servers: ScriptedServer[] = [];

  beforeAll(async () => {
    bed = await startTestbed();
    ({ support, ids } = await logData(bed.emulator, 12));
    const apps = (await bed.api("GET", "/apps")).body.data as { name: string; guid: string }[];
    sales = apps.find((app) => app.name === "Sales")!.guid;
    dataset = (await bed.api("POST", "/datasets", { name: "Tone examples", app: support })).body.guid;
    otherDataset = (await bed.api("POST", "/datasets", { name: "Other examples", app: support })).body.guid;
    connection = await providerConnection(bed.emulator, "Training");
    otherConnection = (await providerConnection(bed.emulator, "Other")).id;
    // The program lists the records in another order than the service keeps them.
    const registered = bed.capture(`
      new gms.FineTune("tone", {
        name: "Support tone",
        app: ${JSON.stringify(support)},
        dataset: ${JSON.stringify(dataset)},
        dataIds: ${JSON.stringify(ids.slice(0, 10).reverse())},
        baseModel: "gpt-4o-mini",
        providerConnection: ${connection.id},
      });
      new gms.Model("trainer", { llm: "gpt-4o-mini", provider: ${JSON.stringify(connection.guid)}, key: "sk-trainer" });
    `);
    fineTune = registered.find((registration) => registration.name === "tone")!;
    model = registered.find((registration) => registration.name === "trainer")!;
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await bed?.close();
  });

  const checked = async (inputs: Props) => {
    const result = await bed.host.check(urnOf(fineTune), {}, { ...fineTune.inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };
  const failed = async (inputs: Props) =>
    (await bed.host.create(urnOf(fineTune), await checked(inputs)).catch((caught: unknown) => caught)) as Error;
  const fineTunesOfSupport = async () => (await bed.api("GET", `/apps/${support}/finetunes`)).body as { guid: string; name: string }[];

  it("registers as gms:FineTune with a tiny __provider that requires the installed package, and no secrets", () => {
    expect(fineTune.type).toBe("pulumi-nodejs:dynamic/gms:FineTune");
    expect(fineTune.inputs.__provider).toContain('require("pulumi-gms/');
    expect(fineTune.secrets).toEqual([]);
  });

  it("check keeps the Data IDs sorted and names each bad field, without a request", async () => {
    expect((await checked({})).dataIds).toEqual(ids.slice(0, 10));
    const bad = await bed.counting(() =>
      bed.host.check(
        urnOf(fineTune),
        {},
        {
          ...fineTune.inputs,
          dataIds: [ids[0], ids[1], 2.5, "7f3c2a10-0b1e-4d5f-9a8b-1c2d3e4f5a6b", ids[1], -3],
          providerConnection: connection.guid,
          baseModel: "",
          waitTimeoutSeconds: 0,
        },
      ),
    );
    expect(bad.requests).toHaveLength(0);
    expect(bad.result.failures).toEqual(
      expect.arrayContaining([
        { property: "dataIds.2", reason: "must be a whole number (an internal numeric id, not a GUID)" },
        { property: "dataIds.3", reason: "must be a whole number (an internal numeric id, not a GUID)" },
        { property: "dataIds.5", reason: "must be a positive Data ID" },
        {
          property: "providerConnection",
          reason:
            "must be the ProviderConnection's numeric id (workspaceModelProviderId), a whole number (an internal numeric id, not a GUID)",
        },
        { property: "baseModel", reason: "must name the provider's base model, for example gpt-4o-mini" },
        { property: "waitTimeoutSeconds", reason: "must be positive" },
      ]),
    );
    expect(bad.result.failures).toHaveLength(6);
    const few = await bed.host.check(urnOf(fineTune), {}, { ...fineTune.inputs, dataIds: ids.slice(0, 9) });
    expect(few.failures).toEqual([
      { property: "dataIds", reason: "must list at least 10 Data IDs: the service trains only when that many resolve" },
    ]);
    const repeated = await bed.host.check(urnOf(fineTune), {}, { ...fineTune.inputs, dataIds: [...ids.slice(0, 10), ids[3]] });
    expect(repeated.failures).toEqual([{ property: "dataIds.10", reason: `lists Data ID ${ids[3]} more than once` }]);
    const missing = await bed.host.check(urnOf(fineTune), {}, { __provider: fineTune.inputs.__provider });
    expect(missing.failures.map((failure) => failure.property).sort()).toEqual(
      ["app", "baseModel", "dataIds", "dataset", "name", "providerConnection"].sort(),
    );
  });

  it("creates once the job left processing; then free no-op diffs, a rename in place, replaces, drift on refresh, idempotent delete", async () => {
    const inputs = await checked({});
    const started = Date.now();
    const created = await bed.counting(() => bed.host.create(urnOf(fineTune), inputs));
    // The emulator's job takes three seconds: create returned after it.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    const { id, properties } = created.result;
    const requests = sent(created.requests);
    expect(requests[0]).toBe("POST /v1/finetune");
    expect(requests.at(-1)).toBe(`GET /v1/finetune/${id}`);
    const polls = requests.slice(1, -1);
    expect(polls.length).toBeGreaterThan(1);
    expect(new Set(polls)).toEqual(new Set([`GET /v1/finetune/${id}/status`]));
    expect(withoutProvider(properties)).toEqual({
      guid: id,
      name: "Support tone",
      app: support,
      dataset,
      dataIds: ids.slice(0, 10),
      baseModel: "gpt-4o-mini",
      providerConnection: connection.id,
      status: "succeeded",
      vendorFinetuneName: expect.stringMatching(/^ftjob-/),
      failureReason: null,
      trainingDataset: expect.stringMatching(/^[0-9a-f-]{36}$/),
      providerConnectionGuid: connection.guid,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await bed.api("GET", `/finetune/${id}/status`)).body).toEqual({
      status: "succeeded",
      vendor_finetune_name: properties.vendorFinetuneName,
    });

    const same = await bed.counting(() => bed.host.diff(urnOf(fineTune), id, properties, inputs));
    expect(same.result).toEqual({ changes: "none", replaces: [], deleteBeforeReplace: false });
    expect(same.requests).toHaveLength(0);
    const reordered = await checked({ ...withoutProvider(inputs), dataIds: [...ids.slice(0, 10)].sort(() => 0.5 - Math.random()) });
    expect(await bed.host.diff(urnOf(fineTune), id, properties, reordered)).toEqual({
      changes: "none",
      replaces: [],
      deleteBeforeReplace: false,
    });

    const renamed = await checked({ ...withoutProvider(inputs), name: "Support tone v2" });
    expect(await bed.host.diff(urnOf(fineTune), id, properties, renamed)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
    const rename = await bed.counting(() => bed.host.update(urnOf(fineTune), id, properties, renamed));
    // The spec shows no PUT response: the fine-tune is read back.
    expect(sent(rename.requests)).toEqual([`PUT /v1/finetune/${id}`, `GET /v1/finetune/${id}`]);
    expect(rename.result.properties.name).toBe("Support tone v2");
    expect((await bed.api("GET", `/finetune/${id}`)).body.name).toBe("Support tone v2");
    Object.assign(properties, rename.result.properties);

    // The wait only matters to create: changing it is stored and sends nothing.
    const patient = await checked({ ...withoutProvider(renamed), waitTimeoutSeconds: 600 });
    expect((await bed.host.diff(urnOf(fineTune), id, properties, patient)).changes).toBe("some");
    const stored = await bed.counting(() => bed.host.update(urnOf(fineTune), id, properties, patient));
    expect(stored.requests).toHaveLength(0);
    expect(stored.result.properties).toMatchObject({ waitTimeoutSeconds: 600, name: "Support tone v2", status: "succeeded" });
    Object.assign(properties, stored.result.properties);

    for (const [field, value] of [
      ["app", sales],
      ["dataset", otherDataset],
      ["dataIds", ids.slice(2, 12)],
      ["baseModel", "gpt-4o"],
      ["providerConnection", otherConnection],
    ] as const) {
      const news = await checked({ ...withoutProvider(patient), [field]: value });
      const diff = await bed.counting(() => bed.host.diff(urnOf(fineTune), id, properties, news));
      expect(diff.result, field).toEqual({ changes: "some", replaces: [field], deleteBeforeReplace: false });
      expect(diff.requests).toHaveLength(0);
    }

    expect((await bed.api("PUT", `/finetune/${id}`, { name: "Renamed out of band" })).status).toBe(200);
    const refreshed = await bed.host.read(urnOf(fineTune), id, properties, patient);
    expect(refreshed.id).toBe(id);
    expect(refreshed.properties).toMatchObject({ name: "Renamed out of band", status: "succeeded", dataIds: ids.slice(0, 10) });
    // Never returned: kept from state.
    expect(refreshed.inputs).toMatchObject({ name: "Renamed out of band", providerConnection: connection.id, waitTimeoutSeconds: 600 });
    expect(await bed.host.diff(urnOf(fineTune), id, refreshed.properties, patient)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });

    const deleted = await bed.counting(() => bed.host.delete(urnOf(fineTune), id, refreshed.properties));
    expect(deleted.requests.map((request) => `${request.method} ${request.path} ${request.status}`)).toEqual([
      `DELETE /v1/finetune/${id} 200`,
    ]);
    const again = await bed.counting(() => bed.host.delete(urnOf(fineTune), id, refreshed.properties));
    expect(again.requests.map((request) => `${request.method} ${request.status}`)).toEqual(["DELETE 404"]);
    expect((await bed.host.read(urnOf(fineTune), id, refreshed.properties)).id).toBe("");
  });

  it("a job the provider fails fails the step with the service's reason; state records the fine-tune, which up replaces and destroy deletes", async () => {
    const error = await failed({ name: "Doomed tone", baseModel: "gpt-fail-mini" });
    const { id, properties, message, reasons } = partialOf(error);
    expect(message).toMatch(
      new RegExp(
        String.raw`^Cannot create FineTune "Doomed tone": the provider failed its job ftjob-\w+: The vendor rejected the job: ` +
          String.raw`base model 'gpt-fail-mini' cannot be fine-tuned\. Pulumi records it as created with errors: the next ${"`"}pulumi up${"`"} replaces it`,
      ),
    );
    expect(reasons).toEqual([message]);
    expect(properties).toMatchObject({
      guid: id,
      status: "failed",
      failureReason: "The vendor rejected the job: base model 'gpt-fail-mini' cannot be fine-tuned",
      providerConnection: connection.id,
      __incomplete: true,
    });
    expect(properties.__provider).toBe(fineTune.inputs.__provider);
    expect((await bed.api("GET", `/finetune/${id}`)).body.status).toBe("failed");
    const inputs = await checked({ name: "Doomed tone", baseModel: "gpt-fail-mini" });
    expect(await bed.host.diff(urnOf(fineTune), id, properties, inputs)).toEqual({
      changes: "some",
      replaces: ["__incomplete"],
      deleteBeforeReplace: true,
    });
    // A refresh reads it whole (the partial-create mark goes), yet its status still has the next up replace it, without a request.
    const refreshed = await bed.host.read(urnOf(fineTune), id, properties, inputs);
    expect(refreshed.properties).toMatchObject({ status: "failed" });
    expect(refreshed.properties).not.toHaveProperty("__incomplete");
    const diff = await bed.counting(() => bed.host.diff(urnOf(fineTune), id, refreshed.properties, inputs));
    expect(diff.result).toEqual({ changes: "some", replaces: ["status"], deleteBeforeReplace: false });
    expect(diff.requests).toHaveLength(0);
    await bed.host.delete(urnOf(fineTune), id, refreshed.properties);
    expect((await bed.api("GET", `/finetune/${id}`)).status).toBe(404);
  });

  it("a Model's workspaceModelProviderId output is what providerConnection takes", async () => {
    const trainer = await bed.host.create(urnOf(model), (await bed.host.check(urnOf(model), {}, model.inputs)).inputs);
    expect(trainer.properties).toMatchObject({ providerGuid: connection.guid, workspaceModelProviderId: connection.id });
    const created = await bed.host.create(
      urnOf(fineTune),
      await checked({ name: "Trainer tone", providerConnection: trainer.properties.workspaceModelProviderId }),
    );
    expect(created.properties).toMatchObject({ status: "succeeded", providerConnectionGuid: connection.guid });
    await bed.host.delete(urnOf(fineTune), created.id, created.properties);
    await bed.host.delete(urnOf(model), trainer.id, trainer.properties);
  });

  it("a job still processing at waitTimeoutSeconds fails the step and is recorded; a refresh once it finished shows its status and keeps it", async () => {
    const started = Date.now();
    const error = await failed({ name: "Hasty tone", waitTimeoutSeconds: 1 });
    expect(Date.now() - started).toBeLessThan(2900);
    const { id, properties, message } = partialOf(error);
    expect(message).toMatch(
      new RegExp(
        String.raw`^FineTune "Hasty tone" \([0-9a-f-]{36}\) was created, but its provider job ftjob-\w+ was still processing after 1\.\d s ` +
          String.raw`\(\d+ checks\); the job continues at the provider\. Raise waitTimeoutSeconds, or run ${"`"}pulumi refresh${"`"} once the job ` +
          String.raw`has succeeded to keep it\.`,
      ),
    );
    expect(properties).toMatchObject({ guid: id, name: "Hasty tone", status: "processing", __incomplete: true });

    const inputs = await checked({ name: "Hasty tone", waitTimeoutSeconds: 1 });
    const early = await bed.host.read(urnOf(fineTune), id, properties, inputs);
    expect(early.properties.status).toBe("processing");
    expect(early.properties).not.toHaveProperty("__incomplete");
    await new Promise((resolve) => setTimeout(resolve, 3200 - (Date.now() - started)));
    const later = await bed.host.read(urnOf(fineTune), id, early.properties, inputs);
    expect(later.properties).toMatchObject({ status: "succeeded", failureReason: null });
    expect(await bed.host.diff(urnOf(fineTune), id, later.properties, inputs)).toEqual({
      changes: "none",
      replaces: [],
      deleteBeforeReplace: false,
    });
    await bed.host.delete(urnOf(fineTune), id, later.properties);
  });

  it("a Data ID the service skipped deletes the new fine-tune again and names the ID", async () => {
    const error = await failed({ name: "Sloppy tone", dataIds: [...ids.slice(0, 10), 987654] });
    expect(error).not.toBeInstanceOf(MayExistError);
    expect(error.message).toMatch(
      new RegExp(
        String.raw`^Cannot create FineTune "Sloppy tone": the service found no Data record for Data ID 987654 in the workspace and trained ` +
          String.raw`on the other 10\. Remove it from dataIds\. The fine-tune it had created \([0-9a-f-]{36}\) was deleted again\.$`,
      ),
    );
    expect((await fineTunesOfSupport()).filter((candidate) => candidate.name === "Sloppy tone")).toEqual([]);
  });

  it("the service's refusals name what to check, and leave nothing behind", async () => {
    const missingApp = await failed({ name: "Lost tone", app: MISSING_GUID });
    expect(missingApp.message).toBe(
      'Cannot create FineTune "Lost tone": the service answered 404 App not found. Check that app and dataset are GUIDs of an App and a ' +
        "Dataset of the workspace, and that providerConnection is the numeric id (workspaceModelProviderId) of one of its ProviderConnections.",
    );
    const missingConnection = await failed({ name: "Lost tone", providerConnection: 987654 });
    expect(missingConnection.message).toMatch(/^Cannot create FineTune "Lost tone": the service answered 404 Provider not found\. Check/);
    const tooFew = await failed({ name: "Lost tone", dataIds: [...ids.slice(0, 9), 987654] });
    expect(tooFew.message).toBe(
      'Cannot create FineTune "Lost tone": the service answered 400 A fine-tune needs at least 10 Data records; 9 of data_ids resolved to one.',
    );
    expect((await fineTunesOfSupport()).filter((candidate) => candidate.name === "Lost tone")).toEqual([]);
  });

  it("a create whose answer was lost finds the fine-tune by name in its App and adopts it, with no second POST", async () => {
    const inputs = await checked({ name: "Unheard tone" });
    bed.emulator.faults.set({ lost: 1, methods: ["POST"] });
    let result: { id: string; properties: Props };
    let requests: { method: string; path: string }[];
    let lost: number;
    try {
      ({ result, requests } = await bed.counting(() => bed.host.create(urnOf(fineTune), inputs)));
      ({ lost } = bed.emulator.faults.stats());
    } finally {
      bed.emulator.faults.set(undefined);
    }
    // One POST, its answer lost; the lookup found what it made: one fine-tune of that name, the one state records.
    expect(lost).toBe(1);
    const made = (await fineTunesOfSupport()).filter((candidate) => candidate.name === "Unheard tone");
    expect(made.map((candidate) => candidate.guid)).toEqual([result.id]);
    const after = sent(requests).filter((request) => !request.startsWith("POST"));
    expect(after.slice(0, 2)).toEqual([`GET /v1/apps/${support}/finetunes`, `GET /v1/finetune/${result.id}`]);
    expect(result.properties).toMatchObject({ name: "Unheard tone", status: "succeeded" });
    await bed.host.delete(urnOf(fineTune), result.id, result.properties);
  });

  describe("waiting on a service that misbehaves", () => {
    const GUID = "5b0e2f9a-8c1d-4e3f-a2b4-c6d8e0f1a3b5";
    const record = scriptedRecord(GUID, "Support tone", "ftjob-scripted");
    const failing = json(500, { detail: "upstream broke" }, { "retry-after": "0" });
    const against = async (steps: Step[]) => {
      const service = await startScriptedServer(steps);
      servers.push(service);
      const inputs = await checked({
        dataIds: Array.from({ length: 10 }, (_, index) => index + 1),
        connection: { baseUrl: service.baseUrl, apiKey: "gms_scripted_key" },
      });
      return (await bed.host.create(urnOf(fineTune), inputs).catch((caught: unknown) => caught)) as Error;
    };

    it("a status check that keeps failing records the fine-tune as created with errors", async () => {
      const error = await against([json(200, record("processing")), failing]);
      expect(error).toBeInstanceOf(MayExistError);
      expect(partialOf(error).id).toBe(GUID);
      expect(error.message).toMatch(
        new RegExp(
          `^FineTune "Support tone" \\(${GUID}\\) was created, but checking its provider job failed: ` +
            "the service answered 500 upstream broke \\(after 4 attempts\\)\\. Pulumi records it",
        ),
      );
      expect(partialOf(error).properties).toMatchObject({ status: "processing", __incomplete: true });
    });

    it("a record that cannot be read once the job finished records the fine-tune with the status seen", async () => {
      const error = await against([
        json(200, record("processing")),
        json(200, { status: "succeeded", vendor_finetune_name: "ftjob-scripted" }),
        failing,
      ]);
      expect(error).toBeInstanceOf(MayExistError);
      expect(error.message).toMatch(
        /its provider job left processing \(succeeded\), but reading the fine-tune failed: the service answered 500/,
      );
      expect(partialOf(error).properties).toMatchObject({ status: "succeeded", __incomplete: true });
    });

    it("a fine-tune deleted while waited for is reported gone, not recorded", async () => {
      const error = await against([json(200, record("processing")), json(404, { detail: "Fine-tune not found" })]);
      expect(error).not.toBeInstanceOf(MayExistError);
      expect(error.message).toBe(
        `FineTune "Support tone" (${GUID}) was deleted (outside Pulumi?) while Pulumi waited for its provider job.`,
      );
    });
  });
});

describe("FineTune's progress while it waits", () => {
  const GUID = "7c1e3a5b-9d2f-4a6c-8e0b-1f3d5a7c9e2b";
  const record = scriptedRecord(GUID, "Patient tone", "ftjob-patient");
  const statusOf = (status: string) => json(200, { status, vendor_finetune_name: "ftjob-patient" });
  let service: ScriptedServer | undefined;
  afterAll(() => service?.close());

  it("logs a line when it starts waiting, every ten seconds while the job runs, and when it ends (on a fake clock)", async () => {
    // The job stays processing for six checks, about 13 s of polls that back off, and has succeeded at the seventh.
    service = await startScriptedServer([
      json(200, record("processing")),
      ...Array.from({ length: 6 }, () => statusOf("processing")),
      statusOf("succeeded"),
      json(200, record("succeeded")),
    ]);
    let now = Date.parse("2026-01-01T00:00:00Z");
    const slept: number[] = [];
    const clock = {
      now: () => now,
      sleep: async (ms: number) => {
        slept.push(ms);
        now += ms;
      },
    };
    const inputs = {
      name: "Patient tone",
      app: MISSING_GUID,
      dataset: MISSING_GUID,
      dataIds: Array.from({ length: 10 }, (_, index) => index + 1),
      baseModel: "gpt-4o-mini",
      providerConnection: 7,
      waitTimeoutSeconds: undefined,
    };
    // The lines as the dynamic provider's host sends them to the engine (src/provider/log.ts).
    const lines: [string, string][] = [];
    logProviderTo(async (severity, line) => void lines.push([severity, line]));
    try {
      const client = new Session().clientFor({ baseUrl: service.baseUrl, apiKey: "gms_scripted_key" });
      const created = await makeFineTuneKind(clock).create(client, inputs);
      expect(created.status).toBe("succeeded");
      // Polls back off from a quarter of a second to five seconds.
      expect(slept).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
      const label = `FineTune "Patient tone" (${GUID})`;
      expect(lines).toEqual([
        ["info", `${label}: waiting up to 3600 s for provider job ftjob-patient to leave processing`],
        ["info", `${label}: provider job ftjob-patient still processing after 12.8 s`],
        ["info", `${label}: provider job ftjob-patient succeeded after 17.8 s`],
      ]);
    } finally {
      logProviderTo(undefined);
    }
  });
});
