/**
 * The adaptive pacer (src/client/pacer.ts) against simulated services, on a simulated clock: the one simulation that
 * test/bench/pacer.mts prints and test/client/pacer-services.test.ts holds to its goals. Callers send requests one
 * after another; each attempt takes a place and a turn of the pacer (when there is one), is answered after `LATENCY_MS`
 * (or as the run's `answers` say), and a refused request waits out its `Retry-After` (whole seconds, as services send
 * it) or, without one, the client's backoff, then takes a turn again. No wall clock is read: the figures are the same on any machine.
 *
 * The pacer's class comes from the caller (the bench runs the build, the tests the source), so this file imports no code.
 */
import type { AdaptivePacer, PacerOptions } from "../../src/client/pacer.ts";

export const LATENCY_MS = 10;
export const CALLERS = 100;

/** A service's answer to one attempt: accepted, or refused with a `Retry-After` in seconds (undefined: none). */
export type Answer = { refused: false } | { refused: true; retryAfterS: number | undefined };
/** Answers attempt `attempt` (from 1) of request `request` (from 0) at `now` (ms); made afresh for each run. */
export type Service = (now: number, request: number, attempt: number) => Answer;

/**
 * How a service answers: each accepted attempt after `acceptedMs`, each refused one after `refusedMs`; `inTurn`, one
 * at a time in the order they came (at least `IN_TURN_GAP_MS` apart), as one process serving its requests in turn does.
 */
export interface Answers {
  acceptedMs: number;
  refusedMs: number;
  inTurn: boolean;
}

/** Every answer after `LATENCY_MS`, those to attempts sent together answered together. */
export const TOGETHER: Answers = { acceptedMs: LATENCY_MS, refusedMs: LATENCY_MS, inTurn: false };
/**
 * As the emulator, and most services, answer: a refusal costs no work, so it comes back at once (1 ms) while an
 * accepted request takes `LATENCY_MS`, and answers leave one at a time in the order the requests came. With a window
 * of one request in flight, a caller refused is then followed by the next within a millisecond.
 */
export const IN_TURN: Answers = { acceptedMs: LATENCY_MS, refusedMs: 1, inTurn: true };
export const IN_TURN_GAP_MS = 0.1;
/** The ways of answering every limit is met with, by name. */
export const ANSWER_SHAPES = [
  { name: "answered together", answers: TOGETHER },
  { name: "answered in turn", answers: IN_TURN },
] as const;

export interface RunOptions {
  /** Makes the service of this run (its state starts afresh). */
  service: () => Service;
  /** How it answers; default `TOGETHER`. */
  answers?: Answers;
  /** Requests to send; with `untilMs`, as many as the callers can until then. */
  requests: number;
  untilMs?: number;
  /** The pacer to run, or undefined for the reference: the same client with no pacer. */
  pacer: ((options: PacerOptions) => Pick<AdaptivePacer, "acquire">) | undefined;
  /** After a refusal without `Retry-After`, the client's backoff before retry `retry` (from 0), and its retries at most. */
  backoff?: { delayMs: (retry: number) => number; maxRetries: number };
}

export interface RunResult {
  /** Attempts refused. */
  refused: number;
  /** Requests accepted (by `untilMs`, when given). */
  accepted: number;
  /** Requests given up after their retries (refused without `Retry-After` every time). */
  failed: number;
  /** From the first request sent to the last answer. */
  spanMs: number;
}

/** One run on its own clock. */
export async function run(options: RunOptions): Promise<RunResult> {
  let now = 0;
  const timers: { at: number; wake: () => void }[] = [];
  const sleep = (ms: number) => new Promise<void>((wake) => timers.push({ at: now + ms, wake }));
  const service = options.service();
  const pacer = options.pacer?.({ now: () => now, sleep });
  const untilMs = options.untilMs ?? Number.POSITIVE_INFINITY;
  let refused = 0;
  let accepted = 0;
  let failed = 0;
  let lastAnswerAt = 0;
  const answers = options.answers ?? TOGETHER;
  /** When the last answer is due: in turn, the next comes no sooner. */
  let lastDueAt = Number.NEGATIVE_INFINITY;
  const send = async (request: number) => {
    let retries = 0;
    for (let attempt = 1; ; attempt++) {
      const ticket = await pacer?.acquire();
      const answer = service(now, request, attempt);
      const dueAt = now + (answer.refused ? answers.refusedMs : answers.acceptedMs);
      lastDueAt = answers.inTurn ? Math.max(dueAt, lastDueAt + IN_TURN_GAP_MS) : dueAt;
      await sleep(lastDueAt - now);
      lastAnswerAt = now;
      if (!answer.refused) {
        ticket?.settle("accepted");
        if (now <= untilMs) accepted++;
        return;
      }
      refused++;
      // As the client settles them: a 429 with `Retry-After` is a refusal; without one, a 503 that failed.
      ticket?.settle(answer.retryAfterS === undefined ? "failed" : "refused");
      if (answer.retryAfterS !== undefined) await sleep(answer.retryAfterS * 1000);
      else if (retries < options.backoff!.maxRetries) await sleep(options.backoff!.delayMs(retries++));
      else {
        failed++;
        return;
      }
    }
  };
  let started = 0;
  let done = false;
  const callers = Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (started < options.requests && now < untilMs) await send(started++);
    }),
  ).then(() => (done = true));
  // The clock moves to the next timer once every promise that can settle now has; a run with an end stops there.
  while (!done && now < untilMs) {
    await new Promise((resolve) => setImmediate(resolve));
    timers.sort((a, b) => a.at - b.at);
    const next = timers.shift();
    if (!next) continue;
    now = Math.max(now, next.at);
    next.wake();
  }
  if (done) await callers;
  return { refused, accepted, failed, spanMs: lastAnswerAt };
}

/** A limit that may move: `rate` requests a second and `burst` at time `now`. */
export type Limit = (now: number) => { rate: number; burst: number };

/**
 * A token bucket holding `burst` requests, refilling at `rate` a second, as the emulator's `--faults rate=R/s`; a
 * refusal says in whole seconds (at least 1) when a request will be taken. `others` takes one token at each of its
 * times (ms), before ours at the same moment: another client of the same quota, whose refusals are not counted.
 * Without `withRetryAfter`, a refusal is a 503 with no `Retry-After`.
 */
export function tokenBucket(limit: Limit, others: (from: number, to: number) => number[] = () => [], withRetryAfter = true): () => Service {
  return () => {
    let tokens = limit(0).burst;
    let at = 0;
    const refill = (to: number) => {
      const { rate, burst } = limit(to);
      tokens = Math.min(burst, tokens + ((to - at) / 1000) * rate);
      at = to;
    };
    return (now) => {
      for (const other of others(at, now)) {
        refill(other);
        if (tokens >= 1) tokens -= 1;
      }
      refill(now);
      if (tokens >= 1) {
        tokens -= 1;
        return { refused: false };
      }
      return { refused: true, retryAfterS: withRetryAfter ? Math.max(1, Math.ceil((1 - tokens) / limit(now).rate)) : undefined };
    };
  };
}

/** A steady limit. */
export const steady =
  (rate: number, burst: number): Limit =>
  () => ({ rate, burst });

/** Another client sending `rate` a second steadily: its times in (from, to]. */
export const steadyClient =
  (rate: number) =>
  (from: number, to: number): number[] => {
    const times: number[] = [];
    for (let k = Math.floor((from * rate) / 1000) + 1; (k * 1000) / rate <= to; k++) times.push((k * 1000) / rate);
    return times;
  };

/**
 * No limit, but a share of attempts refused (`Retry-After: 1`) at random: whether attempt `attempt` of request
 * `request` is refused is drawn from a generator seeded by (seed, request, attempt), so every client meets the same.
 */
export const randomRefusals =
  (share: number, seed: number): (() => Service) =>
  () =>
  (_now, request, attempt) =>
    draw(seed, request, attempt) < share ? { refused: true, retryAfterS: 1 } : { refused: false };

/** A number in [0, 1) from a hash of three whole numbers (a 32-bit mix, then splitmix-style finalisation). */
function draw(a: number, b: number, c: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35) ^ Math.imul(c + 0x165667b1, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return ((h ^ (h >>> 16)) >>> 0) / 2 ** 32;
}

/** The median of some numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** How the pacer is made: the bench's from the build, the tests' from the source. */
export type MakePacer = NonNullable<RunOptions["pacer"]>;

/** 1. Token buckets: each rate and number of requests with a burst of 1, one second's worth, and 20. */
export const BUCKETS = (
  [
    [1, 20],
    [1, 100],
    [5, 100],
    [5, 300],
    [50, 1000],
  ] as const
).flatMap(([rate, requests]) => [...new Set([1, rate, 20])].map((burst) => ({ rate, burst, requests })));
/** Their goal: at most this many refusals, and a time within this much of the floor N / rate. */
export const BUCKET_GOAL = { refusals: 25, ofFloor: 1.25 };

export async function bucket(pacer: MakePacer, { rate, burst, requests }: (typeof BUCKETS)[number], answers = TOGETHER) {
  const result = await run({ service: tokenBucket(steady(rate, burst)), requests, pacer, answers });
  return { ...result, floorMs: (requests / rate) * 1000 };
}

/** 2. No limit, a share of attempts refused at random: the shares, requests and seeds; the goal against the same client unpaced. */
export const NOISE = { shares: [0.01, 0.05, 0.1, 0.2], requests: 300, seeds: 20 };
export const noiseGoal = (share: number): number => (share <= 0.1 ? 1.5 : 3);

/** Over the seeds: the median time with the pacer and without (the reference), and the median refusals with it. */
export async function noise(pacer: MakePacer, share: number) {
  const paced: RunResult[] = [];
  const reference: RunResult[] = [];
  for (let seed = 1; seed <= NOISE.seeds; seed++) {
    paced.push(await run({ service: randomRefusals(share, seed), requests: NOISE.requests, pacer }));
    reference.push(await run({ service: randomRefusals(share, seed), requests: NOISE.requests, pacer: undefined }));
  }
  return {
    spanMs: median(paced.map((result) => result.spanMs)),
    referenceMs: median(reference.map((result) => result.spanMs)),
    refused: median(paced.map((result) => result.refused)),
  };
}

/** 3. A limit that moves: 50 a second, 5, then 50 again, 20 s each, one second's worth of burst; callers always ready. */
export const MOVING = { phases: [50, 5, 50], phaseMs: 20_000, goal: { ofAllowed: 0.8, refusals: 40 } };
const movingRate = (now: number) => MOVING.phases[Math.min(MOVING.phases.length - 1, Math.floor(now / MOVING.phaseMs))]!;

/** The requests the limit allowed (its first burst, then its rate over each phase), and what the pacer got. */
export async function moving(pacer: MakePacer, answers = TOGETHER) {
  const untilMs = MOVING.phases.length * MOVING.phaseMs;
  const result = await run({
    service: tokenBucket((now) => ({ rate: movingRate(now), burst: movingRate(now) })),
    requests: Number.POSITIVE_INFINITY,
    untilMs,
    pacer,
    answers,
  });
  const allowed = MOVING.phases[0]! + MOVING.phases.reduce((sum, rate) => sum + (rate * MOVING.phaseMs) / 1000, 0);
  return { ...result, allowed };
}

/** 4. A limit of 10 a second (burst 10) shared with another client sending 5 a second steadily; ours sends N. */
export const SHARED = { rate: 10, burst: 10, other: 5, requests: 300, goal: BUCKET_GOAL };

/** The floor is the half of the limit left to ours. */
export async function shared(pacer: MakePacer, answers = TOGETHER) {
  const result = await run({
    service: tokenBucket(steady(SHARED.rate, SHARED.burst), steadyClient(SHARED.other)),
    requests: SHARED.requests,
    pacer,
    answers,
  });
  return { ...result, floorMs: (SHARED.requests / (SHARED.rate - SHARED.other)) * 1000 };
}

/** 5. Refusals without `Retry-After` (a 503): a bucket of 5 refilling at 5 a second, N = 100; the client's backoff. No goal. */
export const NO_RETRY_AFTER = { rate: 5, burst: 5, requests: 100 };

export async function noRetryAfter(pacer: MakePacer | undefined, backoff: NonNullable<RunOptions["backoff"]>) {
  const { rate, burst, requests } = NO_RETRY_AFTER;
  const result = await run({ service: tokenBucket(steady(rate, burst), undefined, false), requests, pacer, backoff });
  return { ...result, floorMs: (requests / rate) * 1000 };
}
