/**
 * The adaptive pacer (src/client/pacer.ts) held to its goals against every kind of service of test/bench/pacer-sim.mts,
 * the simulation test/bench/pacer.mts prints: a simulated clock, so the result is the same on any machine (no timing
 * of this machine is asserted). A goal the pacer does not meet yet is marked `it.fails`, with its figures: it fails
 * the run once it is met, so that the mark is removed.
 */
import { describe, expect, it } from "vitest";
import { AdaptivePacer } from "../../src/client/pacer";
import * as sim from "../bench/pacer-sim.mts";

const pacer: sim.MakePacer = (options) => new AdaptivePacer(options);

/**
 * Buckets whose goal is not met yet, as test/bench/pacer.mts prints them: burst 20 at 1/s N=100 (31 refusals) and at
 * 5/s N=300 (35); burst 1 at 5/s (1.33x the floor, N=100 and 300) and at 50/s (1.59x): a first rate learned low, found again by probes.
 */
const notYet = new Set(["1/s burst 20 N=100", "5/s burst 20 N=300", "5/s burst 1 N=100", "5/s burst 1 N=300", "50/s burst 1 N=1000"]);

describe("the pacer against token buckets", () => {
  for (const bucket of sim.BUCKETS) {
    const name = `${bucket.rate}/s burst ${bucket.burst} N=${bucket.requests}`;
    (notYet.has(name) ? it.fails : it)(
      `${name}: at most ${sim.BUCKET_GOAL.refusals} refusals, within ${sim.BUCKET_GOAL.ofFloor}x the floor`,
      async () => {
        const { refused, spanMs, floorMs } = await sim.bucket(pacer, bucket);
        expect(refused).toBeLessThanOrEqual(sim.BUCKET_GOAL.refusals);
        expect(spanMs).toBeLessThanOrEqual(floorMs * sim.BUCKET_GOAL.ofFloor);
      },
    );
  }
});

describe("the pacer against a service with no limit refusing at random", () => {
  for (const share of sim.NOISE.shares) {
    it(`${share * 100}%: the median time within ${sim.noiseGoal(share)}x the same client's unpaced`, async () => {
      const { spanMs, referenceMs } = await sim.noise(pacer, share);
      expect(spanMs).toBeLessThanOrEqual(referenceMs * sim.noiseGoal(share));
    });
  }
});

describe("the pacer against a limit that moves", () => {
  it(`accepts ${sim.MOVING.goal.ofAllowed * 100}% of what the limit allowed, with at most ${sim.MOVING.goal.refusals} refusals`, async () => {
    const { refused, accepted, allowed } = await sim.moving(pacer);
    expect(accepted).toBeGreaterThanOrEqual(allowed * sim.MOVING.goal.ofAllowed);
    expect(refused).toBeLessThanOrEqual(sim.MOVING.goal.refusals);
  });
});

describe("the pacer against a limit shared with another client", () => {
  it(`finishes within ${sim.SHARED.goal.ofFloor}x the floor of the half left to it`, async () => {
    const { spanMs, floorMs } = await sim.shared(pacer);
    expect(spanMs).toBeLessThanOrEqual(floorMs * sim.SHARED.goal.ofFloor);
  });

  // Not met yet: 32 refusals (test/bench/pacer.mts).
  it.fails(`meets at most ${sim.SHARED.goal.refusals} refusals`, async () => {
    const { refused } = await sim.shared(pacer);
    expect(refused).toBeLessThanOrEqual(sim.SHARED.goal.refusals);
  });
});
