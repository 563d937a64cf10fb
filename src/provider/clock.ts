/**
 * Time as the code that waits or measures it sees it: the engine's step durations and journal times, the
 * lock's start time (src/testing), FineTune's polling (src/resources/fine-tune.ts). The default is the real clock; a test
 * passes a fake one (`now` it sets, `sleep` that advances it) so that nothing waits on the wall clock.
 */
import { setTimeout as wait } from "node:timers/promises";

export interface Clock {
  /** Milliseconds since the epoch, as `Date.now()`. */
  now(): number;
  /** Resolves after `ms` milliseconds of this clock. */
  sleep(ms: number): Promise<void>;
}

/** The wall clock and real timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms) => {
    await wait(ms);
  },
};
