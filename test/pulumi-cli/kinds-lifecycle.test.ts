/**
 * Every kind's lifecycle on the real Pulumi CLI, against the emulator: one program declares one resource of
 * each kind (plus an App in a second workspace through its own `connection`), and each `up` changes several
 * kinds at once. Each resource refers to fixtures and to objects made through the API by literal GUID, so a
 * replacement of one never touches another. Every step is checked in the CLI's results and through the API.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliName, pulumiCliFor } from "./harness";
import {
  ACME_KEY,
  type Declaration,
  type KindsBed,
  OTHER_KEY,
  code,
  filesUnder,
  idsByName,
  startKindsBed,
  stepsByName,
} from "./kinds-fixtures";

const cli = pulumiCliFor("kinds-lifecycle.test.ts");
const TIMEOUT = 300_000;

const PROVIDER_KEYS = ["sk-kinds-provider-one-4c1d77", "sk-kinds-provider-two-8e2f31"];
/** Written in the program as plain text: the provider marks keys secret whether or not the program did. */
const MODEL_KEYS = ["sk-kinds-model-literal-1a2b90", "sk-kinds-model-literal-3c4d56"];
const ADOPT_KEY = "sk-kinds-adopted-connection-77aa";
const SECRETS = [...PROVIDER_KEYS, ...MODEL_KEYS, ADOPT_KEY, ACME_KEY, OTHER_KEY];

/** The kinds' resource names and the API path of an object of each. */
const KINDS = {
  app: "App",
  pc: "ProviderConnection",
  model: "Model",
  workflow: "Workflow",
  dataset: "Dataset",
  eval: "Eval",
  experiment: "Experiment",
  skill: "Skill",
  source: "ContextSource",
  tune: "FineTune",
} as const;
type Key = keyof typeof KINDS | "other";

describe.skipIf(!cli)(`every kind's lifecycle on the real engine: ${cliName(cli)}`, () => {
  let bed: KindsBed;
  let g: KindsBed["guids"];
  let args: Record<Key, Record<string, unknown>>;
  let adopted: Declaration[] = [];
  const datasets: string[] = [];
  const connections: number[] = [];
  const VERSION = "5b0a3c4e-1f2d-4e6f-8a9b-0c1d2e3f4a5b";

  const declarations = (): Declaration[] => [
    ...Object.entries(KINDS).map(([key, kind]) => ({ kind, name: key, args: args[key as Key] })),
    { kind: "App", name: "other", args: args.other },
    ...adopted,
  ];
  const pathOf = (key: Key, guid: string): string =>
    key === "source" ? `/contexts/${args.source.context}/context_sources/${guid}` : PATHS[key === "other" ? "app" : key](guid);
  const PATHS: Record<keyof typeof KINDS, (guid: string) => string> = {
    app: (guid) => `/apps/${guid}`,
    pc: (guid) => `/providers/${guid}`,
    model: (guid) => `/models/${guid}`,
    workflow: (guid) => `/workflows/${guid}`,
    dataset: (guid) => `/datasets/${guid}`,
    eval: (guid) => `/evals/${guid}`,
    experiment: (guid) => `/experiments/${guid}`,
    skill: (guid) => `/skills/${guid}`,
    source: (guid) => `/contexts/{context}/context_sources/${guid}`,
    tune: (guid) => `/finetune/${guid}`,
  };
  const get = (key: Key, guid: string) => (key === "other" ? bed.otherApi : bed.api)("GET", pathOf(key, guid));
  const setProviderKey = (key: string) => (bed.engine.options.config!.providerKey = { secret: key });

  beforeAll(async () => {
    bed = await startKindsBed(cli!, "kinds-lifecycle", { config: { providerKey: { secret: PROVIDER_KEYS[0]! } } });
    g = bed.guids;
    for (const name of ["Eval set", "Tune set"])
      datasets.push((await bed.api("POST", "/datasets", { name, app: g.apps.Support })).body.guid);
    for (const name of ["tune-one", "tune-two"]) {
      const made = await bed.api("POST", "/providers", { provider: "openai", key: `sk-${name}-not-secret`, name });
      connections.push(await bed.numericId("providers", made.body.guid));
    }
    args = {
      app: { name: "Helpdesk", description: "Answers tickets" },
      other: { name: "Elsewhere helpdesk", connection: { baseUrl: bed.emulator.url, apiKey: OTHER_KEY } },
      pc: { provider: "openai", key: code(`config.requireSecret("providerKey")`), nickname: "OpenAI prod" },
      model: { llm: "gpt-4o", provider: "openai", key: MODEL_KEYS[0] },
      workflow: { name: "Triage", app: g.apps.Support },
      dataset: { name: "Golden", description: "Reviewed answers", app: g.apps.Support, data: bed.data.slice(0, 2).map((d) => d.guid) },
      eval: { name: "Quality", action: g.actions["Support/Summarize"], evalTypes: [{ guid: g.evalTypes["Exact match"] }] },
      experiment: {
        name: "Tone",
        app: g.apps.Support,
        primaryAction: g.actions["Support/Summarize"],
        secondaryAction: g.actions["Support/Classify"],
      },
      skill: { name: "web-search", type: "web" },
      source: { context: g.contexts.Handbook, url: "https://example.com/handbook.md", name: "Handbook page" },
      tune: {
        name: "Tone tune",
        app: g.apps.Support,
        dataset: datasets[1],
        dataIds: bed.data.slice(0, 10).map((d) => d.id),
        baseModel: "gpt-4o-mini",
        providerConnection: connections[0],
      },
    };
  }, TIMEOUT);
  afterAll(() => bed?.close());

  it(
    "creates one object of each kind, each found through the API as declared",
    async () => {
      const result = await bed.run("up", declarations());
      const steps = stepsByName(result);
      expect(result.counts.create).toBe(11);
      const ids = idsByName(bed);
      for (const key of [...Object.keys(KINDS), "other"] as Key[]) {
        expect(steps[key]?.op).toBe("create");
        expect(ids[key]).toMatch(/^[0-9a-f-]{36}$/);
        const answer = await get(key, ids[key]!);
        expect(answer.status, key).toBe(200);
        expect(answer.body.guid).toBe(ids[key]);
      }
      expect((await get("app", ids.app!)).body).toMatchObject({ name: "Helpdesk", description: "Answers tickets" });
      expect((await get("pc", ids.pc!)).body).toMatchObject({ nickname: "OpenAI prod" });
      expect((await get("model", ids.model!)).body).toMatchObject({ llm: "gpt-4o" });
      expect((await get("workflow", ids.workflow!)).body).toMatchObject({ name: "Triage" });
      expect((await get("tune", ids.tune!)).body).toMatchObject({ name: "Tone tune", base_model: "gpt-4o-mini" });
      // The App with its own connection is in the other workspace, not in Acme.
      expect((await bed.api("GET", `/apps/${ids.other}`)).status).toBe(404);
      expect(bed.resources().every((resource) => !resource.initErrors)).toBe(true);
    },
    TIMEOUT,
  );

  const secretsAbsent = (where: string, text: string) => {
    for (const secret of SECRETS) expect(text.includes(secret), `a secret in ${where}`).toBe(false);
  };
  const checkSecrets = () => {
    for (const file of filesUnder(join(bed.stateDir, ".pulumi"))) secretsAbsent(file.path, file.text);
    const exported = spawnSync(bed.engine.options.cli.bin, ["stack", "export", "--stack", "dev"], {
      cwd: bed.programDir,
      env: bed.engine.environment(),
      encoding: "utf8",
    });
    expect(exported.status).toBe(0);
    expect(JSON.parse(exported.stdout).deployment).toBeDefined();
    secretsAbsent("pulumi stack export", exported.stdout + exported.stderr);
    secretsAbsent("the CLI's output", bed.lines.join("\n"));
  };

  it(
    "keeps every key and API key out of the checkpoint, `pulumi stack export` and the CLI's output",
    async () => {
      const checkpoint = bed.resources();
      const byName = Object.fromEntries(checkpoint.map((r) => [r.urn.slice(r.urn.lastIndexOf("::") + 2), r]));
      const secretSig = "4dabf18193072939515e22adb298388d";
      // The keys and the other App's connection are stored as secrets (ciphertext), inputs and outputs alike.
      expect(byName.pc!.inputs!.key[secretSig]).toBeDefined();
      expect(byName.pc!.outputs!.key[secretSig]).toBeDefined();
      expect(byName.model!.inputs!.key[secretSig]).toBeDefined();
      expect(byName.model!.outputs!.key[secretSig]).toBeDefined();
      expect(byName.other!.inputs!.connection[secretSig]).toBeDefined();
      checkSecrets();
    },
    TIMEOUT,
  );

  it(
    "updates in place: same GUID, `update` naming the changed fields, the API showing the new values",
    async () => {
      const before = idsByName(bed);
      const changed: Partial<Record<Key, string[]>> = {
        app: ["description", "name"],
        other: ["name"],
        pc: ["default", "nickname"],
        model: ["llm"],
        workflow: ["name"],
        dataset: ["data", "description", "name"],
        eval: ["evalTypes"],
        experiment: ["name", "primaryAction", "secondaryAction"],
        skill: ["name"],
        source: ["name", "splitterConfig"],
        tune: ["name"],
      };
      Object.assign(args.app, { name: "Helpdesk 2", description: "Answers tickets fast" });
      Object.assign(args.other, { name: "Elsewhere helpdesk 2" });
      Object.assign(args.pc, { nickname: "OpenAI main", default: true });
      Object.assign(args.model, { llm: "gpt-4o-mini" });
      Object.assign(args.workflow, { name: "Triage 2" });
      const data = bed.data.slice(2, 5).map((d) => d.guid);
      Object.assign(args.dataset, { name: "Golden 2", description: "Reviewed twice", data });
      const evalTypes = [{ guid: g.evalTypes.Toxicity }, { guid: g.evalTypes["Exact match"] }];
      Object.assign(args.eval, { evalTypes });
      Object.assign(args.experiment, {
        name: "Tone 2",
        primaryAction: g.actions["Support/Classify"],
        secondaryAction: g.actions["Support/Summarize"],
      });
      Object.assign(args.skill, { name: "web-search-eu" });
      Object.assign(args.source, { name: "Handbook page 2", splitterConfig: { chunkSize: 400, chunkOverlap: 40 } });
      Object.assign(args.tune, { name: "Tone tune 2" });
      const steps = stepsByName(await bed.run("up", declarations()));
      for (const [key, fields] of Object.entries(changed)) {
        expect(steps[key]?.op, key).toBe("update");
        expect(steps[key]?.changes, key).toEqual(expect.arrayContaining(fields));
        expect(steps[key]?.replaces, key).toEqual([]);
        expect(steps[key]?.id, key).toBe(before[key]);
      }
      expect(idsByName(bed)).toEqual(before);
      const api = async (key: Key) => (await get(key, before[key]!)).body;
      expect(await api("app")).toMatchObject({ name: "Helpdesk 2", description: "Answers tickets fast" });
      expect(await api("other")).toMatchObject({ name: "Elsewhere helpdesk 2" });
      expect(await api("pc")).toMatchObject({ nickname: "OpenAI main", default: true });
      expect(await api("model")).toMatchObject({ llm: "gpt-4o-mini" });
      expect(await api("workflow")).toMatchObject({ name: "Triage 2" });
      expect(await api("dataset")).toMatchObject({ name: "Golden 2", description: "Reviewed twice" });
      const linked = (await bed.api("GET", `/datasets/${before.dataset}/data`)).body;
      expect(((linked.data ?? linked) as { guid: string }[]).map((d) => d.guid).sort()).toEqual([...data].sort());
      expect(((await api("eval")).eval_types as { guid: string }[]).map((t) => t.guid)).toEqual(evalTypes.map((t) => t.guid));
      expect(await api("experiment")).toMatchObject({ name: "Tone 2" });
      expect(await api("skill")).toMatchObject({ name: "web-search-eu" });
      expect(await api("source")).toMatchObject({ name: "Handbook page 2" });
      expect(await api("tune")).toMatchObject({ name: "Tone tune 2" });
    },
    TIMEOUT,
  );

  it(
    "replaces for each replace-only field: `replace` naming it, a new GUID, the old object gone from the API",
    async () => {
      // Round by round, each kind's next replace-only field changes (several kinds per `up`).
      const rounds: [Key, string, unknown][][] = [
        [
          ["pc", "provider", "anthropic"],
          ["model", "provider", "anthropic"],
          ["workflow", "app", g.apps.Sales],
          ["dataset", "app", g.apps.Sales],
          ["eval", "name", "Quality 2"],
          ["experiment", "app", g.apps.Sales],
          ["skill", "type", "search"],
          ["source", "context", g.contexts.FAQ],
          ["tune", "baseModel", "gpt-4o"],
        ],
        [
          ["pc", "key", PROVIDER_KEYS[1]],
          ["model", "key", MODEL_KEYS[1]],
          ["eval", "action", g.actions["Support/Classify"]],
          ["skill", "metadata", [{ name: "engine", required: true, value: "google", type: "string" }]],
          ["source", "url", "https://example.com/handbook-v2.md"],
          ["tune", "dataset", datasets[0]],
        ],
        [
          ["pc", "url", "https://llm.example.com/v1"],
          ["model", "url", "https://llm.example.com/v1"],
          ["eval", "dataset", datasets[0]],
          ["tune", "dataIds", bed.data.slice(2, 12).map((d) => d.id)],
        ],
        [
          ["pc", "name", "primary"],
          ["model", "default", true],
          ["eval", "version", VERSION],
          ["tune", "providerConnection", connections[1]],
        ],
        [
          ["pc", "model", "claude-3-haiku"],
          ["eval", "samplingRate", 0.5],
          ["tune", "app", g.apps.Sales],
        ],
        [
          ["pc", "metadata", [{ name: "region", value: "eu" }]],
          ["eval", "alertOnFail", true],
        ],
      ];
      const replaced = new Set<string>();
      for (const round of rounds) {
        const before = idsByName(bed);
        const contextBefore = args.source.context as string;
        for (const [key, field, value] of round) {
          if (key === "pc" && field === "key") setProviderKey(value as string);
          else args[key][field] = value;
          // An Experiment's Actions belong to its App.
          if (key === "experiment")
            Object.assign(args.experiment, { primaryAction: g.actions["Sales/Pitch"], secondaryAction: g.actions["Sales/Follow up"] });
        }
        const result = await bed.run("up", declarations());
        const steps = stepsByName(result);
        const after = idsByName(bed);
        const touched = new Set(round.map(([key]) => key));
        for (const [key, field] of round) {
          const label = `${key}.${field}`;
          replaced.add(label);
          expect(steps[key]?.op, label).toBe("replace");
          expect(steps[key]?.replaces, label).toContain(field);
          expect(after[key], label).not.toBe(before[key]);
          expect((await get(key, after[key]!)).status, label).toBe(200);
          const oldPath =
            key === "source" ? `/contexts/${contextBefore}/context_sources/${before[key]}` : PATHS[key as keyof typeof KINDS](before[key]!);
          expect((await bed.api("GET", oldPath)).status, `${label}: the old object`).toBe(404);
        }
        for (const step of result.steps) if (!touched.has(step.name as Key)) expect(step.op, step.name).toBe("same");
      }
      expect(replaced.size).toBe(28);
      const api = async (key: Key) => (await get(key, idsByName(bed)[key]!)).body;
      expect(await api("eval")).toMatchObject({ name: "Quality 2", sampling_rate: 0.5, alert_on_fail: true, version: VERSION });
      expect(await api("tune")).toMatchObject({ name: "Tone tune 2", base_model: "gpt-4o" });
      expect(await api("skill")).toMatchObject({ name: "web-search-eu", type: "search" });
    },
    TIMEOUT,
  );

  it(
    "refresh shows what changed through the API, and the next `up` brings it back",
    async () => {
      const ids = idsByName(bed);
      const drift: [Key, string, Record<string, unknown>, string][] = [
        ["app", "PUT", { name: "Renamed outside" }, "name"],
        ["pc", "PUT", { nickname: "Renamed outside" }, "nickname"],
        ["model", "PUT", { llm: "gpt-4.1" }, "llm"],
        ["workflow", "PUT", { name: "Renamed outside" }, "name"],
        ["dataset", "PUT", { name: "Renamed outside" }, "name"],
        ["eval", "PUT", { eval_types: [{ guid: g.evalTypes.Toxicity }] }, "evalTypes"],
        ["experiment", "PUT", { name: "Renamed outside" }, "name"],
        ["skill", "PUT", { name: "Renamed outside" }, "name"],
        ["source", "PUT", { name: "Renamed outside", splitterConfig: { chunk_size: 400, chunk_overlap: 40 }, loaderConfig: [] }, "name"],
        ["tune", "PUT", { name: "Renamed outside" }, "name"],
      ];
      for (const [key, method, body] of drift) expect((await bed.api(method, pathOf(key, ids[key]!), body)).status, key).toBe(200);
      const refreshed = stepsByName(await bed.run("refresh", declarations()));
      for (const [key, , , field] of drift) {
        expect(refreshed[key]?.op, key).toBe("refresh");
        expect(refreshed[key]?.changes, key).toContain(field);
      }
      expect(refreshed.other?.op).toBe("same");
      const checkpoint = Object.fromEntries(bed.resources().map((r) => [r.urn.slice(r.urn.lastIndexOf("::") + 2), r]));
      expect(checkpoint.app!.outputs!.name).toBe("Renamed outside");
      expect(checkpoint.model!.outputs!.llm).toBe("gpt-4.1");

      const restored = stepsByName(await bed.run("up", declarations()));
      for (const [key, , , field] of drift) {
        expect(restored[key]?.op, key).toBe("update");
        expect(restored[key]?.changes, key).toContain(field);
      }
      expect(idsByName(bed)).toEqual(ids);
      const api = async (key: Key) => (await get(key, ids[key]!)).body;
      expect(await api("app")).toMatchObject({ name: "Helpdesk 2" });
      expect(await api("pc")).toMatchObject({ nickname: "OpenAI main" });
      expect(await api("model")).toMatchObject({ llm: "gpt-4o-mini" });
      expect(await api("workflow")).toMatchObject({ name: "Triage 2" });
      expect(await api("dataset")).toMatchObject({ name: "Golden 2" });
      expect(((await api("eval")).eval_types as { guid: string }[]).map((t) => t.guid)).toEqual([
        g.evalTypes.Toxicity,
        g.evalTypes["Exact match"],
      ]);
      expect(await api("experiment")).toMatchObject({ name: "Tone 2" });
      expect(await api("skill")).toMatchObject({ name: "web-search-eu" });
      expect(await api("source")).toMatchObject({ name: "Handbook page 2" });
      expect(await api("tune")).toMatchObject({ name: "Tone tune 2" });
    },
    TIMEOUT,
  );

  it(
    'adopts an object of each kind made through the API (`adopt: "<guid>"`): no second object, the rest updated to the program',
    async () => {
      const post = async (path: string, body: unknown) => {
        const answer = await bed.api("POST", path, body);
        expect(answer.status, path).toBe(200);
        return answer.body.guid as string;
      };
      const support = g.apps.Support!;
      const ids10 = bed.data.slice(0, 10).map((d) => d.id);
      const made: Record<keyof typeof KINDS, [string, Record<string, unknown>]> = {
        app: [await post("/apps", { name: "Adopted app" }), { name: "Adopted app (renamed by Pulumi)" }],
        pc: [
          await post("/providers", { provider: "openai", key: ADOPT_KEY, name: "adopted" }),
          { provider: "openai", key: ADOPT_KEY, name: "adopted" },
        ],
        model: [
          await post("/models", { llm: "o3", provider: "openai", key: ADOPT_KEY }),
          { llm: "o3", provider: "openai", key: ADOPT_KEY },
        ],
        workflow: [await post("/workflows", { name: "Adopted flow", app: support }), { name: "Adopted flow", app: support }],
        dataset: [await post("/datasets", { name: "Adopted set", app: support }), { name: "Adopted set", app: support }],
        eval: [
          await post("/evals", {
            name: "Adopted eval",
            action: g.actions["Support/Summarize"],
            eval_types: [{ guid: g.evalTypes.Toxicity }],
          }),
          { name: "Adopted eval", action: g.actions["Support/Summarize"], evalTypes: [{ guid: g.evalTypes.Toxicity }] },
        ],
        experiment: [
          await post("/experiments", {
            name: "Adopted test",
            app: support,
            primary_action: g.actions["Support/Summarize"],
            secondary_action: g.actions["Support/Classify"],
          }),
          {
            name: "Adopted test",
            app: support,
            primaryAction: g.actions["Support/Summarize"],
            secondaryAction: g.actions["Support/Classify"],
          },
        ],
        skill: [await post("/skills", { name: "code-runner", type: "code" }), { name: "code-runner", type: "code" }],
        source: [
          await post(`/contexts/${g.contexts.Handbook}/context_sources`, { url: "https://example.com/adopted.md" }),
          { context: g.contexts.Handbook, url: "https://example.com/adopted.md" },
        ],
        tune: [
          await post("/finetune", {
            name: "Adopted tune",
            app: support,
            dataset: datasets[1],
            data_ids: ids10,
            base_model: "gpt-4o-mini",
            workspaceModelProviderId: connections[0],
          }),
          {
            name: "Adopted tune",
            app: support,
            dataset: datasets[1],
            dataIds: ids10,
            baseModel: "gpt-4o-mini",
            providerConnection: connections[0],
          },
        ],
      };
      adopted = Object.entries(made).map(([key, [guid, values]]) => ({
        kind: KINDS[key as keyof typeof KINDS],
        name: `adopted-${key}`,
        args: { ...values, adopt: guid },
      }));
      const start = bed.requests.length;
      const steps = stepsByName(await bed.run("up", declarations()));
      const writes = bed.requests.slice(start).filter((request) => request.method === "POST");
      expect(writes.map((request) => request.path)).toEqual([]);
      const ids = idsByName(bed);
      for (const [key, [guid]] of Object.entries(made)) {
        expect(steps[`adopted-${key}`]?.op, key).toBe("create");
        expect(ids[`adopted-${key}`], key).toBe(guid);
      }
      for (const key of [...Object.keys(KINDS), "other"]) expect(steps[key]?.op, key).toBe("same");
      expect((await bed.api("GET", `/apps/${made.app[0]}`)).body.name).toBe("Adopted app (renamed by Pulumi)");
      expect(bed.resources()).toHaveLength(21);
    },
    TIMEOUT,
  );

  it(
    "deletes what the program no longer declares: a `delete` step each, gone from the API",
    async () => {
      const ids = idsByName(bed);
      const contexts = { source: args.source.context as string, "adopted-source": g.contexts.Handbook! };
      const result = await bed.run("up", []);
      const steps = stepsByName(result);
      expect(result.counts.delete).toBe(21);
      for (const [name, guid] of Object.entries(ids)) {
        expect(steps[name]?.op, name).toBe("delete");
        const key = (name.replace(/^adopted-/, "") as Key) ?? name;
        const path =
          key === "source"
            ? `/contexts/${contexts[name as "source"]}/context_sources/${guid}`
            : PATHS[key === "other" ? "app" : (key as keyof typeof KINDS)](guid);
        expect((await (key === "other" ? bed.otherApi : bed.api)("GET", path)).status, name).toBe(404);
      }
      expect(bed.resources()).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "never showed a key or API key in any checkpoint, backup, export or output line, over every run",
    async () => {
      expect(bed.lines.length).toBeGreaterThan(50);
      checkSecrets();
      const destroyed = await bed.run("destroy", []);
      expect(destroyed.steps).toEqual([]);
      checkSecrets();
    },
    TIMEOUT,
  );
});
