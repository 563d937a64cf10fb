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
import { afterAll, describe, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator";
import { LocalEngine, installPackageCopy } from "../../src/testing";
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
      const chaos = await startChaosEmulator(dir);
      const running = (emulator = chaos.emulator);
      const stateFile = join(dir, "state.json");
      const recorded = () => (JSON.parse(readFileSync(stateFile, "utf8")) as { resources: RecordedResource[] }).resources;
      const engine = new LocalEngine({ programDir: dir, stateFile, ...chaosStack(running, COPIES) });

      running.faults.set(faultsFor(seed, retryAfter));
      const up = await untilItSucceeds(() => engine.up(), MAX_RUNS);
      const upFaults = running.faults.stats();
      const converged = { ...up, faults: upFaults, census: await censusAfterUp(chaos, recorded) };
      const settled = await settleThenDestroy(chaos, engine, recorded, faultsFor(seed + 1, retryAfter), MAX_RUNS);

      process.stdout.write(`${chaosSummary(`chaos seed ${seed}, Retry-After ${retryAfter} s`, converged, settled)}\n`);
      expectConverged(COPIES, converged, settled);
    }, 300_000);
  },
);
