/**
 * The adaptive pacer (src/client/pacer.ts) held to its goals against every kind of service of test/bench/pacer-sim.mts,
 * the simulation test/bench/pacer.mts prints: a simulated clock, so the result is the same on any machine (no timing
 * of this machine is asserted). Each limit is met with its answers together and in turn (a refusal at once, as the
 * emulator answers). Every goal is met: one the pacer stopped meeting would be
 * marked `it.fails` with its figures, which fails the run once it is met again.
 */
import { describe, expect, it } from "vitest";
import { AdaptivePacer } from "../../src/client/pacer";
import * as sim from "../bench/pacer-sim.mts";

const pacer: sim.MakePacer = (options) => new AdaptivePacer(options);

describe("the pacer against token buckets", () => {
  for (const shape of sim.ANSWER_SHAPES) {
    for (const bucket of sim.BUCKETS) {
      const name = `${bucket.rate}/s burst ${bucket.burst} N=${bucket.requests}, ${shape.name}`;
      it(`${name}: at most ${sim.BUCKET_GOAL.refusals} refusals, within ${sim.BUCKET_GOAL.ofFloor}x the floor`, async () => {
        const { refused, spanMs, floorMs } = await sim.bucket(pacer, bucket, shape.answers);
        expect(refused).toBeLessThanOrEqual(sim.BUCKET_GOAL.refusals);
        expect(spanMs).toBeLessThanOrEqual(floorMs * sim.BUCKET_GOAL.ofFloor);
      });
    }
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
  for (const shape of sim.ANSWER_SHAPES) {
    it(`${shape.name}: accepts ${sim.MOVING.goal.ofAllowed * 100}% of what the limit allowed, with at most ${sim.MOVING.goal.refusals} refusals`, async () => {
      const { refused, accepted, allowed } = await sim.moving(pacer, shape.answers);
      expect(accepted).toBeGreaterThanOrEqual(allowed * sim.MOVING.goal.ofAllowed);
      expect(refused).toBeLessThanOrEqual(sim.MOVING.goal.refusals);
    });
  }
});

describe("the pacer against a limit shared with another client", () => {
  for (const shape of sim.ANSWER_SHAPES) {
    it(`${shape.name}: finishes within ${sim.SHARED.goal.ofFloor}x the floor of the half left to it`, async () => {
      const { spanMs, floorMs } = await sim.shared(pacer, shape.answers);
      expect(spanMs).toBeLessThanOrEqual(floorMs * sim.SHARED.goal.ofFloor);
    });

    it(`${shape.name}: meets at most ${sim.SHARED.goal.refusals} refusals`, async () => {
      const { refused } = await sim.shared(pacer, shape.answers);
      expect(refused).toBeLessThanOrEqual(sim.SHARED.goal.refusals);
    });
  }
});
