/**
 * The chaos scenario of test/testing/chaos.test.ts on the real Pulumi CLI: a program of all nine kinds applied
 * with `pulumi up` (PulumiCliEngine, the CLI's own engine and dynamic-provider host, the CLI's default of
 * starting no new step after a failed one) against an emulator that answers 5xx, throttles with Retry-After,
 * resets connections before its handlers, loses answers after they committed, completes requests after the
 * client has gone (late, before the service's deadline, which the provider is configured with) and delays
 * requests. `up` is
 * re-run until it succeeds (a bounded number of runs, each with a fault spec of its own seed, the first with more
 * 5xx so that it does fail), then refreshed and applied again without faults (no
 * change, no write), then destroyed with faults until that succeeds. After `up` every declared object exists
 * exactly once and is the one the CLI's checkpoint records (no duplicate, no orphan, no pending operation);
 * after `destroy` none is left. Counted straight in the emulator's SQLite file, not through the provider. The
 * program's lookups run under the faults too: one that fails fails the program, which must delete nothing it
 * declares (the CLI driver's guard against the Automation API's language server signalling success).
 * The scenario (fixtures, program, census) is test/testing/chaos-scenario.ts, which LocalEngine's suite shares.
 *
 * Each seed runs twice: with a 429's `Retry-After` of 0 and of 1 s, as a real service sends it.
 *
 * Size: CLI_CHAOS_COPIES copies of the nine kinds (default 3, so 27 resources) for each seed of
 * CLI_CHAOS_SEEDS (default 11,23) and each `Retry-After` of CLI_CHAOS_RETRY_AFTER (default 0,1). Skipped, with the
 * reason printed, without a CLI (required under CI=true).
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultStats, type RunningEmulator, startEmulator } from "../../src/emulator";
import { PulumiCliEngine } from "../../src/testing";
import {
  FIXTURES,
  PROGRAM,
  type RecordedResource,
  census,
  chaosStack,
  everyKind,
  fixtureGuids,
  lateFaults,
  totals,
  untilItSucceeds,
} from "../testing/chaos-scenario";
import { cliName, makeProgramDir, pulumiCliFor } from "./harness";

const cli = pulumiCliFor("test/pulumi-cli/chaos.test.ts");
const COPIES = Number(process.env.CLI_CHAOS_COPIES ?? 3);
const SEEDS = (process.env.CLI_CHAOS_SEEDS ?? "11,23").split(",").map(Number);
const RETRY_AFTERS = (process.env.CLI_CHAOS_RETRY_AFTER ?? "0,1").split(",").map(Number);
const MAX_RUNS = 40;
// Denser than test/testing/chaos.test.ts's (0.05/0.02/0.03/0.07/0.06): the provider's own retries absorb those on a
// run of this size, and the point here is `pulumi up` failing and being run again.
const faultsFor = (seed: number, retryAfter: number, error = 0.12) =>
  `seed=${seed},error=${error},throttle=0.05,retry-after=${retryAfter},reset=0.08,lost=0.07,${lateFaults(0.05)},latency=0-2`;
/** The first `up` meets more 5xx, so that it does fail and the point of this suite (running it again) is always made. */
const FIRST_RUN_ERROR = 0.3;

/** The stats of several runs' fault specs, added up. */
const added = (runs: FaultStats[]): FaultStats =>
  Object.fromEntries(
    (Object.keys(runs[0]!) as (keyof FaultStats)[]).map((key) => [key, runs.reduce((sum, stats) => sum + stats[key], 0)]),
  ) as unknown as FaultStats;

interface Checkpoint {
  checkpoint: {
    latest?: {
      resources?: (RecordedResource & { custom?: boolean })[];
      pending_operations?: { type: string; resource: { urn: string } }[];
    };
  };
}

describe.skipIf(cli === undefined).each(SEEDS.flatMap((seed) => RETRY_AFTERS.map((retryAfter) => [seed, retryAfter] as const)))(
  `pulumi up converging under injected faults on the real CLI (${cliName(cli)}): ${COPIES * 9} resources, seed %i, Retry-After %i s`,
  (seed, retryAfter) => {
    // Made before the tests, not while collecting them: a suite skipped without the CLI makes no folder.
    let dir: string;
    let emulator: RunningEmulator | undefined;
    beforeAll(() => {
      dir = makeProgramDir("gms-cli-chaos", PROGRAM);
    });
    afterAll(async () => {
      await emulator?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("re-runs up until it succeeds, then holds each declared object exactly once; destroy leaves nothing", async () => {
      const started = Date.now();
      const dbFile = join(dir, "emulator.db");
      const writes: string[] = [];
      const onRequestComplete = (entry: { method: string; path: string }) =>
        void (entry.method !== "GET" && writes.push(`${entry.method} ${entry.path}`));
      const running = (emulator = await startEmulator({ db: dbFile, fixtures: FIXTURES, onRequestComplete }));
      const fixtures = fixtureGuids(running);
      const engine = new PulumiCliEngine({ cli: cli!, programDir: dir, stateDir: join(dir, "state"), ...chaosStack(running, COPIES) });
      const checkpointFile = engine.checkpointFile();
      const latest = () => (JSON.parse(readFileSync(checkpointFile, "utf8")) as Checkpoint).checkpoint.latest ?? {};
      const pending = () => latest().pending_operations ?? [];
      const recorded = () => (latest().resources ?? []).filter((resource) => resource.custom);

      // Each run its own spec (a seed of its own, the first one with more 5xx), their stats added up.
      const upRuns: FaultStats[] = [];
      const up = await untilItSucceeds(async () => {
        const run = upRuns.length;
        running.faults.set(faultsFor(seed * 1000 + run, retryAfter, run === 0 ? FIRST_RUN_ERROR : undefined));
        try {
          return await engine.up();
        } finally {
          upRuns.push(running.faults.stats());
        }
      }, MAX_RUNS);
      const upFaults = added(upRuns);
      // Whatever a late request of up's would still do has landed before the objects are counted.
      await running.faults.idle();
      const afterUp = census(dbFile, recorded(), fixtures);
      const pendingAfterUp = pending();

      running.faults.set(undefined);
      const refreshed = await engine.refresh();
      writes.length = 0;
      const again = await engine.up();
      const writesAgain = [...writes];

      running.faults.set(faultsFor(seed + 1, retryAfter));
      const destroy = await untilItSucceeds(() => engine.destroy(), MAX_RUNS);
      const destroyFaults = running.faults.stats();
      await running.faults.idle();
      const afterDestroy = census(dbFile, recorded(), fixtures);

      process.stdout.write(
        `cli chaos seed ${seed}, Retry-After ${retryAfter} s: up converged in ${up.runs} run(s) (${upFaults.requests} requests: ${upFaults.error} 5xx, ` +
          `${upFaults.throttle} 429, ${upFaults.reset} resets, ${upFaults.lost} lost answers, ${upFaults.late} late, ` +
          `${upFaults.delayed} delayed); ` +
          `after up ${JSON.stringify(totals(afterUp))}; refresh ${JSON.stringify(refreshed.counts)}; ` +
          `destroy in ${destroy.runs} run(s) (${destroyFaults.requests} requests: ${destroyFaults.lost} lost, ` +
          `${destroyFaults.reset} resets, ${destroyFaults.late} late, ` +
          `${destroyFaults.error} 5xx); after destroy ${JSON.stringify(totals(afterDestroy))}; ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
      );
      if (process.env.CHAOS_VERBOSE)
        process.stdout.write(`${JSON.stringify(afterUp)}\n${up.errors.join("\n")}\n${destroy.errors.join("\n")}\n`);

      // The faults really happened, lost answers and late completions included, and up did fail: otherwise this proves nothing.
      expect(upFaults.lost).toBeGreaterThan(0);
      expect(upFaults.late + destroyFaults.late).toBeGreaterThan(0);
      expect(upFaults.error + upFaults.reset + upFaults.throttle).toBeGreaterThan(0);
      expect(up.runs).toBeGreaterThan(1);
      expect(afterUp).toEqual(everyKind({ live: COPIES, recorded: COPIES, duplicates: 0, orphans: 0, missing: 0 }));
      expect(pendingAfterUp).toEqual([]);
      expect(refreshed.counts.same + refreshed.counts.refresh).toBe(COPIES * 9);
      expect(again.counts.same).toBe(COPIES * 9);
      expect(writesAgain).toEqual([]);
      expect(afterDestroy).toEqual(everyKind({ live: 0, recorded: 0, duplicates: 0, orphans: 0, missing: 0 }));
      expect(pending()).toEqual([]);
    }, 600_000);
  },
);
