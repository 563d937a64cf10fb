/**
 * Seeded, reproducible fault injection: answers a fraction of API requests with a 5xx or a 429, resets
 * their connection before any work, or does the work and then loses the response; and delays them.
 *
 * Which requests are subject: every request to a route under `/v1`, before authentication (faults stand
 * for the gateway in front of the service, so a request with a bad key can be faulted too), except the
 * signed file download (`public` routes), which stands in for a separate storage service and which the
 * emulator's own Context Source processing fetches. Unknown paths (404) are not subject.
 *
 * Each subject request takes exactly two draws from the seeded generator, in arrival order: one picks at
 * most one fault over disjoint intervals, one picks the delay. So the same seed and the same sequence of
 * requests give the same faults whatever the spec's other values are.
 */
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
  /** HTTP methods subject to faults; default all. */
  methods?: readonly string[];
}

/** What fault injection did since the spec was last set. */
export interface FaultStats {
  /** Subject requests seen (each took its draws). */
  requests: number;
  error: number;
  throttle: number;
  reset: number;
  lost: number;
  /** Requests delayed by more than 0 ms. */
  delayed: number;
}

export interface FaultController {
  /** Applies a spec (restarting its sequence from the seed and zeroing the stats), or turns faults off. */
  set(spec: FaultSpec | string | undefined): void;
  stats(): FaultStats;
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
  methods: "methods=<METHOD>[+<METHOD>...], e.g. methods=POST+PUT",
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
        if (!WHOLE.test(value)) throw invalid(key, value);
        spec[key === "retry-after" ? "retryAfter" : key] = Number(value);
        break;
      case "error":
      case "throttle":
      case "reset":
      case "lost":
        if (!FRACTION.test(value)) throw invalid(key, value);
        spec[key] = Number(value);
        break;
      case "latency": {
        const range = value.match(/^(\d+)(?:-(\d+))?$/);
        if (!range) throw invalid(key, value);
        spec.latency = range[2] === undefined ? Number(range[1]) : [Number(range[1]), Number(range[2])];
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
  if (faults.methods) parts.push(`methods=${[...faults.methods].join("+")}`);
  return parts.join(",");
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
  /** Undefined: every method. */
  methods: ReadonlySet<string> | undefined;
}

/** Checks a spec object (the string form's checks repeated for callers passing objects) and fills defaults. */
function resolveFaults(spec: FaultSpec): ResolvedFaults {
  const fraction = (key: "error" | "throttle" | "reset" | "lost"): number => {
    const value = spec[key] ?? 0;
    if (typeof value !== "number" || !(value >= 0 && value <= 1)) throw invalid(key, String(value));
    return value;
  };
  const whole = (key: SpecKey, value: number, min: number, max: number): number => {
    if (!Number.isInteger(value) || value < min || value > max) throw invalid(key, String(value));
    return value;
  };
  const latency = spec.latency ?? 0;
  const [min, max] = typeof latency === "number" ? [latency, latency] : latency;
  const latencyText = typeof latency === "number" ? String(latency) : latency.join("-");
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max > MAX_LATENCY_MS) throw invalid("latency", latencyText);
  if (min > max)
    throw new FaultSpecError("latency", `latency=${latencyText}: the minimum is above the maximum; expected ${ACCEPTED.latency}`);
  if (spec.latencyAt !== undefined && spec.latencyAt !== "request" && spec.latencyAt !== "answer")
    throw invalid("latency-at", String(spec.latencyAt));

  let methods: Set<string> | undefined;
  if (spec.methods !== undefined) {
    methods = new Set(spec.methods.map((method) => method.toUpperCase()));
    const unknown = [...methods].find((method) => !HTTP_METHODS.has(method));
    if (unknown !== undefined || methods.size === 0) throw invalid("methods", spec.methods.join("+"));
  }

  const resolved: ResolvedFaults = {
    seed: whole("seed", spec.seed ?? 1, 0, MAX_SEED),
    error: fraction("error"),
    status: whole("status", spec.status ?? 503, 500, 599),
    throttle: fraction("throttle"),
    retryAfter: whole("retry-after", spec.retryAfter ?? 1, 0, Number.MAX_SAFE_INTEGER),
    latency: [min, max],
    latencyAt: spec.latencyAt ?? "request",
    reset: fraction("reset"),
    lost: fraction("lost"),
    methods,
  };
  const total = resolved.error + resolved.throttle + resolved.reset + resolved.lost;
  // A little slack for decimal fractions that add up to 1 (0.1 + 0.2 + 0.3 + 0.4 is 1.0000000000000002).
  if (total > 1 + 1e-9) {
    throw new FaultSpecError(
      "error+throttle+reset+lost",
      `error+throttle+reset+lost must add up to at most 1, as one draw picks at most one of them (got ${total})`,
    );
  }
  return resolved;
}

/** mulberry32: a small, well-known 32-bit generator; uniform in [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Fault = "error" | "throttle" | "reset" | "lost" | undefined;

/** One applied spec: its generator and its counts. */
class FaultSequence {
  private readonly next: () => number;
  readonly counts: FaultStats = { requests: 0, error: 0, throttle: 0, reset: 0, lost: 0, delayed: 0 };

  constructor(readonly faults: ResolvedFaults) {
    this.next = mulberry32(faults.seed);
  }

  /** The fault and delay of the next subject request: always two draws, whatever they pick. */
  draw(): { fault: Fault; delayMs: number } {
    const pick = this.next();
    const spread = this.next();
    const { error, throttle, reset, lost, latency } = this.faults;
    let fault: Fault;
    if (pick < error) fault = "error";
    else if (pick < error + throttle) fault = "throttle";
    else if (pick < error + throttle + reset) fault = "reset";
    else if (pick < error + throttle + reset + lost) fault = "lost";
    const delayMs = latency[0] + Math.floor(spread * (latency[1] - latency[0] + 1));
    this.counts.requests++;
    if (fault) this.counts[fault]++;
    if (delayMs > 0) this.counts.delayed++;
    return { fault, delayMs };
  }
}

export interface FaultHookOptions {
  /** Waits out a drawn delay; tests replace it to observe delays without measuring time. */
  sleep?: (ms: number) => Promise<unknown>;
}

/**
 * Installs the fault hooks on the server, decorates it with the controller as `faults`, and returns the
 * controller. Without a spec, faults are off until `set()`. Hooks run in the order they were added: call
 * this before adding the authentication hook so that faults come first.
 */
export function installFaults(app: FastifyInstance, spec?: FaultSpec | string, options: FaultHookOptions = {}): FaultController {
  const sleep = options.sleep ?? delay;
  const toSequence = (given: FaultSpec | string | undefined) =>
    given === undefined ? undefined : new FaultSequence(resolveFaults(typeof given === "string" ? parseFaultSpec(given) : given));
  let sequence = toSequence(spec);
  const losing = new WeakSet<FastifyRequest>();
  /** Delays to spend after the handler (`latency-at=answer`). */
  const answerDelays = new WeakMap<FastifyRequest, number>();

  app.addHook("onRequest", async (request, reply) => {
    const current = sequence;
    if (!current || request.routeOptions.config.public || !request.routeOptions.url) return;
    if (current.faults.methods && !current.faults.methods.has(request.method)) return;
    // Drawn before the first await, so the sequence follows arrival order.
    const { fault, delayMs } = current.draw();
    if (delayMs > 0 && current.faults.latencyAt === "answer") answerDelays.set(request, delayMs);
    else if (delayMs > 0) await sleep(delayMs);
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
    }
  });

  // The handler has run and its writes committed; drop the connection instead of answering. Fastify writes
  // the response after this hook whatever it does (hijacking here does not stop it), so the hook waits for
  // the close: the write then goes nowhere, over a socket and under `inject` alike.
  app.addHook("onSend", async (request, reply) => {
    const answerDelay = answerDelays.get(request);
    if (answerDelay !== undefined) await sleep(answerDelay);
    if (!losing.has(request) || reply.raw.destroyed) return;
    const closed = once(reply.raw, "close");
    reply.raw.destroy();
    await closed;
  });

  const controller: FaultController = {
    set(next) {
      sequence = toSequence(next);
    },
    stats() {
      return { ...(sequence?.counts ?? { requests: 0, error: 0, throttle: 0, reset: 0, lost: 0, delayed: 0 }) };
    },
  };
  app.decorate("faults", controller);
  return controller;
}
