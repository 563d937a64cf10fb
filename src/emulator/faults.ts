/**
 * Seeded, reproducible fault injection: answers a fraction of API requests with a 5xx or a 429, resets
 * their connection before any work, does the work and then loses the response, or loses the client first
 * and does the work afterwards (a late completion); and delays them. Beside the draws, a rate limit as a
 * gateway enforces one (`rate`, `burst`): each API key's budget of requests refills at a steady rate, and a
 * request that finds its key's budget spent is answered 429 with a true `Retry-After`.
 *
 * Which requests are subject: every request to a route under `/v1`, before authentication (faults stand
 * for the gateway in front of the service, so a request with a bad key can be faulted too), except the
 * signed file download (`public` routes), which stands in for a separate storage service and which the
 * emulator's own Context Source processing fetches. Unknown paths (404) are not subject.
 *
 * Each subject request takes exactly two draws from the seeded generator, in arrival order: one picks at
 * most one fault over disjoint intervals, one picks the delay (and a late request's wait). So the same seed
 * and the same sequence of requests give the same faults whatever the spec's other values are; `late`, the
 * last interval, leaves the others where they were without it.
 *
 * The rate limit draws nothing: whether a request finds its budget spent depends only on its key's earlier
 * requests and on the hooks' clock (`now`), so it is as reproducible as the times requests arrive. A refused
 * request still takes its two draws (the sequence stays the one without a limit) and none of the drawn faults
 * applies to it; an admitted one takes a request from its budget whatever fault it then meets.
 */
import { createHash } from "node:crypto";
import { once } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import type { FastifyInstance, FastifyRequest } from "fastify";

declare module "fastify" {
  interface FastifyInstance {
    /** Switches fault injection at run time and counts what it did (see `installFaults`). */
    faults: FaultController;
  }
}

/** A fault spec as an object; every field optional. `parseFaultSpec` reads the string form into one. */
export interface FaultSpec {
  /** Seed of the generator (a whole number from 0 to 2^32 - 1); default 1. */
  seed?: number;
  /** Fraction of requests answered 5xx before the handler runs. */
  error?: number;
  /** The 5xx status of `error`; default 503. */
  status?: number;
  /** Fraction of requests answered 429 with `Retry-After` before the handler runs. */
  throttle?: number;
  /** The `Retry-After` of `throttle`, whole seconds; default 1. */
  retryAfter?: number;
  /** Delay of every subject request in milliseconds: fixed, or `[min, max]` drawn uniformly. */
  latency?: number | readonly [min: number, max: number];
  /**
   * Where `latency` is spent: before the handler (`request`, the default) or after it has run and its
   * writes committed, before the answer leaves (`answer`: a slow response, the object already made).
   */
  latencyAt?: "request" | "answer";
  /** Fraction of requests whose connection is destroyed before the handler runs. */
  reset?: number;
  /** Fraction of requests handled (their writes commit) whose connection is then destroyed unanswered. */
  lost?: number;
  /**
   * Fraction of requests whose connection is destroyed once their body has arrived, before the handler:
   * the handler runs `lateBy` later, its writes committing after the client has gone, as a service does
   * when its gateway gave up on the request but it carried on. Never after `deadline`.
   */
  late?: number;
  /** How long after the client has gone a `late` request's handler runs, in milliseconds: fixed, or `[min, max]`; default 1000. */
  lateBy?: number | readonly [min: number, max: number];
  /**
   * The service's deadline for a request, in milliseconds from its arrival (default 60000, the client's
   * default `requestDeadlineMs`): a `late` request's handler never starts after it (the emulator's handlers
   * commit as they start), so `lateBy` may not exceed it.
   */
  deadline?: number;
  /** HTTP methods subject to faults; default all. */
  methods?: readonly string[];
  /**
   * Requests a second each API key may make, on average: its budget (`burst` requests) refills at this
   * rate, each key (each workspace key, and the requests without one) its own. A request that finds its
   * key's budget spent is answered 429, `Retry-After` the whole seconds until the budget holds a request
   * again, rounded up. Any number above 0 (`rate=300/min` in the string form is 5). Default: no limit.
   */
  rate?: number;
  /** How many requests a key's full budget holds (what it may send at once after a quiet spell); default one second's worth, at least 1. */
  burst?: number;
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

export interface FaultController {
  /** Applies a spec (restarting its sequence from the seed and zeroing the stats), or turns faults off. */
  set(spec: FaultSpec | string | undefined): void;
  stats(): FaultStats;
  /**
   * Resolves once no late request is still waiting to run its handler (whatever spec is in force now): every
   * late request whose client has seen its connection drop has landed, or never will. Tests call it before
   * they count what the service holds.
   */
  idle(): Promise<void>;
  /**
   * Holds every answer from now on, after its handler has run and its writes committed, until the returned release
   * is called or the server closes: a test that kills its client at a moment of its own choosing holds the service's
   * answers meanwhile, so that the run cannot move past that moment however busy the machine is.
   */
  hold(): () => void;
}

export class FaultSpecError extends Error {
  override readonly name = "FaultSpecError";
  readonly code = "invalid_fault_spec";
  constructor(
    /** The spec key at fault, as written in the string form. */
    readonly key: string,
    message: string,
  ) {
    super(`invalid fault spec: ${message}`);
  }
}

const ACCEPTED = {
  seed: "seed=<whole number from 0 to 4294967295>, e.g. seed=7",
  error: "error=<fraction from 0 to 1>, e.g. error=0.05",
  status: "status=<500 to 599>, e.g. status=502",
  throttle: "throttle=<fraction from 0 to 1>, e.g. throttle=0.05",
  "retry-after": "retry-after=<whole seconds>, e.g. retry-after=0",
  latency: "latency=<ms> or latency=<min>-<max> in whole milliseconds, e.g. latency=5-50",
  "latency-at": "latency-at=request (before the handler, the default) or latency-at=answer (after it, before the answer)",
  reset: "reset=<fraction from 0 to 1>, e.g. reset=0.02",
  lost: "lost=<fraction from 0 to 1>, e.g. lost=0.02",
  late: "late=<fraction from 0 to 1>, e.g. late=0.02",
  "late-by": "late-by=<ms> or late-by=<min>-<max> in whole milliseconds, at most the deadline, e.g. late-by=100-500",
  deadline: "deadline=<whole milliseconds>, e.g. deadline=2000",
  methods: "methods=<METHOD>[+<METHOD>...], e.g. methods=POST+PUT",
  rate: "rate=<requests>/s or rate=<requests>/min, a number above 0, e.g. rate=5/s",
  burst: "burst=<whole number of 1 or more>, with rate, e.g. rate=5/s,burst=10",
} as const;
type SpecKey = keyof typeof ACCEPTED;

const HTTP_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]);
const MAX_SEED = 0xffffffff;
/** setTimeout's ceiling. */
const MAX_LATENCY_MS = 2 ** 31 - 1;
const WHOLE = /^\d+$/;
const FRACTION = /^(?:\d+(?:\.\d+)?|\.\d+)$/;

const invalid = (key: SpecKey, got: string) => new FaultSpecError(key, `${key}=${got} is not accepted; expected ${ACCEPTED[key]}`);

/**
 * Reads `key=value,key=value` (see `ACCEPTED` for the keys) into a FaultSpec holding the keys given.
 * Throws FaultSpecError naming the key and its accepted form.
 */
export function parseFaultSpec(text: string): FaultSpec {
  const spec: FaultSpec = {};
  const seen = new Set<string>();
  if (text.trim() === "") return spec;
  for (const entry of text.split(",")) {
    const match = entry.trim().match(/^([^=\s]+)\s*=\s*(.*)$/);
    if (!match)
      throw new FaultSpecError(entry.trim(), `"${entry.trim()}" is not key=value; accepted keys: ${Object.keys(ACCEPTED).join(", ")}`);
    const [, rawKey, value] = match as unknown as [string, string, string];
    if (!Object.hasOwn(ACCEPTED, rawKey)) {
      throw new FaultSpecError(rawKey, `unknown key "${rawKey}"; accepted keys: ${Object.keys(ACCEPTED).join(", ")}`);
    }
    const key = rawKey as SpecKey;
    if (seen.has(key)) throw new FaultSpecError(key, `${key} is given twice`);
    seen.add(key);
    switch (key) {
      case "seed":
      case "status":
      case "retry-after":
      case "deadline":
      case "burst":
        if (!WHOLE.test(value)) throw invalid(key, value);
        spec[key === "retry-after" ? "retryAfter" : key] = Number(value);
        break;
      case "rate": {
        const rate = value.match(/^(\d+(?:\.\d+)?|\.\d+)\/(s|min)$/);
        if (!rate) throw invalid(key, value);
        spec.rate = Number(rate[1]) / (rate[2] === "min" ? 60 : 1);
        break;
      }
      case "error":
      case "throttle":
      case "reset":
      case "lost":
      case "late":
        if (!FRACTION.test(value)) throw invalid(key, value);
        spec[key] = Number(value);
        break;
      case "latency":
      case "late-by": {
        const range = value.match(/^(\d+)(?:-(\d+))?$/);
        if (!range) throw invalid(key, value);
        spec[key === "late-by" ? "lateBy" : key] = range[2] === undefined ? Number(range[1]) : [Number(range[1]), Number(range[2])];
        break;
      }
      case "latency-at":
        if (value !== "request" && value !== "answer") throw invalid(key, value);
        spec.latencyAt = value;
        break;
      case "methods": {
        const methods = value.split("+");
        if (methods.some((method) => !/^[A-Za-z]+$/.test(method))) throw invalid(key, value);
        spec.methods = methods;
        break;
      }
    }
  }
  resolveFaults(spec);
  return spec;
}

/** The spec with its defaults, one line, in the string form (so it can be passed back to `--faults`). */
export function formatFaultSpec(spec: FaultSpec | string): string {
  const faults = resolveFaults(typeof spec === "string" ? parseFaultSpec(spec) : spec);
  const parts = [`seed=${faults.seed}`];
  if (faults.error > 0) parts.push(`error=${faults.error}`, `status=${faults.status}`);
  if (faults.throttle > 0) parts.push(`throttle=${faults.throttle}`, `retry-after=${faults.retryAfter}`);
  const [min, max] = faults.latency;
  if (max > 0) parts.push(`latency=${min === max ? min : `${min}-${max}`}`);
  if (max > 0 && faults.latencyAt === "answer") parts.push("latency-at=answer");
  if (faults.reset > 0) parts.push(`reset=${faults.reset}`);
  if (faults.lost > 0) parts.push(`lost=${faults.lost}`);
  if (faults.late > 0) {
    const [lateMin, lateMax] = faults.lateBy;
    parts.push(`late=${faults.late}`, `late-by=${lateMin === lateMax ? lateMin : `${lateMin}-${lateMax}`}`, `deadline=${faults.deadline}`);
  }
  if (faults.methods) parts.push(`methods=${[...faults.methods].join("+")}`);
  if (faults.rate !== undefined) parts.push(`rate=${formatRate(faults.rate)}`, `burst=${faults.burst}`);
  return parts.join(",");
}

/** A rate in the string form: per second, or per minute when that is whole and per second a long fraction (100/min, not 1.6666666666666667/s). */
function formatRate(perSecond: number): string {
  const perMinute = Math.round(perSecond * 60);
  const longFraction = (String(perSecond).split(".")[1]?.length ?? 0) > 3;
  return longFraction && Math.abs(perSecond * 60 - perMinute) < 1e-9 ? `${perMinute}/min` : `${perSecond}/s`;
}

interface ResolvedFaults {
  seed: number;
  error: number;
  status: number;
  throttle: number;
  retryAfter: number;
  latency: readonly [number, number];
  latencyAt: "request" | "answer";
  reset: number;
  lost: number;
  late: number;
  lateBy: readonly [number, number];
  deadline: number;
  /** Undefined: every method. */
  methods: ReadonlySet<string> | undefined;
  /** Requests a second per key; undefined: no rate limit. */
  rate: number | undefined;
  burst: number;
}

/** Checks a spec object (the string form's checks repeated for callers passing objects) and fills defaults. */
function resolveFaults(spec: FaultSpec): ResolvedFaults {
  const fraction = (key: "error" | "throttle" | "reset" | "lost" | "late"): number => {
    const value = spec[key] ?? 0;
    if (typeof value !== "number" || !(value >= 0 && value <= 1)) throw invalid(key, String(value));
    return value;
  };
  const whole = (key: SpecKey, value: number, min: number, max: number): number => {
    if (!Number.isInteger(value) || value < min || value > max) throw invalid(key, String(value));
    return value;
  };
  const range = (key: "latency" | "late-by", given: number | readonly [number, number], ceiling: number): [number, number] => {
    const [min, max] = typeof given === "number" ? [given, given] : given;
    const text = typeof given === "number" ? String(given) : given.join("-");
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max > MAX_LATENCY_MS) throw invalid(key, text);
    if (min > max) throw new FaultSpecError(key, `${key}=${text}: the minimum is above the maximum; expected ${ACCEPTED[key]}`);
    if (max > ceiling) throw new FaultSpecError(key, `${key}=${text}: above the deadline (deadline=${ceiling}); expected ${ACCEPTED[key]}`);
    return [min, max];
  };
  const deadline = whole("deadline", spec.deadline ?? 60_000, 0, MAX_LATENCY_MS);
  if (spec.latencyAt !== undefined && spec.latencyAt !== "request" && spec.latencyAt !== "answer")
    throw invalid("latency-at", String(spec.latencyAt));

  let methods: Set<string> | undefined;
  if (spec.methods !== undefined) {
    methods = new Set(spec.methods.map((method) => method.toUpperCase()));
    const unknown = [...methods].find((method) => !HTTP_METHODS.has(method));
    if (unknown !== undefined || methods.size === 0) throw invalid("methods", spec.methods.join("+"));
  }

  const rate = spec.rate;
  if (rate !== undefined && !(typeof rate === "number" && Number.isFinite(rate) && rate > 0)) throw invalid("rate", `${String(rate)}/s`);
  if (spec.burst !== undefined && rate === undefined)
    throw new FaultSpecError(
      "burst",
      `burst=${spec.burst} without a rate: burst is the rate limit's budget; expected ${ACCEPTED.rate} beside it`,
    );

  const resolved: ResolvedFaults = {
    seed: whole("seed", spec.seed ?? 1, 0, MAX_SEED),
    error: fraction("error"),
    status: whole("status", spec.status ?? 503, 500, 599),
    throttle: fraction("throttle"),
    retryAfter: whole("retry-after", spec.retryAfter ?? 1, 0, Number.MAX_SAFE_INTEGER),
    latency: range("latency", spec.latency ?? 0, MAX_LATENCY_MS),
    latencyAt: spec.latencyAt ?? "request",
    reset: fraction("reset"),
    lost: fraction("lost"),
    late: fraction("late"),
    lateBy: range("late-by", spec.lateBy ?? Math.min(1_000, deadline), deadline),
    deadline,
    methods,
    rate,
    burst: whole("burst", spec.burst ?? Math.max(1, Math.ceil(rate ?? 1)), 1, Number.MAX_SAFE_INTEGER),
  };
  const total = resolved.error + resolved.throttle + resolved.reset + resolved.lost + resolved.late;
  // A little slack for decimal fractions that add up to 1 (0.1 + 0.2 + 0.3 + 0.4 is 1.0000000000000002).
  if (total > 1 + 1e-9) {
    throw new FaultSpecError(
      "error+throttle+reset+lost+late",
      `error+throttle+reset+lost+late must add up to at most 1, as one draw picks at most one of them (got ${total})`,
    );
  }
  return resolved;
}

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

type Fault = "error" | "throttle" | "reset" | "lost" | "late" | undefined;

const noFaults = (): FaultStats => ({ requests: 0, error: 0, throttle: 0, reset: 0, lost: 0, late: 0, delayed: 0, rateLimited: 0 });

/**
 * The rate limit's budgets, one per API key: a token bucket holding up to `burst` requests, refilled at `rate`
 * a second on the hooks' clock. Keys are held as their SHA-256, never as given.
 */
class RateBudgets {
  private readonly buckets = new Map<string, { requests: number; at: number }>();

  constructor(
    private readonly rate: number,
    private readonly burst: number,
  ) {}

  /**
   * Takes one request from the key's budget at `now` (milliseconds): undefined when there was one, else the
   * whole seconds until there is one again, rounded up (the `Retry-After` that is true).
   */
  take(key: string, now: number): number | undefined {
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = { requests: this.burst, at: now }));
    bucket.requests = Math.min(this.burst, bucket.requests + (Math.max(0, now - bucket.at) * this.rate) / 1000);
    bucket.at = now;
    // The slack absorbs rounding in the refill (a request arriving just as its token does is admitted).
    if (bucket.requests >= 1 - 1e-9) {
      bucket.requests = Math.max(0, bucket.requests - 1);
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - bucket.requests) / this.rate));
  }
}

/** The key a request's budget is kept under: its bearer token, hashed (a request without one shares the empty key's). */
function budgetKey(request: FastifyRequest): string {
  const token = request.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1] ?? "";
  return createHash("sha256").update(token).digest("base64url");
}

/** One applied spec: its generator and its counts. */
class FaultSequence {
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

export interface FaultHookOptions {
  /**
   * Waits out a drawn delay; tests replace it to observe delays without measuring time. A late request's
   * wait passes a signal that aborts when the server closes.
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<unknown>;
  /**
   * A monotonic clock in milliseconds, for a late request's deadline and the rate limit's refill; tests
   * replace it with `sleep`. Default `performance.now()`: the emulator's clock (its `Clock`) differs from
   * this machine's by a fixed offset only, so the durations measured on either are the same.
   */
  now?: () => number;
}

/**
 * Installs the fault hooks on the server, decorates it with the controller as `faults`, and returns the
 * controller. Without a spec, faults are off until `set()`. Hooks run in the order they were added: call
 * this before adding the authentication hook so that faults come first.
 */
export function installFaults(app: FastifyInstance, spec?: FaultSpec | string, options: FaultHookOptions = {}): FaultController {
  const sleep = options.sleep ?? ((ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }));
  const now = options.now ?? (() => performance.now());
  const toSequence = (given: FaultSpec | string | undefined) =>
    given === undefined ? undefined : new FaultSequence(resolveFaults(typeof given === "string" ? parseFaultSpec(given) : given));
  let sequence = toSequence(spec);
  const losing = new WeakSet<FastifyRequest>();
  /** Delays to spend after the handler (`latency-at=answer`). */
  const answerDelays = new WeakMap<FastifyRequest, number>();
  /** Late requests: when they arrived, how long after the client has gone their handler runs, and their deadline. */
  const late = new WeakMap<FastifyRequest, { arrivedAt: number; lateByMs: number; deadline: number }>();
  /** Aborts the waits of late requests when the server closes: a service that stops finishes nothing more. */
  const closing = new AbortController();
  /** Late requests whose handler has not run (or been skipped) yet, and who waits for there to be none. */
  let waitingLate = 0;
  /** While answers are held (`hold()`): what they wait for. */
  let holding: { answers: Promise<void>; release: () => void } | undefined;
  /** Whether the server is closing (its `preClose`), which lets held answers go. */
  let stopping = false;
  let whenIdle: { promise: Promise<void>; resolve: () => void } | undefined;
  const settleIdle = () => {
    if (waitingLate > 0 || !whenIdle) return;
    whenIdle.resolve();
    whenIdle = undefined;
  };

  app.addHook("onRequest", async (request, reply) => {
    const current = sequence;
    if (!current || request.routeOptions.config.public || !request.routeOptions.url) return;
    if (current.faults.methods && !current.faults.methods.has(request.method)) return;
    // Drawn before the first await, so the sequence follows arrival order; the budget is taken on arrival too.
    const arrivedAt = now();
    const retryAfter = current.budgets?.take(budgetKey(request), arrivedAt);
    const { fault, delayMs, lateByMs } = current.draw(retryAfter !== undefined);
    if (delayMs > 0 && current.faults.latencyAt === "answer") answerDelays.set(request, delayMs);
    else if (delayMs > 0) await sleep(delayMs);
    if (retryAfter !== undefined) {
      return reply
        .status(429)
        .header("retry-after", String(retryAfter))
        .send({ detail: `Rate limit exceeded: ${formatRate(current.faults.rate!)} per API key; retry after ${retryAfter} s` });
    }
    switch (fault) {
      case "error":
        return reply.status(current.faults.status).send({ detail: "Service Unavailable (injected fault)" });
      case "throttle":
        return reply
          .status(429)
          .header("retry-after", String(current.faults.retryAfter))
          .send({ detail: "Too Many Requests (injected fault)" });
      case "reset":
        // Hijacked, Fastify runs nothing further for this request: no parsing, no handler. Destroying the
        // response destroys its socket (under `inject`, the injected request fails instead).
        reply.hijack();
        reply.raw.destroy();
        return reply;
      case "lost":
        losing.add(request);
        return;
      case "late":
        late.set(request, { arrivedAt, lateByMs, deadline: current.faults.deadline });
        return;
    }
  });

  // A late request: its body has arrived (so the handler can run without the client); the client is dropped
  // now and the handler runs later, unless that would be after the deadline or the server has closed. A
  // destroyed connection does not stop Fastify's pipeline from here on (only an unread body or a hijack does).
  app.addHook("preHandler", async (request, reply) => {
    const pending = late.get(request);
    if (pending === undefined) return;
    reply.raw.destroy();
    waitingLate++;
    try {
      await sleep(pending.lateByMs, closing.signal);
    } catch (error) {
      if (!closing.signal.aborted) throw error;
    } finally {
      // The handler runs in the microtasks after this hook returns, and the emulator's handlers write as they
      // start: by the next turn of the event loop, what it does has landed.
      if (--waitingLate === 0) setImmediate(settleIdle);
    }
    // Fastify then runs nothing further for this request: no handler, no answer.
    if (closing.signal.aborted || now() - pending.arrivedAt > pending.deadline) reply.hijack();
  });

  // The handler has run and its writes committed; drop the connection instead of answering. Fastify writes
  // the response after this hook whatever it does (hijacking here does not stop it), so the hook waits for
  // the close: the write then goes nowhere, over a socket and under `inject` alike.
  app.addHook("onSend", async (request, reply) => {
    const answerDelay = answerDelays.get(request);
    if (answerDelay !== undefined) await sleep(answerDelay);
    if (holding) {
      await holding.answers;
      // Let go by the server's close, which would otherwise wait on this keep-alive connection: it ends with the answer.
      if (stopping) reply.header("connection", "close");
    }
    // A late request answered before its handler (by authentication, say) is dropped all the same.
    if (!(losing.has(request) || late.has(request)) || reply.raw.destroyed) return;
    const closed = once(reply.raw, "close");
    reply.raw.destroy();
    await closed;
  });

  app.addHook("onClose", async () => closing.abort());
  app.addHook("preClose", (done) => {
    stopping = true;
    holding?.release();
    done();
  });

  const controller: FaultController = {
    set(next) {
      sequence = toSequence(next);
    },
    stats() {
      return { ...(sequence?.counts ?? noFaults()) };
    },
    hold() {
      if (!holding) {
        let release = () => {};
        const answers = new Promise<void>((resolve) => (release = resolve));
        holding = {
          answers,
          release: () => {
            holding = undefined;
            release();
          },
        };
      }
      return holding.release;
    },
    idle() {
      if (waitingLate === 0) return Promise.resolve();
      if (!whenIdle) {
        let resolve = () => {};
        const promise = new Promise<void>((done) => (resolve = done));
        whenIdle = { promise, resolve };
      }
      return whenIdle.promise;
    },
  };
  app.decorate("faults", controller);
  return controller;
}
