/**
 * The chaos scenario both engines are held to (test/testing/chaos.test.ts on LocalEngine,
 * test/pulumi-cli/chaos.test.ts on the real CLI): the fixtures, a program of all nine kinds in `copies` copies,
 * and the census that compares the objects live in the emulator's SQLite file with the resources a state records.
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { expect } from "vitest";
import { type FaultStats, type RunningEmulator, startEmulator } from "../../src/emulator";
import { type CliResult, EngineError } from "../../src/testing";
import { expectNoSecretIn } from "../no-secret";

export const FIXTURES = {
  workspaces: [
    {
      name: "Chaos",
      slug: "chaos",
      apiKey: "gms_chaos_key",
      apps: [
        {
          name: "Support",
          actions: [
            { name: "Draft reply", prompt: "Answer: {{question}}", model: "gpt-4o-mini" },
            { name: "Draft reply (concise)", prompt: "Briefly: {{question}}", model: "gpt-4o-mini" },
          ],
        },
      ],
      contexts: [{ name: "Handbook" }],
      skills: [{ name: "web-search", type: "web" }],
    },
  ],
  evalTypes: [{ name: "Exact match" }],
};

/** Config: `copies` (a number) and the secret `openaiKey`. The lookups run under faults too. */
export const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";

const config = new pulumi.Config();
const copies = config.requireNumber("copies");
const key = config.requireSecret("openaiKey");
const draft = gms.getActionOutput({ app: "Support", name: "Draft reply" });
const concise = gms.getActionOutput({ app: "Support", name: "Draft reply (concise)" });
const exactMatch = gms.getEvalTypeOutput({ name: "Exact match" });
const handbook = gms.getContextOutput({ name: "Handbook" });
for (let i = 0; i < copies; i++) {
  const app = new gms.App("app-" + i, { name: "chaos app " + i, description: "chaos" });
  new gms.Workflow("flow-" + i, { name: "chaos flow " + i, app: app.id });
  new gms.Dataset("dataset-" + i, { name: "chaos dataset " + i, description: null, app: app.id });
  new gms.ProviderConnection("connection-" + i, { provider: "openai", key, name: "chaos connection " + i });
  new gms.Model("model-" + i, { llm: "chaos-llm-" + i, provider: "openai", key });
  new gms.Eval("eval-" + i, { name: "chaos eval " + i, action: draft.guid, evalTypes: [{ guid: exactMatch.guid }] });
  new gms.Experiment("experiment-" + i, { name: "chaos experiment " + i, app: draft.app, primaryAction: draft.guid, secondaryAction: concise.guid });
  new gms.Skill("skill-" + i, { name: "web-search", type: "web" });
  new gms.ContextSource("source-" + i, { context: handbook.guid, url: "https://docs.example.com/chaos/" + i + ".md" });
}
`;

/**
 * The service's deadline for a request, in the emulator's late fault and in the provider's client alike:
 * short, so that a create whose POST may still land is waited out in three quarters of a second (the deadline
 * and the client's quarter-second margin) rather than a minute.
 */
export const REQUEST_DEADLINE_MS = 500;

/**
 * Late completions for a fault spec: a `fraction` of requests lose their client before the handler, which
 * then runs up to 300 ms later, never after the deadline.
 */
export const lateFaults = (fraction: number) => `late=${fraction},late-by=0-300,deadline=${REQUEST_DEADLINE_MS}`;

/** The program's secret: with the workspace's key, what no error of a run may hold. */
export const OPENAI_KEY = "sk-chaos-0c1e5b";
export const SECRETS = [FIXTURES.workspaces[0]!.apiKey, OPENAI_KEY];

/**
 * The stack either engine runs the program as: the config, quick and few retries so that steps do fail
 * and only re-running converges, and the service's short deadline.
 */
export function chaosStack(emulator: RunningEmulator, copies: number) {
  return {
    project: "chaos",
    stack: "dev",
    config: {
      "gms:baseUrl": emulator.url,
      "gms:apiKey": { secret: emulator.apiKey },
      copies: String(copies),
      openaiKey: { secret: OPENAI_KEY },
    },
    secretsPassphrase: "chaos",
    env: { GMS_RETRY_BASE_DELAY_MS: "20", GMS_MAX_RETRIES: "1", GMS_REQUEST_DEADLINE_MS: String(REQUEST_DEADLINE_MS) },
    log: () => undefined,
  };
}

/** Each kind's table and the column that tells its objects apart (Skills all copy the one configured name). */
export const KINDS = {
  App: { table: "apps", identity: "name" },
  Workflow: { table: "workflows", identity: "name" },
  Dataset: { table: "datasets", identity: "name" },
  ProviderConnection: { table: "providers", identity: "name" },
  Model: { table: "models", identity: "llm" },
  Eval: { table: "evals", identity: "name" },
  Experiment: { table: "experiments", identity: "name" },
  Skill: { table: "skills", identity: "guid" },
  ContextSource: { table: "context_sources", identity: "url" },
} as const;
export type KindName = keyof typeof KINDS;

export interface Census {
  /** Live objects of the kind (the fixtures' left out). */
  live: number;
  /** Resources of the kind the state holds. */
  recorded: number;
  duplicates: number;
  /** Live objects no resource of the state records. */
  orphans: number;
  /** IDs the state records that no live object has (placeholders of unsettled creates included). */
  missing: number;
  /** Those resources, as `<name> <id>`, so that a failure names them. */
  missingResources: string[];
}

/** A resource as a state records it (LocalEngine's state file, or the custom resources of a CLI checkpoint). */
export interface RecordedResource {
  urn: string;
  type: string;
  id?: string;
}

/** The GUIDs of everything the fixtures made (the App that owns the Actions, the configured Skill, ...): not the program's. */
export function fixtureGuids(emulator: RunningEmulator): Set<string> {
  return new Set(
    Object.values(KINDS).flatMap(({ table }) =>
      emulator.store.db.all<{ guid: string }>(`SELECT guid FROM ${table}`).map((row) => row.guid),
    ),
  );
}

/** Live objects per kind, counted straight in the emulator's database, compared with the resources a state records. */
export function census(dbFile: string, resources: RecordedResource[], fixtures: Set<string>): Record<KindName, Census> {
  const db = new DatabaseSync(dbFile, { readOnly: true });
  try {
    const result = {} as Record<KindName, Census>;
    for (const [kind, { table, identity }] of Object.entries(KINDS) as [KindName, (typeof KINDS)[KindName]][]) {
      const rows = (
        db.prepare(`SELECT guid, ${identity} AS identity FROM ${table} WHERE deleted_at IS NULL`).all() as {
          guid: string;
          identity: string;
        }[]
      ).filter((row) => !fixtures.has(row.guid));
      const ofKind = resources.filter((resource) => resource.type.endsWith(`gms:${kind}`));
      const recorded = new Set(ofKind.map((resource) => resource.id ?? ""));
      const missing = ofKind.filter((resource) => !rows.some((row) => row.guid === resource.id));
      const identities = rows.map((row) => row.identity);
      result[kind] = {
        live: rows.length,
        recorded: ofKind.length,
        duplicates: identities.length - new Set(identities).size,
        orphans: rows.filter((row) => !recorded.has(row.guid)).length,
        missing: missing.length,
        missingResources: missing.map((resource) => `${resource.urn.slice(resource.urn.lastIndexOf("::") + 2)} ${resource.id}`),
      };
    }
    return result;
  } finally {
    db.close();
  }
}

/** The census of every kind expected to be `counts` with no resource missing. */
export const everyKind = (counts: Omit<Census, "missingResources">): Record<string, Census> =>
  Object.fromEntries(Object.keys(KINDS).map((kind) => [kind, { ...counts, missingResources: [] as string[] }])) as Record<string, Census>;

export const totals = (counts: Record<KindName, Census>) =>
  Object.values(counts).reduce(
    (sum, each: Census) => ({
      live: sum.live + each.live,
      recorded: sum.recorded + each.recorded,
      duplicates: sum.duplicates + each.duplicates,
      orphans: sum.orphans + each.orphans,
      missing: sum.missing + each.missing,
    }),
    { live: 0, recorded: 0, duplicates: 0, orphans: 0, missing: 0 },
  );

/**
 * Runs the operation until it succeeds (an EngineError is a failed run), at most `maxRuns` times. No error of a
 * failed run holds a secret of the stack, inspected in full (../no-secret.ts).
 */
export async function untilItSucceeds(operation: () => Promise<unknown>, maxRuns: number): Promise<{ runs: number; errors: string[] }> {
  const errors: string[] = [];
  for (let run = 1; run <= maxRuns; run++) {
    try {
      await operation();
      return { runs: run, errors };
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      expectNoSecretIn(error, SECRETS);
      errors.push(error.message);
    }
  }
  throw new Error(`still failing after ${maxRuns} runs:\n${errors.join("\n")}`);
}

/** The emulator a chaos run applies against (its database in `dir`), the writes it completes, and its census. */
export interface ChaosEmulator {
  emulator: RunningEmulator;
  /** `METHOD path` of each write the emulator completed, GETs left out. */
  writes: string[];
  /** The census of the live objects against the resources a state records. */
  census(recorded: RecordedResource[]): Record<KindName, Census>;
}

export async function startChaosEmulator(dir: string): Promise<ChaosEmulator> {
  const db = join(dir, "emulator.db");
  const writes: string[] = [];
  const onRequestComplete = (entry: { method: string; path: string }) =>
    void (entry.method !== "GET" && writes.push(`${entry.method} ${entry.path}`));
  const emulator = await startEmulator({ db, fixtures: FIXTURES, onRequestComplete });
  const fixtures = fixtureGuids(emulator);
  return { emulator, writes, census: (recorded) => census(db, recorded, fixtures) };
}

/** The operations of an engine the scenario drives (LocalEngine's or PulumiCliEngine's). */
export interface ChaosEngine {
  up(): Promise<CliResult>;
  refresh(): Promise<CliResult>;
  destroy(): Promise<CliResult>;
}

/** Once `up` has converged: the census after it, whatever a late request of up's would still do having landed. */
export async function censusAfterUp(chaos: ChaosEmulator, recorded: () => RecordedResource[]): Promise<Record<KindName, Census>> {
  await chaos.emulator.faults.idle();
  return chaos.census(recorded());
}

/**
 * The scenario's second half, after `up` has converged: refreshed and applied again without faults (what that
 * apply wrote is recorded), then destroyed under `destroyFaults` until that succeeds, and counted once the
 * destroy's late requests have landed.
 */
export async function settleThenDestroy(
  chaos: ChaosEmulator,
  engine: ChaosEngine,
  recorded: () => RecordedResource[],
  destroyFaults: string,
  maxRuns: number,
) {
  const { emulator, writes } = chaos;
  emulator.faults.set(undefined);
  const refreshed = await engine.refresh();
  writes.length = 0;
  const again = await engine.up();
  const writesAgain = [...writes];

  emulator.faults.set(destroyFaults);
  const destroy = await untilItSucceeds(() => engine.destroy(), maxRuns);
  const destroyStats = emulator.faults.stats();
  await emulator.faults.idle();
  const afterDestroy = chaos.census(recorded());
  return { refreshed, again, writesAgain, destroy, destroyStats, afterDestroy };
}

/** An `up` that converged: its runs and their errors, the faults its runs met, and the census after it. */
export interface ConvergedUp {
  runs: number;
  errors: string[];
  faults: FaultStats;
  census: Record<KindName, Census>;
}

export type Settled = Awaited<ReturnType<typeof settleThenDestroy>>;

/** The line a suite prints for a run, after `label` (the seed, the Retry-After). */
export function chaosSummary(label: string, up: ConvergedUp, settled: Settled): string {
  const { faults } = up;
  const { destroy, destroyStats } = settled;
  return (
    `${label}: up converged in ${up.runs} run(s) (${faults.requests} requests: ${faults.error} 5xx, ` +
    `${faults.throttle} 429, ${faults.reset} resets, ${faults.lost} lost answers, ${faults.late} late, ${faults.delayed} delayed); ` +
    `after up ${JSON.stringify(totals(up.census))}; refresh ${JSON.stringify(settled.refreshed.counts)}; ` +
    `destroy in ${destroy.runs} run(s) (${destroyStats.requests} requests: ${destroyStats.lost} lost, ${destroyStats.reset} resets, ` +
    `${destroyStats.late} late, ${destroyStats.error} 5xx); after destroy ${JSON.stringify(totals(settled.afterDestroy))}`
  );
}

/**
 * What either suite holds a converged run to: the faults really happened (lost answers and late completions
 * included: otherwise this proves nothing), each declared object exists exactly once after `up`, the fault-free
 * apply changes and writes nothing, and `destroy` leaves nothing. With CHAOS_VERBOSE, the census and the failed
 * runs' errors are printed.
 */
export function expectConverged(copies: number, up: ConvergedUp, settled: Settled): void {
  if (process.env.CHAOS_VERBOSE)
    process.stdout.write(`${JSON.stringify(up.census)}\n${up.errors.join("\n")}\n${settled.destroy.errors.join("\n")}\n`);
  expect(up.faults.lost).toBeGreaterThan(0);
  expect(up.faults.late + settled.destroyStats.late).toBeGreaterThan(0);
  expect(up.faults.error + up.faults.reset + up.faults.throttle).toBeGreaterThan(0);
  expect(up.census).toEqual(everyKind({ live: copies, recorded: copies, duplicates: 0, orphans: 0, missing: 0 }));
  expect(settled.again.counts.same).toBe(copies * 9);
  expect(settled.writesAgain).toEqual([]);
  expect(settled.afterDestroy).toEqual(everyKind({ live: 0, recorded: 0, duplicates: 0, orphans: 0, missing: 0 }));
}
