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
 * The scenario (fixtures, program, census, the runs after `up` and what a converged run is held to) is
 * test/testing/chaos-scenario.ts, which LocalEngine's suite shares; this suite adds what the CLI has of its own.
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
import type { FaultStats, RunningEmulator } from "../../src/emulator";
import { PulumiCliEngine } from "../../src/testing";
import {
  PROGRAM,
  type RecordedResource,
  censusAfterUp,
  chaosStack,
  chaosSummary,
  expectConverged,
  lateFaults,
  settleThenDestroy,
  startChaosEmulator,
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
      const chaos = await startChaosEmulator(dir);
      const running = (emulator = chaos.emulator);
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
      const converged = { ...up, faults: added(upRuns), census: await censusAfterUp(chaos, recorded) };
      const pendingAfterUp = pending();
      const settled = await settleThenDestroy(chaos, engine, recorded, faultsFor(seed + 1, retryAfter), MAX_RUNS);

      const seconds = ((Date.now() - started) / 1000).toFixed(0);
      process.stdout.write(`${chaosSummary(`cli chaos seed ${seed}, Retry-After ${retryAfter} s`, converged, settled)}; ${seconds} s\n`);

      expectConverged(COPIES, converged, settled);
      // Up did fail, and was run again: otherwise the point of this suite is not made.
      expect(up.runs).toBeGreaterThan(1);
      expect(pendingAfterUp).toEqual([]);
      expect(settled.refreshed.counts.same + settled.refreshed.counts.refresh).toBe(COPIES * 9);
      expect(pending()).toEqual([]);
    }, 600_000);
  },
);
