/**
 * The seeded draws of fault injection. Each subject request takes exactly two draws from the seeded generator, in
 * arrival order: one picks at most one fault over disjoint intervals, one picks the delay (and a late request's
 * wait). So the same seed and the same sequence of requests give the same faults whatever the spec's other values
 * are; `late`, the last interval, leaves the others where they were without it.
 */
import { RateBudgets } from "./rate-budget";
import type { ResolvedFaults } from "./spec";

/** mulberry32: a small, well-known 32-bit generator; uniform in [0, 1). Tests draw their own seeded choices from it too. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What fault injection did since the spec was last set. */
export interface FaultStats {
  /** Subject requests seen (each took its draws). */
  requests: number;
  error: number;
  throttle: number;
  reset: number;
  lost: number;
  late: number;
  /** Requests delayed by more than 0 ms. */
  delayed: number;
  /** Requests answered 429 by the rate limit (`rate`): their key's budget was spent. */
  rateLimited: number;
}

export type Fault = "error" | "throttle" | "reset" | "lost" | "late" | undefined;

export const noFaults = (): FaultStats => ({ requests: 0, error: 0, throttle: 0, reset: 0, lost: 0, late: 0, delayed: 0, rateLimited: 0 });

/** One applied spec: its generator, its rate budgets and its counts. */
export class FaultSequence {
  private readonly next: () => number;
  readonly counts: FaultStats = noFaults();
  /** Undefined without a rate limit. */
  readonly budgets: RateBudgets | undefined;

  constructor(readonly faults: ResolvedFaults) {
    this.next = mulberry32(faults.seed);
    this.budgets = faults.rate === undefined ? undefined : new RateBudgets(faults.rate, faults.burst);
  }

  /**
   * The fault and delays of the next subject request: always two draws, whatever they pick. The second
   * places both the latency in its range and a late request's handler in `lateBy`'s. `refused`: the rate
   * limit answers the request, so no fault applies (nor is counted) whatever the draw picked.
   */
  draw(refused: boolean): { fault: Fault; delayMs: number; lateByMs: number } {
    const pick = this.next();
    const spread = this.next();
    const { error, throttle, reset, lost, late, latency, lateBy } = this.faults;
    let fault: Fault;
    if (pick < error) fault = "error";
    else if (pick < error + throttle) fault = "throttle";
    else if (pick < error + throttle + reset) fault = "reset";
    else if (pick < error + throttle + reset + lost) fault = "lost";
    else if (pick < error + throttle + reset + lost + late) fault = "late";
    const within = ([min, max]: readonly [number, number]) => min + Math.floor(spread * (max - min + 1));
    const delayMs = within(latency);
    this.counts.requests++;
    if (refused) {
      fault = undefined;
      this.counts.rateLimited++;
    }
    if (fault) this.counts[fault]++;
    if (delayMs > 0) this.counts.delayed++;
    return { fault, delayMs, lateByMs: within(lateBy) };
  }
}
