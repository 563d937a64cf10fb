/**
 * LocalEngine against the real Pulumi CLI (PulumiCliEngine), differentially: the same program, in two program
 * directories, against two emulators started from the same fixtures (fixture GUIDs fixed, so only the
 * objects the programs create get different GUIDs), through one sequence of operations that covers every
 * kind (FineTune included), updates in place, replaces (create-before-delete and `deleteBeforeReplace`), a
 * secret-only change, a failed step together with the removal of a resource, a refresh after the same
 * out-of-band change on both services, and a destroy. After each operation the suite compares:
 * - the steps, per URN (op, changed properties, properties forcing a replacement), order-insensitive;
 * - the stack outputs (value and secret flag);
 * - the state's resources: URNs, input and output names, non-secret values, which outputs are secret;
 * - the requests the service answered (method and path with GUIDs templated), as multisets (the polls of a
 *   create's wait, whose number depends on the machine's load, as present or absent).
 * GUIDs of created objects are named after the resource holding them (its id), timestamps are masked.
 *
 * Every difference found is either fixed in LocalEngine or expected here by name (`PINNED`), with why:
 * 1. CLI state records the root stack and the default provider of `pulumi-nodejs` (`pulumi:pulumi:Stack`,
 *    `pulumi:providers:pulumi-nodejs::default`); LocalEngine records neither (the engine's own bookkeeping,
 *    which the offline engine has no use for). Pinned in the first `up`.
 * 2. After a failed step, the CLI by default (no `--continue-on-error`) starts no further step; with it, the steps
 *    that do not depend on the failed one run. LocalEngine used to act as `--continue-on-error` always; it now
 *    follows the CLI's default and takes `continueOnError` (FIXED in engine.ts; test/testing/after-failure.test.ts
 *    shows a registration that arrives after the failure on both engines, both ways), and it answers a
 *    failed step's registration as the engine does (`Result.FAIL`, not a monitor error: FIXED in runner.ts and
 *    engine.ts), so the SDK rejects that resource's outputs; its program process, as `pulumi-language-nodejs`
 *    (cmd/run) does, turns that unhandled rejection into a failed program, and a failed program deletes nothing.
 *    The CLI running the program inline used to delete the removed Experiment in that run: the Automation API's
 *    language server signalled a finished program despite the rejection. FIXED in cli-driver.ts (the program
 *    waits for the SDK's requests and throws the failure), so both engines delete it in the next successful `up`.
 * 3. The CLI's result lists the step of a failed create (the engine announced it before the provider refused);
 *    LocalEngine's steps are the steps that were done (a failure is in `EngineError.errors`). Pinned:
 *    `refusedStepShownByCli`. Without `--continue-on-error` nothing else differs: neither engine deletes what the
 *    program no longer declares after the failure.
 * 4. PulumiCliEngine reports stack outputs only for a successful `up` (from the Automation API's result): none for a
 *    preview or a failed `up`; LocalEngine reports the program's outputs for both. Pinned: the preview stage and
 *    `withoutOutputsOfFailedUp`.
 * 5. Refresh: the CLI decides whether a refreshed resource changed with the provider's diff (refreshed outputs as
 *    olds against the recorded inputs, what the next `up` would see), so drift of a computed output alone
 *    (`updatedAt`, a Model's link to a connection) is `same`; LocalEngine reported any output drift as `refresh`.
 *    FIXED in engine.ts (refresh calls the host's diff); the diff makes no request, so the requests agree.
 * 6. Requests: with the same program the two engines send the same requests (check, diff, create, read, update,
 *    delete, lookups) in every stage; no difference in `read`/`diff`/`check` counts showed up.
 * Not different (checked): steps and `changes`/`replaces` of updates, replaces, delete-before-replace and a
 * secret-only replace (the CLI masks secrets, but its `keys` name the replaced secret), secret outputs, state.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSecret } from "../../src/provider/values";
import { KIND_NAMES } from "../../src/resources";
import { type Fixtures, type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { EngineError, type EngineResult, LocalEngine, PulumiCliEngine } from "../../src/testing";
import type { CliResult } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { numericId } from "../provider/fine-tune-fixture";
import { cliName, makeProgramDir, pulumiCliFor } from "./harness";

const cli = pulumiCliFor("test/pulumi-cli/differential.test.ts");
const TIMEOUT = 300_000;
const GUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** The reads a create's wait repeats (ContextSource indexing, FineTune status): compared as present or absent, not counted. */
const POLLS = /^GET \S*\/(context_sources\/\{guid\}|finetune\/\{guid\}(\/status)?) /;
const guidOf = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
const FIXTURES: Fixtures = {
  workspaces: [
    {
      guid: guidOf(1),
      name: "Differential",
      slug: "differential",
      apiKey: "gms_differential_key",
      apps: [
        {
          guid: guidOf(2),
          name: "Support",
          actions: [
            { guid: guidOf(3), name: "Draft reply", prompt: "Answer: {{question}}", model: "gpt-4o-mini" },
            { guid: guidOf(4), name: "Draft reply (concise)", prompt: "In one sentence: {{question}}", model: "gpt-4o-mini" },
          ],
          data: Array.from({ length: 10 }, (_, index) => ({
            guid: guidOf(100 + index),
            action: "Draft reply",
            input: { question: `question ${index}` },
            output: `answer ${index}`,
            model: "gpt-4o-mini",
          })),
        },
      ],
      contexts: [{ guid: guidOf(5), name: "Handbook" }],
      skills: [{ guid: guidOf(6), name: "web-search", type: "web" }],
    },
  ],
  evalTypes: [{ guid: guidOf(7), name: "Exact match" }],
};

/**
 * Stages: 1 creates everything; 2 updates in place, replaces (create-before-delete, delete-before-replace, a
 * secret-only change); 3 and 4 add a Skill the service refuses (registered last, after everything else) and
 * remove the Experiment; 5 drops the refused Skill.
 */
const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";
const config = new pulumi.Config();
const stage = config.requireNumber("stage");
const draft = gms.getActionOutput({ app: "Support", name: "Draft reply" });
const concise = gms.getActionOutput({ app: "Support", name: "Draft reply (concise)" });
const records = gms.getDataRecordsOutput({ app: "Support", limit: 50 });
const handbook = gms.getContextOutput({ name: "Handbook" });
const exactMatch = gms.getEvalTypeOutput({ name: "Exact match" });

const app = new gms.App("helpdesk", { name: "Helpdesk", description: stage >= 2 ? "Answers, politely" : "Answers" });
const other = new gms.App("other", { name: "Other" });
const triage = new gms.Workflow("triage", { name: "Triage", app: stage >= 2 ? other.id : app.id });
const escalation = new gms.Workflow("escalation", { name: "Escalation", app: stage >= 2 ? other.id : app.id }, { deleteBeforeReplace: true });
const connection = new gms.ProviderConnection("openai", { provider: "openai", key: config.requireSecret("modelKey"), nickname: "OpenAI", default: true });
// After the first connection, so that the service numbers the connections alike on both sides.
const spare = new gms.ProviderConnection("spare", { provider: "openai", key: config.requireSecret("spareKey"), nickname: "Spare" },
  { dependsOn: [connection] });
const model = new gms.Model("gpt-4o-mini", { llm: "gpt-4o-mini", provider: "openai", key: config.requireSecret("modelKey"), default: true },
  { dependsOn: [connection] });
const golden = new gms.Dataset("golden", {
  name: "Golden answers",
  description: stage >= 2 ? "Checked twice" : "Checked",
  app: app.id,
  data: records.apply((list) => list.slice(0, 3).map((record) => record.guid)),
});
const quality = new gms.Eval("quality", {
  name: stage >= 2 ? "Reply quality v2" : "Reply quality",
  action: draft.guid,
  evalTypes: [{ guid: exactMatch.guid }],
  dataset: golden.id,
});
const experiment = stage < 3
  ? new gms.Experiment("concise", { name: "Concise replies", app: draft.app, primaryAction: draft.guid, secondaryAction: concise.guid })
  : undefined;
const search = new gms.Skill("web-search", { name: "web-search", type: "web" });
const source = new gms.ContextSource("handbook", {
  context: handbook.guid,
  file: new pulumi.asset.FileAsset("handbook.md"),
  splitterConfig: { chunkSize: 400, chunkOverlap: 40 },
  process: true,
  waitForIndexing: { timeoutSeconds: 60 },
});
const examples = new gms.Dataset("tone-examples", { name: "Tone examples", app: draft.app });
const tone = new gms.FineTune("tone", {
  name: stage >= 2 ? "Support tone v2" : "Support tone",
  app: draft.app,
  dataset: examples.id,
  dataIds: JSON.parse(config.require("dataIds")),
  baseModel: "gpt-4o-mini",
  providerConnection: model.workspaceModelProviderId,
});
if (stage === 3 || stage === 4) {
  new gms.Skill("refused", { name: "not-configured", type: "web" },
    { dependsOn: [app, other, triage, escalation, connection, spare, model, golden, quality, search, source, examples, tone] });
}

export const appGuid = app.guid;
export const appDescription = app.description;
export const triageApp = triage.app;
export const providerKey = spare.key;
export const modelConnection = model.providerGuid;
export const datasetRecords = golden.data.apply((data) => data?.length ?? 0);
export const evalDataType = quality.dataType;
export const experimentStatus = experiment ? experiment.status : "removed";
export const skillGuid = search.guid;
export const handbookStatus = source.indexingStatus;
export const fineTuneStatus = tone.status;
`;

type Side = "local" | "cli";
type Json = any;
type Outcome = { result: EngineResult | CliResult | undefined; error: EngineError | undefined };

interface StateResource {
  urn: string;
  type: string;
  id: string;
  inputs: Record<string, Json>;
  outputs: Record<string, Json>;
  pending: boolean;
}

/** Names each created object's GUID after the resource whose id it is; fixture GUIDs are the same on both sides. */
function labeller(resources: StateResource[]): (value: Json) => Json {
  const labels = new Map<string, string>();
  for (const resource of resources) {
    const name = resource.urn.slice(resource.urn.lastIndexOf("::") + 2);
    if (resource.id && !resource.id.startsWith("00000000-")) labels.set(resource.id, `<${name}${resource.pending ? " (replaced)" : ""}>`);
  }
  const label = (value: Json): Json => {
    if (typeof value === "string") {
      if (TIME.test(value)) return "<time>";
      if (/^ftjob-[0-9a-f]{32}$/.test(value)) return "<job>";
      return value.replace(GUID, (guid) => (guid.startsWith("00000000-") ? guid : (labels.get(guid) ?? "<other guid>")));
    }
    if (Array.isArray(value)) return value.map(label);
    if (value !== null && typeof value === "object") {
      if (isSecret(value)) return "<secret>";
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((key) => [key, label(value[key])]),
      );
    }
    return value;
  };
  return label;
}

describe.skipIf(!cli)(`LocalEngine and ${cliName(cli)}, differentially`, () => {
  const dirs = {} as Record<Side, string>;
  const emulators = {} as Record<Side, RunningEmulator>;
  const requests: Record<Side, RequestLogEntry[]> = { local: [], cli: [] };
  let dataIds: number[];
  let work: string;

  const config = (side: Side, stage: number, openaiKey: string) => ({
    "gms:baseUrl": emulators[side].url,
    "gms:apiKey": { secret: emulators[side].apiKey },
    spareKey: { secret: openaiKey },
    modelKey: { secret: "sk-model-5150" },
    stage: String(stage),
    dataIds: JSON.stringify(dataIds),
  });
  const common = { project: "differential", stack: "dev", secretsPassphrase: "differential", log: () => undefined };
  const env = { GMS_RETRY_BASE_DELAY_MS: "5", GMS_MAX_RETRIES: "1" };
  const local = (stage: number, openaiKey: string, continueOnError = false) =>
    new LocalEngine({
      ...common,
      env,
      programDir: dirs.local,
      stateFile: join(dirs.local, "state.json"),
      config: config("local", stage, openaiKey),
      continueOnError,
    });
  const real = (stage: number, openaiKey: string, continueOnError = false) =>
    new PulumiCliEngine({
      ...common,
      env,
      cli: cli!,
      programDir: dirs.cli,
      stateDir: join(work, "cli-state"),
      config: config("cli", stage, openaiKey),
      continueOnError,
    });

  /** The state's custom resources (the CLI's stack and providers set apart), and the CLI-only entries. */
  const stateOf = (side: Side): { resources: StateResource[]; others: string[] } => {
    if (side === "local") {
      const document = JSON.parse(readFileSync(join(dirs.local, "state.json"), "utf8"));
      const resources = (document.resources as Json[]).map((resource) => ({
        urn: resource.urn,
        type: resource.type,
        id: resource.id,
        inputs: resource.inputs,
        outputs: resource.outputs,
        pending: resource.pendingReplacement === true,
      }));
      return { resources, others: [] };
    }
    const checkpoint = JSON.parse(readFileSync(real(0, "").checkpointFile(), "utf8"));
    const all = (checkpoint.checkpoint.latest?.resources ?? []) as Json[];
    const custom = (resource: Json) => resource.custom === true && !String(resource.type).startsWith("pulumi:providers:");
    return {
      resources: all.filter(custom).map((resource) => ({
        urn: resource.urn,
        type: resource.type,
        id: resource.id,
        inputs: resource.inputs ?? {},
        outputs: resource.outputs ?? {},
        pending: resource.delete === true,
      })),
      others: all.filter((resource) => !custom(resource)).map((resource) => resource.urn),
    };
  };

  const settle = (operation: Promise<EngineResult | CliResult>): Promise<Outcome> =>
    operation.then(
      (result) => ({ result, error: undefined }),
      (error: unknown) => {
        if (!(error instanceof EngineError)) throw error;
        return { result: error.result, error };
      },
    );

  /** Runs one operation on both sides at once; answers every difference, each as one line. */
  async function both(
    run: (side: Side) => Promise<EngineResult | CliResult>,
    stateful = true,
  ): Promise<{ outcomes: Record<Side, Outcome>; differences: string[] }> {
    const start = { local: requests.local.length, cli: requests.cli.length };
    const [localOutcome, cliOutcome] = await Promise.all([settle(run("local")), settle(run("cli"))]);
    const outcomes = { local: localOutcome, cli: cliOutcome };
    const differences: string[] = [];
    const states = { local: stateOf("local"), cli: stateOf("cli") };
    const labels = { local: labeller(states.local.resources), cli: labeller(states.cli.resources) };
    const differ = (what: string, a: unknown, b: unknown) => {
      const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
      if (x !== y) differences.push(`${what}: local ${x}, cli ${y}`);
    };

    differ("failed", Boolean(localOutcome.error), Boolean(cliOutcome.error));
    // Steps per URN.
    const stepsOf = (outcome: Outcome) =>
      new Map((outcome.result?.steps ?? []).map((step) => [step.urn, { op: step.op, changes: step.changes, replaces: step.replaces }]));
    const steps = { local: stepsOf(localOutcome), cli: stepsOf(cliOutcome) };
    for (const urn of [...new Set([...steps.local.keys(), ...steps.cli.keys()])].sort())
      differ(`step ${urn}`, steps.local.get(urn), steps.cli.get(urn));
    // Stack outputs.
    const outputs = (side: Side) => labels[side](outcomes[side].result?.outputs ?? {});
    differ("outputs", outputs("local"), outputs("cli"));
    // State.
    if (stateful) {
      const byUrn = (side: Side) =>
        new Map(states[side].resources.map((resource) => [`${resource.urn}${resource.pending ? " (replaced)" : ""}`, resource]));
      const [a, b] = [byUrn("local"), byUrn("cli")];
      for (const urn of [...new Set([...a.keys(), ...b.keys()])].sort()) {
        const [x, y] = [a.get(urn), b.get(urn)];
        if (!x || !y) {
          differences.push(`state ${urn}: ${x ? "local only" : "cli only"}`);
          continue;
        }
        for (const part of ["inputs", "outputs"] as const) {
          differ(`state ${urn} ${part} names`, Object.keys(x[part]).sort(), Object.keys(y[part]).sort());
          const secrets = (props: Record<string, Json>) =>
            Object.keys(props)
              .filter((key) => isSecret(props[key]))
              .sort();
          differ(`state ${urn} ${part} secret`, secrets(x[part]), secrets(y[part]));
          for (const key of Object.keys(x[part]).filter((key) => key in y[part] && key !== "__provider"))
            differ(`state ${urn} ${part}.${key}`, labels.local(x[part][key]), labels.cli(y[part][key]));
        }
      }
    }
    // Requests, as multisets.
    const counted = (side: Side) => {
      const counts = new Map<string, number>();
      for (const entry of requests[side].slice(start[side])) {
        const key = `${entry.method} ${entry.path.replace(GUID, (guid) => (guid.startsWith("00000000-") ? guid : "{guid}"))} ${entry.status}`;
        // A wait polls until the service is done: how often depends on the machine's load, not on the engine.
        counts.set(key, POLLS.test(key) ? 1 : (counts.get(key) ?? 0) + 1);
      }
      return counts;
    };
    const [ra, rb] = [counted("local"), counted("cli")];
    for (const key of [...new Set([...ra.keys(), ...rb.keys()])].sort()) {
      if (ra.get(key) !== rb.get(key)) differences.push(`requests ${key}: local ${ra.get(key) ?? 0}, cli ${rb.get(key) ?? 0}`);
    }
    return { outcomes, differences };
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "gms-differential-"));
    dirs.local = makeProgramDir("gms-differential-local", PROGRAM);
    dirs.cli = makeProgramDir("gms-differential-cli", PROGRAM);
    for (const dir of Object.values(dirs)) writeFileSync(join(dir, "handbook.md"), "# Handbook\n\nAnswer in plain words.\n");
    for (const side of ["local", "cli"] as const) {
      emulators[side] = await startEmulator({
        fixtures: FIXTURES,
        fineTuneSeconds: 0,
        onRequestComplete: (entry) => requests[side].push(entry),
      });
    }
    // The records' internal ids, which a FineTune names, are the same on both services.
    const ids = async (side: Side) =>
      Promise.all(Array.from({ length: 10 }, (_, index) => numericId(emulators[side], "data", guidOf(100 + index))));
    dataIds = await ids("local");
    expect(await ids("cli")).toEqual(dataIds);
  }, TIMEOUT);
  afterAll(async () => {
    await Promise.all(Object.values(emulators).map((emulator) => emulator.close()));
    for (const dir of [work, ...Object.values(dirs)]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  type Run = (side: Side) => Promise<EngineResult | CliResult>;
  /** The same stage on both sides, with or without `--continue-on-error` (LocalEngine's `continueOnError`). */
  const stage =
    (number: number, spareKey: string, operation: "preview" | "up" | "refresh" | "destroy", continueOnError = false): Run =>
    (side) =>
      (side === "local" ? local(number, spareKey, continueOnError) : real(number, spareKey, continueOnError))[operation]();
  const U = "urn:pulumi:dev::differential::pulumi-nodejs:dynamic/gms:";
  /** PINNED (list item 3): the CLI reports the step of a failed create (the engine announced it); LocalEngine lists done steps only. */
  const refusedStepShownByCli = `step ${U}Skill::refused: local undefined, cli {"op":"create","changes":[],"replaces":[]}`;
  /** PINNED 4: a failed `up` of PulumiCliEngine has no outputs (they come from the Automation API's result); LocalEngine's has them. */
  const withoutOutputsOfFailedUp = (outcomes: Record<Side, Outcome>, differences: string[]) => {
    expect(outcomes.cli.result!.outputs).toEqual({});
    expect(Object.keys(outcomes.local.result!.outputs).length).toBeGreaterThan(0);
    return differences.filter((line) => !line.startsWith("outputs:"));
  };
  const failureMessage = /create of urn:pulumi:dev::differential::pulumi-nodejs:dynamic\/gms:Skill::refused failed: Cannot create Skill/;

  it(
    "up: every kind is created alike; the CLI's state also holds the root stack and the default provider (PINNED 1)",
    async () => {
      const { outcomes, differences } = await both(stage(1, "sk-spare-first", "up"));
      expect(outcomes.local.error).toBeUndefined();
      expect(outcomes.cli.error).toBeUndefined();
      expect(differences).toEqual([]);
      const kinds = new Set(stateOf("local").resources.map((resource) => resource.type.split(":").pop()));
      expect([...kinds].sort()).toEqual([...KIND_NAMES].sort());
      expect(outcomes.local.result!.counts.create).toBe(14);
      expect(stateOf("local").others).toEqual([]);
      expect(stateOf("cli").others).toEqual([
        "urn:pulumi:dev::differential::pulumi:pulumi:Stack::differential-dev",
        "urn:pulumi:dev::differential::pulumi:providers:pulumi-nodejs::default",
      ]);
    },
    TIMEOUT,
  );

  it(
    "preview of updates and replaces: the same steps and no requests beyond the program's lookups; only LocalEngine reports outputs (PINNED 4)",
    async () => {
      const { outcomes, differences } = await both(stage(2, "sk-spare-second", "preview"), false);
      // PINNED 4: PulumiCliEngine reads stack outputs from `up`'s result only; the Automation API's preview returns none.
      expect(outcomes.cli.result!.outputs).toEqual({});
      expect(Object.keys(outcomes.local.result!.outputs).length).toBeGreaterThan(0);
      expect(differences.filter((line) => !line.startsWith("outputs:"))).toEqual([]);
      const changed = Object.fromEntries(
        outcomes.local
          .result!.steps.filter((step) => step.op !== "same")
          .map((step) => [step.name, `${step.op} [${step.changes}] r[${step.replaces}]`]),
      );
      expect(changed).toMatchObject({
        helpdesk: "update [description] r[]",
        triage: "replace [app] r[app]",
        escalation: "replace [app] r[app]",
        spare: "replace [key] r[key]",
        quality: "replace [name] r[name]",
        tone: "update [name] r[]",
      });
    },
    TIMEOUT,
  );

  it(
    "up: updates in place, replaces, a delete-before-replace and a secret-only replace are alike",
    async () => {
      const { outcomes, differences } = await both(stage(2, "sk-spare-second", "up"));
      expect(outcomes.local.error).toBeUndefined();
      expect(outcomes.cli.error).toBeUndefined();
      expect(differences).toEqual([]);
      expect(outcomes.local.result!.outputs.providerKey).toEqual({ value: "sk-spare-second", secret: true });
    },
    TIMEOUT,
  );

  it.each([
    { number: 3, continueOnError: false, title: "without --continue-on-error (PINNED 3)" },
    { number: 4, continueOnError: true, title: "with --continue-on-error: both programs fail on the refused registration (FIXED 2)" },
  ])(
    "a refused create with a removed resource, $title: neither deletes the removed Experiment",
    async ({ number, continueOnError }) => {
      const { outcomes, differences } = await both(stage(number, "sk-spare-second", "up", continueOnError));
      expect(outcomes.local.error?.message).toMatch(failureMessage);
      expect(outcomes.cli.error).toBeInstanceOf(EngineError);
      expect(withoutOutputsOfFailedUp(outcomes, differences)).toEqual([refusedStepShownByCli]);
      for (const side of ["local", "cli"] as const)
        expect(stateOf(side).resources.map((resource) => resource.urn)).toContain(`${U}Experiment::concise`);
      // LocalEngine says so; the CLI prints nothing of it.
      expect((outcomes.local.result as EngineResult).heldBack?.map((held) => held.urn)).toEqual([`${U}Experiment::concise`]);
    },
    TIMEOUT,
  );

  it(
    "the next successful up: both delete the Experiment now, the rest is alike",
    async () => {
      const { outcomes, differences } = await both(stage(5, "sk-spare-second", "up"));
      expect(outcomes.local.error).toBeUndefined();
      expect(outcomes.cli.error).toBeUndefined();
      expect(differences).toEqual([]);
      for (const side of ["local", "cli"] as const)
        expect(stateOf(side).resources.map((resource) => resource.urn)).not.toContain(`${U}Experiment::concise`);
    },
    TIMEOUT,
  );

  it(
    "refresh after the same out-of-band changes: drift is reported as the engine decides it, through the provider's diff (FIXED 5)",
    async () => {
      for (const side of ["local", "cli"] as const) {
        const id = (name: string) => stateOf(side).resources.find((resource) => resource.urn.endsWith(`::${name}`))!.id;
        const api = (method: string, path: string, body?: unknown) => callOverHttp(emulators[side], method, path, body);
        expect((await api("PUT", `/workflows/${id("triage")}`, { name: "Renamed" })).status).toBe(200);
        expect((await api("PUT", `/apps/${id("helpdesk")}`, { description: "Drifted" })).status).toBe(200);
        expect((await api("DELETE", `/skills/${id("web-search")}`)).status).toBeLessThan(300);
        // Drift of a computed output alone (the update time): recorded, but no change an `up` would put back.
        expect((await api("PUT", `/workflows/${id("escalation")}`, { name: "Escalation" })).status).toBe(200);
      }
      const updatedAt = () => stateOf("local").resources.find((resource) => resource.urn.endsWith("::escalation"))!.outputs.updatedAt;
      const before = updatedAt();
      const { outcomes, differences } = await both(stage(5, "sk-spare-second", "refresh"));
      expect(outcomes.local.error).toBeUndefined();
      expect(outcomes.cli.error).toBeUndefined();
      expect(differences).toEqual([]);
      const drift = outcomes.local.result!.steps.filter((step) => step.op !== "same").map((step) => `${step.op} ${step.name}`);
      expect(drift.sort()).toEqual(["delete web-search", "refresh helpdesk", "refresh triage"]);
      expect(updatedAt()).not.toEqual(before);
    },
    TIMEOUT,
  );

  it(
    "up after the refresh puts the drift back alike",
    async () => {
      const { outcomes, differences } = await both(stage(5, "sk-spare-second", "up"));
      expect(outcomes.local.error).toBeUndefined();
      expect(outcomes.cli.error).toBeUndefined();
      expect(differences).toEqual([]);
      expect(outcomes.local.result!.counts).toMatchObject({ create: 1, update: 2 });
    },
    TIMEOUT,
  );

  it(
    "destroy deletes everything alike",
    async () => {
      const { outcomes, differences } = await both(stage(5, "sk-spare-second", "destroy"));
      expect(outcomes.local.error).toBeUndefined();
      expect(outcomes.cli.error).toBeUndefined();
      expect(differences).toEqual([]);
      expect(stateOf("local").resources).toEqual([]);
      expect(outcomes.local.result!.counts.delete).toBe(13);
    },
    TIMEOUT,
  );
});
