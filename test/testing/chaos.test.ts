/**
 * The product's core promise under injected faults: a program of every kind, applied through LocalEngine
 * against an emulator that answers 5xx, throttles with Retry-After, resets connections before its
 * handlers and loses answers after they committed. `up` is re-run until it succeeds (a bounded number of
 * runs), then refreshed and applied again without faults (no change, no write), then destroyed with
 * faults until that succeeds. After `up` every declared object exists exactly once and is the one state
 * records; after `destroy` none is left. Checked straight in the emulator's SQLite file, not through the
 * provider under test.
 *
 * Size: CHAOS_COPIES copies of the nine kinds (default 3, so 27 resources) for each seed of CHAOS_SEEDS
 * (default 3 seeds). `npm run chaos` runs 100+ resources over five seeds.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { EngineError, LocalEngine, installPackageCopy } from "../../src/testing";

const COPIES = Number(process.env.CHAOS_COPIES ?? 3);
const SEEDS = (process.env.CHAOS_SEEDS ?? "11,23,47").split(",").map(Number);
const MAX_RUNS = 12;
const faultsFor = (seed: number) => `seed=${seed},error=0.06,throttle=0.04,retry-after=0,reset=0.05,lost=0.08,latency=0-2`;

const FIXTURES = {
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

const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
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

/** Each kind's table and the column that tells its objects apart (Skills all copy the one configured name). */
const KINDS = {
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
type KindName = keyof typeof KINDS;

interface Census {
  duplicates: number;
  orphans: number;
  missing: number;
  live: number;
}

/** Live objects per kind (excluding what the fixtures made), compared with the IDs the state file records. */
function census(dbFile: string, stateFile: string, fixtureGuids: Set<string>): Record<KindName, Census> {
  const state = JSON.parse(readFileSync(stateFile, "utf8")) as { resources: { type: string; id: string }[] };
  const db = new DatabaseSync(dbFile, { readOnly: true });
  try {
    const result = {} as Record<KindName, Census>;
    for (const [kind, { table, identity }] of Object.entries(KINDS) as [KindName, (typeof KINDS)[KindName]][]) {
      const rows = (
        db.prepare(`SELECT guid, ${identity} AS identity FROM ${table} WHERE deleted_at IS NULL`).all() as {
          guid: string;
          identity: string;
        }[]
      ).filter((row) => !fixtureGuids.has(row.guid));
      const recorded = new Set(state.resources.filter((resource) => resource.type.endsWith(`gms:${kind}`)).map((resource) => resource.id));
      const identities = rows.map((row) => row.identity);
      result[kind] = {
        live: rows.length,
        duplicates: identities.length - new Set(identities).size,
        orphans: rows.filter((row) => !recorded.has(row.guid)).length,
        missing: [...recorded].filter((id) => !rows.some((row) => row.guid === id)).length,
      };
    }
    return result;
  } finally {
    db.close();
  }
}

const totals = (counts: Record<KindName, Census>) =>
  Object.values(counts).reduce(
    (sum, census) => ({
      live: sum.live + census.live,
      duplicates: sum.duplicates + census.duplicates,
      orphans: sum.orphans + census.orphans,
      missing: sum.missing + census.missing,
    }),
    {
      live: 0,
      duplicates: 0,
      orphans: 0,
      missing: 0,
    },
  );

/** Runs the operation until it succeeds; the number of runs it took. */
async function untilItSucceeds(operation: () => Promise<unknown>): Promise<{ runs: number; errors: string[] }> {
  const errors: string[] = [];
  for (let run = 1; run <= MAX_RUNS; run++) {
    try {
      await operation();
      return { runs: run, errors };
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      errors.push(error.message);
    }
  }
  throw new Error(`still failing after ${MAX_RUNS} runs:\n${errors.join("\n")}`);
}

describe.each(SEEDS)(`converging under injected faults: ${COPIES * 9} resources, seed %i`, (seed) => {
  const dir = mkdtempSync(join(tmpdir(), "gms-chaos-"));
  let emulator: RunningEmulator | undefined;
  afterAll(async () => {
    await emulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("applies until up succeeds, then holds each declared object exactly once; destroy leaves nothing", async () => {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "chaos-program", private: true, type: "module" }));
    writeFileSync(join(dir, "index.ts"), PROGRAM);
    installPackageCopy(dir);
    const dbFile = join(dir, "emulator.db");
    const writes: string[] = [];
    const onRequestComplete = (entry: { method: string; path: string }) =>
      void (entry.method !== "GET" && writes.push(`${entry.method} ${entry.path}`));
    const running = (emulator = await startEmulator({ db: dbFile, fixtures: FIXTURES, onRequestComplete }));
    // What the fixtures made (the App that owns the Actions, the configured Skill) is not the program's.
    const fixtureGuids = new Set(
      Object.values(KINDS).flatMap(({ table }) =>
        running.store.db.all<{ guid: string }>(`SELECT guid FROM ${table}`).map((row) => row.guid),
      ),
    );
    const stateFile = join(dir, "state.json");
    const engine = new LocalEngine({
      programDir: dir,
      stateFile,
      project: "chaos",
      stack: "dev",
      config: {
        "gms:baseUrl": running.url,
        "gms:apiKey": { secret: running.apiKey },
        copies: String(COPIES),
        openaiKey: { secret: "sk-chaos-0c1e5b" },
      },
      secretsPassphrase: "chaos",
      // Quick and few retries, so that steps do fail and only re-running converges.
      env: { GMS_RETRY_BASE_DELAY_MS: "20", GMS_MAX_RETRIES: "1" },
      log: () => undefined,
    });

    running.faults.set(faultsFor(seed));
    const up = await untilItSucceeds(() => engine.up());
    const upFaults = running.faults.stats();
    const afterUp = census(dbFile, stateFile, fixtureGuids);

    running.faults.set(undefined);
    await engine.refresh();
    writes.length = 0;
    const again = await engine.up();
    const writesAgain = [...writes];

    running.faults.set(faultsFor(seed + 1));
    const destroy = await untilItSucceeds(() => engine.destroy());
    const destroyFaults = running.faults.stats();
    const afterDestroy = census(dbFile, stateFile, fixtureGuids);

    process.stdout.write(
      `chaos seed ${seed}: up converged in ${up.runs} run(s) (${upFaults.requests} requests: ${upFaults.error} 5xx, ` +
        `${upFaults.throttle} 429, ${upFaults.reset} resets, ${upFaults.lost} lost answers); after up ${JSON.stringify(totals(afterUp))}; ` +
        `destroy in ${destroy.runs} run(s) (${destroyFaults.lost} lost, ${destroyFaults.reset} resets); ` +
        `after destroy ${JSON.stringify(totals(afterDestroy))}\n`,
    );

    if (process.env.CHAOS_VERBOSE)
      process.stdout.write(`${JSON.stringify(afterUp)}\n${up.errors.join("\n")}\n${destroy.errors.join("\n")}\n`);
    // The faults really happened, lost answers included: otherwise this proves nothing.
    expect(upFaults.lost).toBeGreaterThan(0);
    expect(upFaults.error + upFaults.reset + upFaults.throttle).toBeGreaterThan(0);
    for (const census of Object.values(afterUp)) expect(census).toEqual({ live: COPIES, duplicates: 0, orphans: 0, missing: 0 });
    expect(again.counts.same).toBe(COPIES * 9);
    expect(writesAgain).toEqual([]);
    for (const census of Object.values(afterDestroy)) expect(census).toEqual({ live: 0, duplicates: 0, orphans: 0, missing: 0 });
    const state = JSON.parse(readFileSync(stateFile, "utf8")) as { resources: unknown[] };
    expect(state.resources).toEqual([]);
  }, 300_000);
});
