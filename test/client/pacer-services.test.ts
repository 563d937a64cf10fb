/**
 * The adaptive pacer (src/client/pacer.ts) held to its goals against every kind of service of test/bench/pacer-sim.mts,
 * the simulation test/bench/pacer.mts prints: a simulated clock, so the result is the same on any machine (no timing
 * of this machine is asserted). Each limit is met with its answers together and in turn (a refusal at once, as the
 * emulator answers). A goal the pacer does not meet yet is marked `it.fails`, with its figures: it fails the run once
 * it is met, so that the mark is removed.
 */
import { describe, expect, it } from "vitest";
import { AdaptivePacer } from "../../src/client/pacer";
import * as sim from "../bench/pacer-sim.mts";

const pacer: sim.MakePacer = (options) => new AdaptivePacer(options);

/**
 * Goals not met yet, as test/bench/pacer.mts prints them. Together: burst 20 at 1/s N=100 (31 refusals) and at 5/s
 * N=300 (35); burst 1 at 5/s (1.33x the floor, N=100 and 300) and at 50/s (1.59x); the shared limit (32 refusals). In turn: the same buckets (30, 37
 * refusals; 1.33x, 1.33x, 1.64x), the moving limit (42 refusals, 75% of the allowed accepted) and the shared limit
 * (26 refusals).
 */
const notYet = new Set([
  "1/s burst 20 N=100, answered together",
  "5/s burst 20 N=300, answered together",
  "5/s burst 1 N=100, answered together",
  "5/s burst 1 N=300, answered together",
  "50/s burst 1 N=1000, answered together",
  "shared refusals, answered together",
  "1/s burst 20 N=100, answered in turn",
  "5/s burst 20 N=300, answered in turn",
  "5/s burst 1 N=100, answered in turn",
  "5/s burst 1 N=300, answered in turn",
  "50/s burst 1 N=1000, answered in turn",
  "moving, answered in turn",
  "shared refusals, answered in turn",
]);
const goal = (name: string) => (notYet.has(name) ? it.fails : it);

describe("the pacer against token buckets", () => {
  for (const shape of sim.ANSWER_SHAPES) {
    for (const bucket of sim.BUCKETS) {
      const name = `${bucket.rate}/s burst ${bucket.burst} N=${bucket.requests}, ${shape.name}`;
      goal(name)(`${name}: at most ${sim.BUCKET_GOAL.refusals} refusals, within ${sim.BUCKET_GOAL.ofFloor}x the floor`, async () => {
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
    goal(`moving, ${shape.name}`)(
      `${shape.name}: accepts ${sim.MOVING.goal.ofAllowed * 100}% of what the limit allowed, with at most ${sim.MOVING.goal.refusals} refusals`,
      async () => {
        const { refused, accepted, allowed } = await sim.moving(pacer, shape.answers);
        expect(accepted).toBeGreaterThanOrEqual(allowed * sim.MOVING.goal.ofAllowed);
        expect(refused).toBeLessThanOrEqual(sim.MOVING.goal.refusals);
      },
    );
  }
});

describe("the pacer against a limit shared with another client", () => {
  for (const shape of sim.ANSWER_SHAPES) {
    it(`${shape.name}: finishes within ${sim.SHARED.goal.ofFloor}x the floor of the half left to it`, async () => {
      const { spanMs, floorMs } = await sim.shared(pacer, shape.answers);
      expect(spanMs).toBeLessThanOrEqual(floorMs * sim.SHARED.goal.ofFloor);
    });

    goal(`shared refusals, ${shape.name}`)(`${shape.name}: meets at most ${sim.SHARED.goal.refusals} refusals`, async () => {
      const { refused } = await sim.shared(pacer, shape.answers);
      expect(refused).toBeLessThanOrEqual(sim.SHARED.goal.refusals);
    });
  }
});
