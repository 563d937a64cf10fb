/**
 * The product's core promise under injected faults: a program of every kind, applied through LocalEngine
 * against an emulator that answers 5xx, throttles with Retry-After, resets connections before its
 * handlers, loses answers after they committed, and completes requests after the client has gone (late,
 * before the service's deadline, which the provider is configured with). `up` is re-run until it succeeds
 * (a bounded number of runs), then refreshed and applied again without faults (no change, no write), then
 * destroyed with faults until that succeeds. After `up` every declared object exists exactly once and is
 * the one state records; after `destroy` none is left. Checked straight in the emulator's SQLite file, not
 * through the provider under test.
 *
 * Each seed runs twice: with a 429's `Retry-After` of 0 and of 1 s, as a real service sends it (the provider waits that
 * second, and its pacing must not turn such refusals, which its own rate did not cause, into a crawl).
 *
 * Size: CHAOS_COPIES copies of the nine kinds (default 3, so 27 resources) for each seed of CHAOS_SEEDS
 * (default 3 seeds) and each `Retry-After` of CHAOS_RETRY_AFTER (default 0,1). `npm run chaos` runs 100+ resources
 * over five seeds.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { LocalEngine, installPackageCopy } from "../../src/testing";
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
} from "./chaos-scenario";

const COPIES = Number(process.env.CHAOS_COPIES ?? 3);
const SEEDS = (process.env.CHAOS_SEEDS ?? "11,23,47").split(",").map(Number);
const RETRY_AFTERS = (process.env.CHAOS_RETRY_AFTER ?? "0,1").split(",").map(Number);
const MAX_RUNS = 12;
const faultsFor = (seed: number, retryAfter: number) =>
  `seed=${seed},error=0.05,throttle=0.02,retry-after=${retryAfter},reset=0.03,lost=0.07,${lateFaults(0.06)},latency=0-2`;

describe.each(SEEDS.flatMap((seed) => RETRY_AFTERS.map((retryAfter) => [seed, retryAfter] as const)))(
  `converging under injected faults: ${COPIES * 9} resources, seed %i, Retry-After %i s`,
  (seed, retryAfter) => {
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
      const fixtures = fixtureGuids(running);
      const stateFile = join(dir, "state.json");
      const recorded = () => (JSON.parse(readFileSync(stateFile, "utf8")) as { resources: RecordedResource[] }).resources;
      const engine = new LocalEngine({ programDir: dir, stateFile, ...chaosStack(running, COPIES) });

      running.faults.set(faultsFor(seed, retryAfter));
      const up = await untilItSucceeds(() => engine.up(), MAX_RUNS);
      const upFaults = running.faults.stats();
      // Whatever a late request of up's would still do has landed before the objects are counted.
      await running.faults.idle();
      const afterUp = census(dbFile, recorded(), fixtures);

      running.faults.set(undefined);
      await engine.refresh();
      writes.length = 0;
      const again = await engine.up();
      const writesAgain = [...writes];

      running.faults.set(faultsFor(seed + 1, retryAfter));
      const destroy = await untilItSucceeds(() => engine.destroy(), MAX_RUNS);
      const destroyFaults = running.faults.stats();
      await running.faults.idle();
      const afterDestroy = census(dbFile, recorded(), fixtures);

      process.stdout.write(
        `chaos seed ${seed}, Retry-After ${retryAfter} s: up converged in ${up.runs} run(s) (${upFaults.requests} requests: ${upFaults.error} 5xx, ` +
          `${upFaults.throttle} 429, ${upFaults.reset} resets, ${upFaults.lost} lost answers, ${upFaults.late} late); ` +
          `after up ${JSON.stringify(totals(afterUp))}; ` +
          `destroy in ${destroy.runs} run(s) (${destroyFaults.lost} lost, ${destroyFaults.reset} resets, ${destroyFaults.late} late); ` +
          `after destroy ${JSON.stringify(totals(afterDestroy))}\n`,
      );

      if (process.env.CHAOS_VERBOSE)
        process.stdout.write(`${JSON.stringify(afterUp)}\n${up.errors.join("\n")}\n${destroy.errors.join("\n")}\n`);
      // The faults really happened, lost answers and late completions included: otherwise this proves nothing.
      expect(upFaults.lost).toBeGreaterThan(0);
      expect(upFaults.late + destroyFaults.late).toBeGreaterThan(0);
      expect(upFaults.error + upFaults.reset + upFaults.throttle).toBeGreaterThan(0);
      expect(afterUp).toEqual(everyKind({ live: COPIES, recorded: COPIES, duplicates: 0, orphans: 0, missing: 0 }));
      expect(again.counts.same).toBe(COPIES * 9);
      expect(writesAgain).toEqual([]);
      expect(afterDestroy).toEqual(everyKind({ live: 0, recorded: 0, duplicates: 0, orphans: 0, missing: 0 }));
    }, 300_000);
  },
);
