/**
 * The fault spec: one zod schema (`FaultSpecSchema`) checks a spec object and fills its defaults; the string form
 * (`--faults seed=7,error=0.05,...`) is read into such an object and checked by the same schema. A spec that fails
 * throws a FaultSpecError naming its key as the string form writes it, and that key's accepted form.
 */
import { z } from "zod";

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

const MAX_SEED = 0xffffffff;
/** setTimeout's ceiling. */
const MAX_LATENCY_MS = 2 ** 31 - 1;
const HTTP_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]);
/** The key of the one check over several fields: one draw picks at most one fault. */
const FAULTS_SUM = "error+throttle+reset+lost+late";

/** A fault's delay: fixed milliseconds, or `[min, max]` drawn uniformly. */
type Span = number | readonly [min: number, max: number];
const spanText = (given: unknown) => (Array.isArray(given) ? given.join("-") : String(given));
const spanOf = (given: Span): readonly [number, number] => (typeof given === "number" ? [given, given] : given);

/** Each key of the string form: the spec field it sets, how it is written, and how its text is read (undefined: not so). */
const KEYS = {
  seed: { field: "seed", accepted: "seed=<whole number from 0 to 4294967295>, e.g. seed=7", read: whole },
  error: { field: "error", accepted: "error=<fraction from 0 to 1>, e.g. error=0.05", read: fraction },
  status: { field: "status", accepted: "status=<500 to 599>, e.g. status=502", read: whole },
  throttle: { field: "throttle", accepted: "throttle=<fraction from 0 to 1>, e.g. throttle=0.05", read: fraction },
  "retry-after": { field: "retryAfter", accepted: "retry-after=<whole seconds>, e.g. retry-after=0", read: whole },
  latency: { field: "latency", accepted: "latency=<ms> or latency=<min>-<max> in whole milliseconds, e.g. latency=5-50", read: span },
  "latency-at": {
    field: "latencyAt",
    accepted: "latency-at=request (before the handler, the default) or latency-at=answer (after it, before the answer)",
    read: (text: string) => text,
  },
  reset: { field: "reset", accepted: "reset=<fraction from 0 to 1>, e.g. reset=0.02", read: fraction },
  lost: { field: "lost", accepted: "lost=<fraction from 0 to 1>, e.g. lost=0.02", read: fraction },
  late: { field: "late", accepted: "late=<fraction from 0 to 1>, e.g. late=0.02", read: fraction },
  "late-by": {
    field: "lateBy",
    accepted: "late-by=<ms> or late-by=<min>-<max> in whole milliseconds, at most the deadline, e.g. late-by=100-500",
    read: span,
  },
  deadline: { field: "deadline", accepted: "deadline=<whole milliseconds>, e.g. deadline=2000", read: whole },
  methods: {
    field: "methods",
    accepted: "methods=<METHOD>[+<METHOD>...], e.g. methods=POST+PUT",
    read: (text: string) => (text.split("+").every((method) => /^[A-Za-z]+$/.test(method)) ? text.split("+") : undefined),
  },
  rate: {
    field: "rate",
    accepted: "rate=<requests>/s or rate=<requests>/min, a number above 0, e.g. rate=5/s",
    read: (text: string) => {
      const rate = text.match(/^(\d+(?:\.\d+)?|\.\d+)\/(s|min)$/);
      return rate ? Number(rate[1]) / (rate[2] === "min" ? 60 : 1) : undefined;
    },
  },
  burst: { field: "burst", accepted: "burst=<whole number of 1 or more>, with rate, e.g. rate=5/s,burst=10", read: whole },
} as const;
type SpecKey = keyof typeof KEYS;
type Field = (typeof KEYS)[SpecKey]["field"];

function whole(text: string): number | undefined {
  return /^\d+$/.test(text) ? Number(text) : undefined;
}
function fraction(text: string): number | undefined {
  return /^(?:\d+(?:\.\d+)?|\.\d+)$/.test(text) ? Number(text) : undefined;
}
function span(text: string): Span | undefined {
  const range = text.match(/^(\d+)(?:-(\d+))?$/);
  if (!range) return undefined;
  return range[2] === undefined ? Number(range[1]) : [Number(range[1]), Number(range[2])];
}

const KEY_OF = Object.fromEntries(Object.entries(KEYS).map(([key, { field }]) => [field, key])) as Record<Field, SpecKey>;

const invalid = (key: SpecKey, got: string) => `${key}=${got} is not accepted; expected ${KEYS[key].accepted}`;
/** The message of a value the field does not take, shown as the string form writes it. */
const notAccepted =
  (field: Field, shown: (given: unknown) => string = String) =>
  (issue: { input?: unknown }) =>
    invalid(KEY_OF[field], shown(issue.input));

const wholeNumber = (field: Field, min: number, max: number) =>
  z
    .number({ error: notAccepted(field) })
    .refine((value) => Number.isInteger(value) && value >= min && value <= max, { error: notAccepted(field) });
const share = (field: Field) =>
  z.number({ error: notAccepted(field) }).refine((value) => value >= 0 && value <= 1, { error: notAccepted(field) });
const delay = (field: Field) =>
  z
    .union([z.number(), z.tuple([z.number(), z.number()]).readonly()], { error: notAccepted(field, spanText) })
    .superRefine((given, context) => {
      const [min, max] = spanOf(given);
      if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max > MAX_LATENCY_MS)
        context.addIssue({ code: "custom", message: notAccepted(field, spanText)({ input: given }) });
      else if (min > max)
        context.addIssue({
          code: "custom",
          message: `${KEY_OF[field]}=${spanText(given)}: the minimum is above the maximum; expected ${KEYS[KEY_OF[field]].accepted}`,
        });
    });

/** A fault spec as an object, every field optional, checked and given its defaults (`parseFaultSpec` reads the string form into one). */
export const FaultSpecSchema = z
  .object({
    /** Seed of the generator (a whole number from 0 to 2^32 - 1); default 1. */
    seed: wholeNumber("seed", 0, MAX_SEED).default(1),
    /** Fraction of requests answered 5xx before the handler runs. */
    error: share("error").default(0),
    /** The 5xx status of `error`; default 503. */
    status: wholeNumber("status", 500, 599).default(503),
    /** Fraction of requests answered 429 with `Retry-After` before the handler runs. */
    throttle: share("throttle").default(0),
    /** The `Retry-After` of `throttle`, whole seconds; default 1. */
    retryAfter: wholeNumber("retryAfter", 0, Number.MAX_SAFE_INTEGER).default(1),
    /** Delay of every subject request in milliseconds: fixed, or `[min, max]` drawn uniformly. */
    latency: delay("latency").default(0),
    /**
     * Where `latency` is spent: before the handler (`request`, the default) or after it has run and its
     * writes committed, before the answer leaves (`answer`: a slow response, the object already made).
     */
    latencyAt: z.enum(["request", "answer"], { error: notAccepted("latencyAt") }).default("request"),
    /** Fraction of requests whose connection is destroyed before the handler runs. */
    reset: share("reset").default(0),
    /** Fraction of requests handled (their writes commit) whose connection is then destroyed unanswered. */
    lost: share("lost").default(0),
    /**
     * Fraction of requests whose connection is destroyed once their body has arrived, before the handler:
     * the handler runs `lateBy` later, its writes committing after the client has gone, as a service does
     * when its gateway gave up on the request but it carried on. Never after `deadline`.
     */
    late: share("late").default(0),
    /** How long after the client has gone a `late` request's handler runs, in milliseconds: fixed, or `[min, max]`; default 1000. */
    lateBy: delay("lateBy").optional(),
    /**
     * The service's deadline for a request, in milliseconds from its arrival (default 60000, the client's
     * default `requestDeadlineMs`): a `late` request's handler never starts after it (the emulator's handlers
     * commit as they start), so `lateBy` may not exceed it.
     */
    deadline: wholeNumber("deadline", 0, MAX_LATENCY_MS).default(60_000),
    /** HTTP methods subject to faults; default all. */
    methods: z
      .array(z.string({ error: notAccepted("methods") }), { error: notAccepted("methods") })
      .readonly()
      .refine((methods) => methods.length > 0 && methods.every((method) => HTTP_METHODS.has(method.toUpperCase())), {
        error: notAccepted("methods", (given) => (given as string[]).join("+")),
      })
      .optional(),
    /**
     * Requests a second each API key may make, on average: its budget (`burst` requests) refills at this
     * rate, each key (each workspace key, and the requests without one) its own. A request that finds its
     * key's budget spent is answered 429, `Retry-After` the whole seconds until the budget holds a request
     * again, rounded up. Any number above 0 (`rate=300/min` in the string form is 5). Default: no limit.
     */
    rate: z
      .number({ error: notAccepted("rate", (given) => `${String(given)}/s`) })
      .refine((rate) => rate > 0, { error: notAccepted("rate", (given) => `${String(given)}/s`) })
      .optional(),
    /** How many requests a key's full budget holds (what it may send at once after a quiet spell); default one second's worth, at least 1. */
    burst: wholeNumber("burst", 1, Number.MAX_SAFE_INTEGER).optional(),
  })
  .transform((spec, context) => {
    const fail = (field: Field | undefined, message: string) => {
      context.addIssue({ code: "custom", message, path: field === undefined ? [] : [field], input: spec });
      return z.NEVER;
    };
    if (spec.burst !== undefined && spec.rate === undefined)
      return fail(
        "burst",
        `burst=${spec.burst} without a rate: burst is the rate limit's budget; expected ${KEYS.rate.accepted} beside it`,
      );
    const lateBy = spanOf(spec.lateBy ?? Math.min(1_000, spec.deadline));
    if (lateBy[1] > spec.deadline) {
      return fail(
        "lateBy",
        `late-by=${spanText(spec.lateBy)}: above the deadline (deadline=${spec.deadline}); expected ${KEYS["late-by"].accepted}`,
      );
    }
    const total = spec.error + spec.throttle + spec.reset + spec.lost + spec.late;
    // A little slack for decimal fractions that add up to 1 (0.1 + 0.2 + 0.3 + 0.4 is 1.0000000000000002).
    if (total > 1 + 1e-9)
      return fail(undefined, `${FAULTS_SUM} must add up to at most 1, as one draw picks at most one of them (got ${total})`);
    return {
      ...spec,
      latency: spanOf(spec.latency),
      lateBy,
      /** Undefined: every method. */
      methods: spec.methods && (new Set(spec.methods.map((method) => method.toUpperCase())) as ReadonlySet<string>),
      /** Requests a second per key; undefined: no rate limit. */
      rate: spec.rate,
      burst: spec.burst ?? Math.max(1, Math.ceil(spec.rate ?? 1)),
    };
  });

/** A fault spec as an object; every field optional. `parseFaultSpec` reads the string form into one. */
export type FaultSpec = z.input<typeof FaultSpecSchema>;
/** A spec checked, with its defaults. */
export type ResolvedFaults = z.output<typeof FaultSpecSchema>;

/** The spec checked by the schema, with its defaults; throws FaultSpecError naming the key at fault and its accepted form. */
export function resolveFaults(spec: FaultSpec | string): ResolvedFaults {
  const result = FaultSpecSchema.safeParse(typeof spec === "string" ? parseFaultSpec(spec) : spec);
  if (result.success) return result.data;
  const [issue] = result.error.issues as [z.core.$ZodIssue];
  const field = issue.path[0] as Field | undefined;
  throw new FaultSpecError(field === undefined ? FAULTS_SUM : KEY_OF[field], issue.message);
}

/**
 * Reads `key=value,key=value` (see `KEYS` for the keys) into a FaultSpec holding the keys given, checked by the
 * schema. Throws FaultSpecError naming the key and its accepted form.
 */
export function parseFaultSpec(text: string): FaultSpec {
  const spec: Record<string, unknown> = {};
  const seen = new Set<string>();
  if (text.trim() === "") return spec;
  const accepted = `accepted keys: ${Object.keys(KEYS).join(", ")}`;
  for (const entry of text.split(",")) {
    const match = entry.trim().match(/^([^=\s]+)\s*=\s*(.*)$/);
    if (!match) throw new FaultSpecError(entry.trim(), `"${entry.trim()}" is not key=value; ${accepted}`);
    const [, key, value] = match as unknown as [string, string, string];
    if (!Object.hasOwn(KEYS, key)) throw new FaultSpecError(key, `unknown key "${key}"; ${accepted}`);
    if (seen.has(key)) throw new FaultSpecError(key, `${key} is given twice`);
    seen.add(key);
    const read = KEYS[key as SpecKey].read(value);
    if (read === undefined) throw new FaultSpecError(key, invalid(key as SpecKey, value));
    spec[KEYS[key as SpecKey].field] = read;
  }
  resolveFaults(spec as FaultSpec);
  return spec as FaultSpec;
}

/** The spec with its defaults, one line, in the string form (so it can be passed back to `--faults`). */
export function formatFaultSpec(spec: FaultSpec | string): string {
  const faults = resolveFaults(spec);
  const spanned = ([min, max]: readonly [number, number]) => (min === max ? `${min}` : `${min}-${max}`);
  const parts = [`seed=${faults.seed}`];
  if (faults.error > 0) parts.push(`error=${faults.error}`, `status=${faults.status}`);
  if (faults.throttle > 0) parts.push(`throttle=${faults.throttle}`, `retry-after=${faults.retryAfter}`);
  if (faults.latency[1] > 0) parts.push(`latency=${spanned(faults.latency)}`);
  if (faults.latency[1] > 0 && faults.latencyAt === "answer") parts.push("latency-at=answer");
  if (faults.reset > 0) parts.push(`reset=${faults.reset}`);
  if (faults.lost > 0) parts.push(`lost=${faults.lost}`);
  if (faults.late > 0) parts.push(`late=${faults.late}`, `late-by=${spanned(faults.lateBy)}`, `deadline=${faults.deadline}`);
  if (faults.methods) parts.push(`methods=${[...faults.methods].join("+")}`);
  if (faults.rate !== undefined) parts.push(`rate=${formatRate(faults.rate)}`, `burst=${faults.burst}`);
  return parts.join(",");
}

/** A rate in the string form: per second, or per minute when that is whole and per second a long fraction (100/min, not 1.6666666666666667/s). */
export function formatRate(perSecond: number): string {
  const perMinute = Math.round(perSecond * 60);
  const longFraction = (String(perSecond).split(".")[1]?.length ?? 0) > 3;
  return longFraction && Math.abs(perSecond * 60 - perMinute) < 1e-9 ? `${perMinute}/min` : `${perSecond}/s`;
}
