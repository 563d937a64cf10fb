/**
 * The provider contract, once for every kind of the registry: each kind runs through the real
 * dynamic-provider host against the emulator, and what can be derived from its field declarations
 * (which fields are required, updatable, replace-only, secret; the outputs' schemas) is. A kind's
 * scenario only says what the declarations cannot: valid inputs, one in-place change, one change that
 * replaces, and one change made out of band. The per-kind files cover each kind's own behaviour.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InputFields, OutputFields } from "../../src/provider/fields";
import type { KindName } from "../../src/resources";
import { kinds } from "../../src/resources";
import { json, startScriptedServer } from "../client/scripted-server";
import { logData, providerConnection } from "./fine-tune-fixture";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

type Props = Record<string, unknown>;

/** GUIDs of the fixtures (TEST_FIXTURES) the scenarios refer to. */
interface Fixtures {
  support: string;
  sales: string;
  summarize: string;
  classify: string;
  handbook: string;
  exactMatch: string;
  toxicity: string;
  /** A Dataset of Support, the internal numeric ids of ten Data records of Support, and a ProviderConnection's numeric id. */
  dataset: string;
  dataIds: number[];
  providerConnection: number;
}

interface Scenario {
  /** Valid inputs; they must give every field the kind declares secret. */
  inputs(f: Fixtures): Props;
  /** Where the API shows the object. */
  path(guid: string, f: Fixtures): string;
  /** An updatable field, its new value, and where the API record shows it (in the value's form). */
  update(f: Fixtures): { field: string; value: unknown; shown(record: any): unknown };
  /** A replace-only field and a value that replaces; null for a kind that declares none. */
  replace: ((f: Fixtures) => { field: string; value: unknown }) | null;
  /** A change made through the API behind the provider's back, and the field and value refresh then shows. */
  drift(f: Fixtures): { body: Props; field: string; value: unknown };
}

const MODEL_KEY = "sk-contract-model-3e8a1f";
const CONNECTION_KEY = "sk-contract-connection-7c2d90";

const scenarios = {
  App: {
    inputs: () => ({ name: "Contract App", description: "made by the contract suite" }),
    path: (guid) => `/apps/${guid}`,
    update: () => ({ field: "name", value: "Contract App v2", shown: (record) => record.name }),
    replace: null,
    drift: () => ({ body: { name: "Renamed out of band" }, field: "name", value: "Renamed out of band" }),
  },
  ProviderConnection: {
    inputs: () => ({ provider: "openai", key: CONNECTION_KEY, name: "Contract connection" }),
    path: (guid) => `/providers/${guid}`,
    update: () => ({ field: "nickname", value: "backup", shown: (record) => record.nickname }),
    replace: () => ({ field: "url", value: "https://llm.example.com/v1" }),
    drift: () => ({ body: { nickname: "changed by hand" }, field: "nickname", value: "changed by hand" }),
  },
  Model: {
    inputs: () => ({ llm: "gpt-4o", provider: "openai", key: MODEL_KEY }),
    path: (guid) => `/models/${guid}`,
    update: () => ({ field: "llm", value: "gpt-4o-mini", shown: (record) => record.llm }),
    replace: () => ({ field: "provider", value: "anthropic" }),
    drift: () => ({ body: { llm: "gpt-4.1" }, field: "llm", value: "gpt-4.1" }),
  },
  Workflow: {
    inputs: (f) => ({ name: "Contract triage", app: f.support }),
    path: (guid) => `/workflows/${guid}`,
    update: () => ({ field: "name", value: "Contract routing", shown: (record) => record.name }),
    replace: (f) => ({ field: "app", value: f.sales }),
    drift: () => ({ body: { name: "Renamed out of band" }, field: "name", value: "Renamed out of band" }),
  },
  Dataset: {
    inputs: (f) => ({ name: "Contract set", app: f.support }),
    path: (guid) => `/datasets/${guid}`,
    update: () => ({ field: "name", value: "Contract set v2", shown: (record) => record.name }),
    replace: (f) => ({ field: "app", value: f.sales }),
    drift: () => ({ body: { name: "Renamed out of band" }, field: "name", value: "Renamed out of band" }),
  },
  Eval: {
    inputs: (f) => ({ name: "Contract quality", action: f.summarize, evalTypes: [{ guid: f.exactMatch }] }),
    path: (guid) => `/evals/${guid}`,
    update: (f) => ({
      field: "evalTypes",
      value: [{ guid: f.toxicity }],
      shown: (record) => record.eval_types.map((type: { guid: string }) => ({ guid: type.guid })),
    }),
    replace: () => ({ field: "name", value: "Contract quality v2" }),
    drift: (f) => ({ body: { eval_types: [{ guid: f.exactMatch }] }, field: "evalTypes", value: [{ guid: f.exactMatch }] }),
  },
  Experiment: {
    inputs: (f) => ({ name: "Contract tone", app: f.support, primaryAction: f.summarize, secondaryAction: f.classify }),
    path: (guid) => `/experiments/${guid}`,
    update: () => ({ field: "name", value: "Contract tone v2", shown: (record) => record.name }),
    replace: (f) => ({ field: "app", value: f.sales }),
    drift: (f) => ({ body: { secondary_action: f.summarize }, field: "secondaryAction", value: f.summarize }),
  },
  Skill: {
    // Create succeeds only under the name of a configured Skill: the fixture's "web-search".
    inputs: () => ({ name: "web-search", type: "web" }),
    path: (guid) => `/skills/${guid}`,
    update: () => ({ field: "name", value: "web-search-eu", shown: (record) => record.name }),
    replace: () => ({ field: "type", value: "calculator" }),
    drift: () => ({ body: { name: "renamed by hand" }, field: "name", value: "renamed by hand" }),
  },
  ContextSource: {
    inputs: (f) => ({ context: f.handbook, url: "https://docs.example.com/returns.txt", name: "Returns" }),
    path: (guid, f) => `/contexts/${f.handbook}/context_sources/${guid}`,
    update: () => ({ field: "name", value: "Returns v2", shown: (record) => record.name }),
    replace: () => ({ field: "url", value: "https://docs.example.com/refunds.txt" }),
    drift: () => ({
      body: { name: "Renamed out of band", splitterConfig: { chunk_size: 1000 }, loaderConfig: [] },
      field: "name",
      value: "Renamed out of band",
    }),
  },
  FineTune: {
    inputs: (f) => ({
      name: "Contract tune",
      app: f.support,
      dataset: f.dataset,
      dataIds: f.dataIds,
      baseModel: "gpt-4o-mini",
      providerConnection: f.providerConnection,
    }),
    path: (guid) => `/finetune/${guid}`,
    update: () => ({ field: "name", value: "Contract tune v2", shown: (record) => record.name }),
    replace: () => ({ field: "baseModel", value: "gpt-4o" }),
    drift: () => ({ body: { name: "Renamed out of band" }, field: "name", value: "Renamed out of band" }),
  },
} satisfies Record<KindName, Scenario>;

const withoutProvider = ({ __provider, ...rest }: Props) => rest;
/** A value no declared field accepts. */
const BOGUS = { bogus: true };

let bed: Testbed;
let fixtures: Fixtures;
const registrations = new Map<string, Registration>();

beforeAll(async () => {
  bed = await startTestbed();
  const apps = (await bed.api("GET", "/apps")).body.data as { guid: string; name: string }[];
  const appGuid = (name: string) => apps.find((app) => app.name === name)!.guid;
  const actions = (await bed.api("GET", `/apps/${appGuid("Support")}/actions`)).body as { guid: string; name: string }[];
  const workspace = (await bed.api("GET", "/workspaces/current")).body;
  const contexts = (await bed.api("GET", `/workspaces/${workspace.guid}/context`)).body as { guid: string; name: string }[];
  const types = (await bed.api("GET", "/evals/types")).body as { guid: string; name: string }[];
  // Fine-tune create takes internal numeric ids, which only the emulator's own routes show.
  const { ids } = await logData(bed.emulator, 10);
  fixtures = {
    support: appGuid("Support"),
    sales: appGuid("Sales"),
    summarize: actions.find((action) => action.name === "Summarize")!.guid,
    classify: actions.find((action) => action.name === "Classify")!.guid,
    handbook: contexts.find((context) => context.name === "Handbook")!.guid,
    exactMatch: types.find((type) => type.name === "Exact match")!.guid,
    toxicity: types.find((type) => type.name === "Toxicity")!.guid,
    dataset: (await bed.api("POST", "/datasets", { name: "Contract fine-tune set", app: appGuid("Support") })).body.guid,
    dataIds: ids,
    providerConnection: (await providerConnection(bed.emulator, "Contract fine-tune connection")).id,
  };
  const program = Object.entries(scenarios)
    .map(([kind, scenario]) => `new gms.${kind}("contract-${kind}", ${JSON.stringify(scenario.inputs(fixtures))});`)
    .join("\n");
  for (const registration of bed.capture(program)) registrations.set(registration.name, registration);
});
afterAll(() => bed?.close());

describe.each(Object.keys(scenarios) as KindName[])("%s honours the provider contract", (kindName) => {
  const kind: { inputs: InputFields; outputs: OutputFields } = kinds[kindName];
  const scenario: Scenario = scenarios[kindName];
  const declared = Object.entries(kind.inputs);
  const secretFields = declared.filter(([, field]) => field.secret).map(([name]) => name);
  const registration = () => registrations.get(`contract-${kindName}`)!;
  const urn = () => urnOf(registration());
  const secretValues = () => secretFields.map((name) => String(scenario.inputs(fixtures)[name]));

  const checked = async (inputs: Props) => {
    const result = await bed.host.check(urn(), {}, { ...registration().inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };

  /** The object the create test made, as the later tests find it. */
  let id: string;
  let inputs: Props;
  let properties: Props;

  it("create: the outputs hold the inputs and every declared output, and a no-op diff costs no request", async () => {
    expect(registration().type).toBe(`pulumi-nodejs:dynamic/gms:${kindName}`);
    inputs = await checked({});
    const created = await bed.counting(() => bed.host.create(urn(), inputs));
    ({ id, properties } = created.result);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(withoutProvider(properties)).toMatchObject(withoutProvider(inputs));
    expect(properties.guid).toBe(id);
    for (const [name, output] of Object.entries(kind.outputs)) {
      expect(output.schema.safeParse(properties[name]).success, `${name}: ${JSON.stringify(properties[name])}`).toBe(true);
    }
    expect((await bed.api("GET", scenario.path(id, fixtures))).status).toBe(200);

    const same = await bed.counting(() => bed.host.diff(urn(), id, properties, inputs));
    expect(same.result).toEqual({ changes: "none", replaces: [], deleteBeforeReplace: false });
    expect(same.requests).toHaveLength(0);
  });

  it("read: refresh returns the live record", async () => {
    const refreshed = await bed.host.read(urn(), id, properties, inputs);
    expect(refreshed.id).toBe(id);
    expect(refreshed.properties).toEqual(properties);
    expect(refreshed.inputs).toMatchObject(withoutProvider(inputs));
  });

  it("update: a change of an updatable field is applied in place", async () => {
    const { field, value, shown } = scenario.update(fixtures);
    expect(kind.inputs[field]?.change).toBe("update");
    const news = await checked({ ...inputs, [field]: value });
    const diff = await bed.counting(() => bed.host.diff(urn(), id, properties, news));
    expect(diff.result).toEqual({ changes: "some", replaces: [], deleteBeforeReplace: false });
    expect(diff.requests).toHaveLength(0);
    const updated = await bed.host.update(urn(), id, properties, news);
    expect(updated.properties[field]).toEqual(value);
    expect(shown((await bed.api("GET", scenario.path(id, fixtures))).body)).toEqual(value);
    inputs = news;
    properties = updated.properties;
  });

  it("replace: a change of a replace-only field is listed in diff's replaces", async () => {
    const replaceOnly = declared.filter(([, field]) => field.change === "replace").map(([name]) => name);
    if (scenario.replace === null) {
      expect(replaceOnly).toEqual([]);
      return;
    }
    const { field, value } = scenario.replace(fixtures);
    expect(replaceOnly).toContain(field);
    const news = await checked({ ...inputs, [field]: value });
    const diff = await bed.counting(() => bed.host.diff(urn(), id, properties, news));
    expect(diff.result).toEqual({ changes: "some", replaces: [field], deleteBeforeReplace: false });
    expect(diff.requests).toHaveLength(0);
  });

  it("drift: a change made out of band shows on refresh, and the program's value differs from it", async () => {
    const { body, field, value } = scenario.drift(fixtures);
    expect((await bed.api("PUT", scenario.path(id, fixtures), body)).status).toBe(200);
    const refreshed = await bed.host.read(urn(), id, properties, inputs);
    expect(refreshed.id).toBe(id);
    expect(refreshed.properties[field]).toEqual(value);
    expect(refreshed.inputs?.[field]).toEqual(value);
    expect(await bed.host.diff(urn(), id, refreshed.properties, inputs)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
    properties = refreshed.properties;
  });

  it("delete: the object goes, and deleting it again succeeds on the 404", async () => {
    const deleted = await bed.counting(() => bed.host.delete(urn(), id, properties));
    expect(deleted.requests.map((request) => `${request.method} ${request.status}`)).toEqual(["DELETE 200"]);
    expect((await bed.api("GET", scenario.path(id, fixtures))).status).toBe(404);
    const again = await bed.counting(() => bed.host.delete(urn(), id, properties));
    expect(again.requests.map((request) => `${request.method} ${request.status}`)).toEqual(["DELETE 404"]);
    expect((await bed.host.read(urn(), id, properties)).id).toBe("");
  });

  it("secrets: every field declared secret is registered as one and appears in no error and no host output", async () => {
    for (const name of secretFields) expect(scenario.inputs(fixtures), `the scenario must give secret field ${name}`).toHaveProperty(name);
    expect([...registration().secrets].sort()).toEqual([...secretFields].sort());

    const texts: string[] = [];
    // Check failures of the other fields, next to valid secrets.
    const others = Object.fromEntries(declared.filter(([, field]) => !field.secret).map(([name]) => [name, BOGUS]));
    const check = await bed.host.check(urn(), {}, { ...registration().inputs, ...others });
    texts.push(...check.failures.map((failure) => failure.reason));
    // A service that refuses the create and echoes everything it received.
    const echo = await startScriptedServer((request, response) => json(400, { detail: request.body })(request, response));
    try {
      const elsewhere = await checked({ connection: { baseUrl: echo.baseUrl, apiKey: "gms_contract_key" } });
      const error = await bed.host.create(urn(), elsewhere).then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
      expect(error).toBeInstanceOf(Error);
      texts.push(error!.message);
      // The service did receive each secret: the error had it to leak.
      for (const secret of secretValues()) expect(echo.requests.some((request) => request.body.includes(secret))).toBe(true);
    } finally {
      await echo.close();
    }
    texts.push(bed.host.stderr.join(""));
    for (const secret of secretValues()) for (const text of texts) expect(text).not.toContain(secret);
  });

  it("bad input: check names each bad field and makes no request", async () => {
    const bad = Object.fromEntries([...declared.map(([name]) => [name, BOGUS]), ["colour", "blue"]]);
    const result = await bed.counting(() => bed.host.check(urn(), {}, { ...registration().inputs, ...bad }));
    expect(result.requests).toHaveLength(0);
    // A failure's property is a path (`splitterConfig.chunkSize`): each names the field it is in.
    const fields = result.result.failures.map((failure) => failure.property.split(/[.[]/)[0]);
    expect(new Set(fields)).toEqual(new Set(Object.keys(bad)));

    const required = declared.filter(([, field]) => field.required).map(([name]) => name);
    const missing = await bed.counting(() => bed.host.check(urn(), {}, { __provider: registration().inputs.__provider }));
    expect(missing.requests).toHaveLength(0);
    expect(missing.result.failures).toEqual(
      expect.arrayContaining(required.map((name) => ({ property: name, reason: `${name} is required` }))),
    );
  });
});
