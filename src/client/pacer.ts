/**
 * Adaptive pacing: how a provider process meets a service that refuses requests for their rate (429 with
 * `Retry-After`) without knowing its limit, shared by every client of that service in the process.
 *
 * Two controls, as TCP and the AWS SDKs' adaptive retry mode keep them:
 * - **A window** of requests in flight. It starts small (4), grows by one with each answered request (so it doubles
 *   every round trip while the service keeps up: a service with no limit costs a few round trips), and halves at a
 *   refusal. A hundred resources created at once thus meet a limited service a few at a time, not as a herd.
 * - **A rate**, learned at the first refusal that follows accepted requests: what the service accepted in the last
 *   second, a little less (0.9), which is also taken as the service's limit. Turns are then spaced `1 / rate` apart,
 *   the requests that waited out a `Retry-After` included, so they come back spread over the window rather than
 *   together at the second it names; a turn taken before a cut is taken again from the new schedule. Each accepted
 *   request raises the rate a little (half a request a second per second) up to 0.95 of that limit, and a refusal
 *   cuts it again (at most once a second).
 *
 *   Above the limit the pacer only probes after a calm spell with no refusal: 2 s after the first cut, twice as long
 *   after each later one (up to 32 s; back to 2 s after a minute with no refusal). It then rises by 5% per accepted
 *   request, and past 500 requests a second pacing stops: a refusal that was no limit (a passing 429) does not slow
 *   a run for long, and a real limit costs a refusal or two per probe, ever rarer.
 *
 * `gms:maxRequestsPerSecond` stays a ceiling of its own (./rate-limit.ts): the pacer only ever sends slower.
 */

/** What became of a paced request. */
export type PacedOutcome = "accepted" | "refused" | "failed";

export interface PacerTiming {
  /** A monotonic clock in milliseconds; default `performance.now()`. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** The first window: the requests in flight before any answer has come back. */
export const INITIAL_WINDOW = 4;
/** The largest window; past it, requests are no longer held for it. */
const MAX_WINDOW = 1024;
/** The slowest rate the pacer falls to, in requests a second. */
const MIN_RATE = 0.5;
/** Of what the service accepted in the last second, the share the rate is cut to at a refusal. */
const CUT_TO = 0.9;
/** How much the rate rises in a second of accepted requests, in requests a second. */
const RISE_PER_SECOND = 0.5;
/** Of the limit learned at a cut, the share the rate rises to before the calm spell is over. */
const PLATEAU = 0.95;
/** After a calm spell this long with no refusal, the rate rises by `CALM_RISE` per accepted request. */
const CALM_AFTER_MS = 2000;
/** The longest calm spell: each cut doubles it up to this, and after twice this with no cut it is back to the first. */
const MAX_CALM_MS = 32_000;
const CALM_RISE = 0.05;
/** A rate past which pacing stops. */
const UNPACED_ABOVE = 500;

export class AdaptivePacer {
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  #window = INITIAL_WINDOW;
  #inFlight = 0;
  readonly #waiting: (() => void)[] = [];
  /** Requests a second, once a refusal taught one; undefined until then. */
  #rate: number | undefined;
  #nextTurnAt = Number.NEGATIVE_INFINITY;
  /** When the requests of the last second were accepted. */
  readonly #accepted: number[] = [];
  #lastCutAt = Number.NEGATIVE_INFINITY;
  /** The service's limit as the last cut learned it, in requests a second. */
  #limit = Number.POSITIVE_INFINITY;
  /** Cuts so far: a turn taken before one is taken again. */
  #cuts = 0;
  #calmAfterMs = CALM_AFTER_MS;
  /** Refusals seen, for a bench or a test to read. */
  refusals = 0;

  constructor(timing: PacerTiming = {}) {
    this.#now = timing.now ?? (() => performance.now());
    this.#sleep = timing.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** The learned rate in requests a second, or undefined while no refusal has taught one. */
  get rate(): number | undefined {
    return this.#rate;
  }

  get window(): number {
    return this.#window;
  }

  /** Waits for a place in the window, then for the turn the rate gives; `settle` must follow with the outcome. */
  async acquire(): Promise<{ settle: (outcome: PacedOutcome) => void }> {
    if (this.#inFlight < this.#window || this.#window >= MAX_WINDOW) this.#inFlight++;
    // Woken by a settle, which counts the place as taken.
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    // A turn taken before a cut was spaced by the old rate: it is taken again from the new schedule.
    for (let cuts = -1; this.#rate !== undefined && cuts !== this.#cuts; ) {
      cuts = this.#cuts;
      const now = this.#now();
      const at = Math.max(now, this.#nextTurnAt);
      this.#nextTurnAt = at + 1000 / this.#rate;
      if (at > now) await this.#sleep(Math.ceil(at - now));
    }
    let settled = false;
    return {
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        this.#settle(outcome);
      },
    };
  }

  #settle(outcome: PacedOutcome): void {
    this.#inFlight--;
    const now = this.#now();
    if (outcome === "accepted") {
      this.#accepted.push(now);
      this.#window = Math.min(MAX_WINDOW, this.#window + 1);
      if (this.#rate !== undefined) {
        if (now - this.#lastCutAt > this.#calmAfterMs) this.#rate += this.#rate * CALM_RISE;
        else this.#rate = Math.max(this.#rate, Math.min(this.#rate + RISE_PER_SECOND / this.#rate, this.#limit * PLATEAU));
        if (this.#rate > UNPACED_ABOVE) this.#rate = undefined;
      }
    } else if (outcome === "refused") {
      this.refusals++;
      this.#window = Math.max(1, Math.floor(this.#window / 2));
      const accepted = this.#acceptedSince(now - 1000);
      // With nothing accepted lately there is no rate to learn: a rate already learned halves, else only the window does.
      if (now - this.#lastCutAt >= 1000 && (accepted > 0 || this.#rate !== undefined)) {
        // Another refusal: the limit is real, so probing above it waits longer; after a long calm, a short wait again.
        this.#calmAfterMs = now - this.#lastCutAt < 2 * MAX_CALM_MS ? Math.min(MAX_CALM_MS, this.#calmAfterMs * 2) : CALM_AFTER_MS;
        this.#lastCutAt = now;
        this.#cuts++;
        this.#rate = Math.max(MIN_RATE, accepted > 0 ? accepted * CUT_TO : this.#rate! / 2);
        this.#limit = this.#rate / CUT_TO;
        // The schedule starts again from now, one interval of the new rate away: every turn waiting is taken again.
        this.#nextTurnAt = now + 1000 / this.#rate;
      }
    }
    while (this.#waiting.length > 0 && this.#inFlight < this.#window) {
      this.#inFlight++;
      this.#waiting.shift()!();
    }
  }

  #acceptedSince(since: number): number {
    while (this.#accepted.length > 0 && this.#accepted[0]! < since) this.#accepted.shift();
    return this.#accepted.length;
  }
}
