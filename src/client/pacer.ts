/**
 * Adaptive pacing: how a provider process meets a service that refuses requests for their rate (429 with
 * `Retry-After`) without knowing its limit, shared by every client of that service in the process. A 429 is not
 * always this client's doing: a quota shared with other clients, an overloaded gateway or one endpoint's own limit
 * refuse a share of the requests whatever their rate. So the pacer slows only for refusals that follow its rate.
 *
 * Two controls, as TCP and the AWS SDKs' adaptive retry mode keep them:
 * - **A window** of requests in flight. It starts small (4), grows by one each round trip in which it was used up
 *   (one over the window per accepted request), and halves at a refusal. A hundred resources created at once thus
 *   meet a limited service a few at a time: requests already in flight when the service starts refusing cannot be
 *   called back, so a window that grew fast would have them all refused.
 * - **A rate**, learned from refusals that follow it. While unpaced, a refusal is taken for a limit when more than
 *   half of at least 6 answers were refused; while paced, when a quarter of at least 4 (2 refusals or more), or when
 *   it answers a probe above the limit learned. The answers judged are those to requests sent since the last cut (the
 *   last 20 at most), and not before the first refusal: an answer to one sent before a cut tells of the old rate, and
 *   those to a burst the service took at once tell nothing. Any other refusal is passing: the request waits out its
 *   `Retry-After`, the window halves, and the rate stays. At a cut the rate becomes what the service takes, a little
 *   less (0.9): what it accepted in the last second, and not before its first refusal (over a quarter of a second at
 *   least): a service that takes a burst at once and then refuses has a rate well below that burst. None accepted
 *   since counts as one: a service answers a refusal at once, so a window of one request in flight would otherwise
 *   let every caller waiting through a millisecond apart, each refused.
 *   While paced, it also keeps no more than the share of the rate accepted (a quarter at least). That is also taken
 *   as its limit. Turns are then given `1 / rate` apart to the requests waiting in line, those that waited out a
 *   `Retry-After` included, so they come back spread rather than together at the second it names. Each accepted
 *   request raises the rate a little (half a request a second per second) up to 0.95 of that limit.
 *
 *   Above the limit the pacer probes: at once after the first limit learned (a guess from a few answers), then after
 *   each calm spell with no cut: 2 s, twice as long after each refused probe (up to 11 s). It raises the rate with
 *   each accepted request, by up to a quarter and no more than fourfold a second. A refused probe steps back (0.9)
 *   from the rate the refused request was sent at during the first probe, and from what the service accepted in the
 *   last second after; never above what it accepted since the probe's first refusal (once 4 were: its burst was
 *   spent then, so that is no more than its rate), nor below the rate the probe started from. A later probe refused
 *   again before that halves instead: the burst it climbed through is spent, and each step of 0.9 would cost a
 *   refusal. Past 500 requests a second pacing stops. A limit that rose is thus found within seconds, and a steady
 *   one costs a refusal or two per probe.
 *
 * Each change of the learned rate (a cut, the end of a calm spell, unpaced again) is told once to `onChange`, with
 * why: the provider's debug log shows it. `gms:maxRequestsPerSecond` stays a ceiling of its own (./rate-limit.ts):
 * the pacer only ever sends slower.
 */

/** What became of a paced request. */
export type PacedOutcome = "accepted" | "refused" | "failed";

export interface PacerTiming {
  /** A monotonic clock in milliseconds; default `performance.now()`. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** A change of the learned rate: requests a second (undefined: unpaced), and why. */
export interface PacerChange {
  rate: number | undefined;
  because: string;
}

export interface PacerOptions extends PacerTiming {
  /** Told once of each change of the learned rate. */
  onChange?: (change: PacerChange) => void;
}

/** The first window: the requests in flight before any answer has come back. */
export const INITIAL_WINDOW = 4;
/** The largest window; past it, requests are no longer held for it. */
const MAX_WINDOW = 1024;
/** The slowest rate the pacer falls to, in requests a second. */
const MIN_RATE = 0.5;
/** The answers since the last cut that judge a refusal: the latest this many. */
const SAMPLE = 20;
/** While unpaced: a limit when more than this share of at least `MIN_SAMPLE` answers were refused. */
const LIMIT_SHARE = 1 / 2;
const MIN_SAMPLE = 6;
/** While paced: a limit when more than this share of at least `MIN_PACED_SAMPLE` answers were refused, 2 at least. */
const PACED_LIMIT_SHARE = 1 / 4;
const MIN_PACED_SAMPLE = 4;
const MIN_PACED_REFUSALS = 2;
/** The least share of the rate a paced cut keeps. */
const MIN_KEPT = 1 / 4;
/** Of what the service accepts, the share the rate is cut to. */
const CUT_TO = 0.9;
/** The shortest time the accepted requests are counted over, early on (since the first refusal), in ms. */
const MIN_MEASURE_MS = 250;
/** A refused probe: the fewest accepted since its first refusal that tell the rate. */
const MIN_EMPTY_ACCEPTS = 4;
/** How much the rate rises in a second of accepted requests, in requests a second. */
const RISE_PER_SECOND = 0.5;
/** Of the limit learned at a cut, the share the rate rises to before the calm spell is over. */
const PLATEAU = 0.95;
/** The first calm spell with no cut, after which the rate probes above the limit. */
const CALM_AFTER_MS = 2000;
/** The longest calm spell: each refused probe doubles it up to this. */
const MAX_CALM_MS = 11_000;
/** During a probe, the most one accepted request raises the rate by, and the most it grows in a second. */
const PROBE_GAIN = 1.25;
const PROBE_GROWTH = 4;
/** A rate past which pacing stops. */
const UNPACED_ABOVE = 500;

export class AdaptivePacer {
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #onChange: ((change: PacerChange) => void) | undefined;
  #window = INITIAL_WINDOW;
  #inFlight = 0;
  readonly #waiting: (() => void)[] = [];
  /** The requests in the window waiting for their turn of the rate. */
  readonly #turns: (() => void)[] = [];
  #pumping = false;
  /** Requests a second, once a limit was learned; undefined until then, and once past `UNPACED_ABOVE`. */
  #rate: number | undefined;
  #nextTurnAt = Number.NEGATIVE_INFINITY;
  /** When the requests of the last second were accepted. */
  readonly #accepted: number[] = [];
  /** Requests accepted so far. */
  #acceptedCount = 0;
  /** The first refusal: before it the service may have taken a burst, which is not its rate. */
  #firstRefusalAt = Number.POSITIVE_INFINITY;
  /** From the first limit learned to the end of the first calm spell: its rate was learned from a few answers. */
  #starting = false;
  /** The first refusal of the probe under way, and the requests accepted then: the service had nothing left to burst. */
  #emptyAt: { at: number; count: number } | undefined;
  /** The answers to requests sent since the last cut, the latest `SAMPLE`: true for a refusal. */
  readonly #answers: boolean[] = [];
  #lastCutAt = Number.NEGATIVE_INFINITY;
  /** When the rate last rose in a probe, or undefined while no probe is under way. */
  #probedAt: number | undefined;
  /** The rate the last probe started from: held for a calm spell, so the service takes it. */
  #calmRate = 0;
  /** The service's limit as the last cut learned it, in requests a second. */
  #limit = Number.POSITIVE_INFINITY;
  /** Cuts so far: an answer to a request sent before the last one tells of an old rate. */
  #cuts = 0;
  #calmAfterMs = CALM_AFTER_MS;
  /** Refusals seen, for a bench or a test to read. */
  refusals = 0;

  constructor(options: PacerOptions = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#onChange = options.onChange;
  }

  /** The learned rate in requests a second, or undefined while unpaced. */
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
    // While paced, the requests wait in line: only the first has a time, so a change of rate moves them all.
    if (this.#rate !== undefined) {
      const turn = new Promise<void>((resolve) => this.#turns.push(resolve));
      if (!this.#pumping) void this.#pump();
      await turn;
    }
    const cuts = this.#cuts;
    const sentAt = this.#rate;
    let settled = false;
    return {
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        this.#settle(outcome, cuts === this.#cuts, sentAt);
      },
    };
  }

  /** Lets the first in line go at each turn, `1 / rate` apart, as long as any wait. */
  async #pump(): Promise<void> {
    this.#pumping = true;
    while (this.#turns.length > 0) {
      const now = this.#now();
      if (this.#rate !== undefined && this.#nextTurnAt > now) {
        await this.#sleep(Math.ceil(this.#nextTurnAt - now));
        continue;
      }
      this.#turns.shift()!();
      // On time (a sleep rounds up to the millisecond), the next turn is one interval after this one's; late, from now.
      if (this.#rate !== undefined) this.#nextTurnAt = Math.max(this.#nextTurnAt, now - 1) + 1000 / this.#rate;
    }
    this.#pumping = false;
  }

  /** `sentSinceCut`: the request was sent after the last cut, so its answer tells of the current rate. */
  #settle(outcome: PacedOutcome, sentSinceCut: boolean, sentAt: number | undefined): void {
    this.#inFlight--;
    const now = this.#now();
    if (outcome === "accepted") {
      this.#accepted.push(now);
      this.#acceptedCount++;
      if (sentSinceCut) this.#answer(false);
      this.#window = Math.min(MAX_WINDOW, this.#window + 1 / this.#window);
      if (this.#rate !== undefined) this.#rise(now);
    } else if (outcome === "refused") {
      this.refusals++;
      // The answers before the first refusal were to a burst: they judge nothing.
      if (this.#firstRefusalAt === Number.POSITIVE_INFINITY) this.#answers.length = 0;
      this.#firstRefusalAt = Math.min(this.#firstRefusalAt, now);
      this.#window = Math.max(1, Math.floor(this.#window / 2));
      if (sentSinceCut) {
        this.#answer(true);
        this.#judge(now, sentAt);
      }
    }
    while (this.#waiting.length > 0 && this.#inFlight < this.#window) {
      this.#inFlight++;
      this.#waiting.shift()!();
    }
  }

  #answer(refused: boolean): void {
    this.#answers.push(refused);
    if (this.#answers.length > SAMPLE) this.#answers.shift();
  }

  /** An accepted request: the rate rises toward the limit, and past it once a calm spell is over. */
  #rise(now: number): void {
    const rate = this.#rate!;
    if (now - this.#lastCutAt <= this.#calmAfterMs) {
      this.#rate = Math.max(rate, Math.min(rate + RISE_PER_SECOND / rate, this.#limit * PLATEAU));
      return;
    }
    if (this.#probedAt === undefined) {
      this.#probedAt = now;
      this.#starting &&= this.#calmAfterMs === 0;
      this.#emptyAt = undefined;
      this.#calmRate = rate;
      this.#limit = rate / PLATEAU;
      const after = this.#calmAfterMs === 0 ? "a first limit" : `no cut for ${this.#calmAfterMs / 1000} s`;
      this.#change(rate, `${after}: probing above ${rate.toFixed(1)}/s`);
      return;
    }
    this.#rate = rate * Math.min(PROBE_GAIN, PROBE_GROWTH ** ((now - this.#probedAt) / 1000));
    this.#probedAt = now;
    if (this.#rate > UNPACED_ABOVE) this.#change(undefined, `accepted past ${UNPACED_ABOVE}/s: unpaced again`);
  }

  /** A refusal: a cut when the refusals follow the rate, else passing. */
  #judge(now: number, sentAt: number | undefined): void {
    const paced = this.#rate !== undefined;
    const refused = this.#answers.filter(Boolean).length;
    const share = refused / this.#answers.length;
    const crowded = paced
      ? this.#answers.length >= MIN_PACED_SAMPLE && refused >= MIN_PACED_REFUSALS && share > PACED_LIMIT_SHARE
      : this.#answers.length >= MIN_SAMPLE && share > LIMIT_SHARE;
    const probing = !crowded && paced && this.#rate! > this.#limit * PLATEAU;
    if (!crowded && !probing) return;
    // What the service accepted in the last second and since the first refusal, in requests a second; none counts as one.
    const from = Math.max(now - 1000, this.#firstRefusalAt);
    const accepted = (Math.max(1, this.#acceptedSince(from)) * 1000) / Math.max(MIN_MEASURE_MS, now - from);
    // What it accepted since the probe's first refusal, once enough to tell: no more than its rate, its burst spent.
    const sinceEmpty =
      this.#emptyAt !== undefined && this.#acceptedCount - this.#emptyAt.count >= MIN_EMPTY_ACCEPTS
        ? ((this.#acceptedCount - this.#emptyAt.count) * 1000) / (now - this.#emptyAt.at)
        : Number.POSITIVE_INFINITY;
    // A later probe refused again, before what it accepted since tells its rate.
    const again = this.#emptyAt !== undefined && !this.#starting;
    if (probing) this.#emptyAt ??= { at: now, count: this.#acceptedCount };
    // A first probe steps back from the rate the refused request was sent at; a later one from what was accepted.
    const stepFrom = Math.min(this.#starting ? (sentAt ?? this.#rate!) : accepted, this.#rate!);
    const rate = probing
      ? Math.max(this.#calmRate, Math.min(sinceEmpty, again ? this.#rate! / 2 : stepFrom * CUT_TO))
      : Math.max(MIN_RATE, Math.min(accepted, paced ? this.#rate! * Math.max(MIN_KEPT, 1 - share) : Number.POSITIVE_INFINITY) * CUT_TO);
    const because = probing
      ? `a probe above ${this.#calmRate.toFixed(1)}/s refused`
      : `${refused} of the last ${this.#answers.length} requests refused`;
    // A refused probe: the limit holds, so the next probe waits longer. A first limit: a guess, probed at once.
    this.#starting = !paced || (probing && this.#starting);
    if (probing) this.#calmAfterMs = Math.min(MAX_CALM_MS, Math.max(CALM_AFTER_MS, this.#calmAfterMs * 2));
    else if (!paced) this.#calmAfterMs = 0;
    // Below a refused probe, the limit it started from holds: another refusal above it steps back again.
    if (!probing) this.#limit = rate / CUT_TO;
    this.#lastCutAt = now;
    this.#probedAt = undefined;
    this.#cuts++;
    this.#answers.length = 0;
    // The schedule starts again from now, one interval of the new rate away.
    this.#nextTurnAt = now + 1000 / rate;
    this.#change(rate, because);
  }

  #change(rate: number | undefined, because: string): void {
    this.#rate = rate;
    this.#onChange?.({ rate, because });
  }

  #acceptedSince(since: number): number {
    while (this.#accepted.length > 0 && this.#accepted[0]! < since) this.#accepted.shift();
    return this.#accepted.length;
  }
}
