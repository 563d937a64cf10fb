/**
 * Holds the requests of every client that shares it to a rate: each HTTP attempt (retries included) waits for
 * its turn, turns `1 / requestsPerSecond` apart, in the order they were asked for. A service that limits a key
 * to N requests a second then never has to refuse one, however many resources a provider process handles at
 * once; without it, those resources all send at once, most are refused with 429, and all retry together.
 * Turns are strictly spaced (no burst): a service's own budget holds at least one request, so the jitter of
 * timers and the network cannot push two of them together past it.
 */

export interface RateLimiterTiming {
  /** A monotonic clock in milliseconds; default `performance.now()`. */
  now?: () => number;
  /** Waits for a turn; tests replace it with `now`. */
  sleep?: (ms: number) => Promise<void>;
}

export class RequestRateLimiter {
  readonly requestsPerSecond: number;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  /** When the next turn may start: the last turn given plus one interval. */
  #nextTurnAt = Number.NEGATIVE_INFINITY;

  constructor(requestsPerSecond: number, timing: RateLimiterTiming = {}) {
    if (!(Number.isFinite(requestsPerSecond) && requestsPerSecond > 0)) {
      throw new RangeError(`requestsPerSecond must be a number above 0, not ${requestsPerSecond}`);
    }
    this.requestsPerSecond = requestsPerSecond;
    this.#intervalMs = 1000 / requestsPerSecond;
    this.#now = timing.now ?? (() => performance.now());
    this.#sleep = timing.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /**
   * Resolves when the caller may send its request. The turn is taken at the call, before any wait, so callers
   * are served in the order they called whatever their timers do. Resolves the milliseconds waited.
   */
  async turn(): Promise<number> {
    const now = this.#now();
    const at = Math.max(now, this.#nextTurnAt);
    this.#nextTurnAt = at + this.#intervalMs;
    const wait = at - now;
    // Timers count whole milliseconds: a wait is rounded up, never down.
    if (wait > 0) await this.#sleep(Math.ceil(wait));
    return wait;
  }
}
