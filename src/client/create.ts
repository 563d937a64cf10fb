/**
 * Creating exactly once over an unreliable network. A POST whose answer never arrives whole (the
 * connection cut after sending, a timeout, a 5xx, a 2xx body that cannot be read) may or may not have
 * created the object, and sending it again blindly makes a duplicate that nobody manages. So the client
 * finds out instead: it lists the objects that match what the POST asked for (the caller's
 * `findCreated`), keeps those created since the POST was sent (by the service's clock) that no other
 * create of this client has already taken, and adopts the one it finds. Only when the lookup proves
 * that nothing was created does it send the POST again, after a backoff.
 *
 * An empty lookup proves that only once the service has finished with the POST. After a timeout, a
 * connection lost after sending, or a gateway's 502 or 504, the service may still be working on it and
 * make the object after the lookup; so the client looks again, backing off, until the service's deadline
 * for a request (`requestDeadlineMs` from sending) has passed, and sends the POST again only when a lookup
 * begun after it finds nothing. A deadline further off than `maxSettleWaitMs` is not waited out.
 *
 * When the lookup itself fails, finds several candidates, or cannot outwait the deadline, it stops with an
 * unresolved `MayExistError` that says when the object may have been created (up to the deadline), so that
 * the caller can record that and look again on the next run.
 */
import type { z } from "zod";
import { ConnectionError, GmsError, ResponseShapeError, ServerError, TimeoutError, type RequestLabel } from "./errors";
import { type EncodedPath, childPath } from "./path";
import { describeTimeout, type OperationTimeout, operationTimeout, timeLeft } from "./operation-timeout";
import { retryDelayMs, type RetryPolicy } from "./retry";

/** An object that a lost POST may have created: its GUID and, when the service says, its creation time. */
export interface CreatedCandidate {
  guid: string;
  createdAt?: string | null | undefined;
  /**
   * For a record with no creation time: a moment it cannot be older than (a Dataset is no older than its App),
   * when one is known.
   */
  notBefore?: string | undefined;
}

/** A create's answer: a record with its GUID. */
type Created = z.ZodType<{ guid: string }>;

export interface CreateOptions<S extends Created> {
  /** The collection; a found object is read at `<path>/<guid>`, to answer what the POST would have. */
  path: EncodedPath;
  body: unknown;
  schema: S;
  /** Lists the live objects that match the POST's body (name and the other fields the service keeps). */
  findCreated: () => Promise<CreatedCandidate[]>;
  /**
   * For kinds whose records carry no creation time: list the matching objects before the POST (one GET
   * more per create), so that a lookup after a lost answer can tell the new object from older ones.
   */
  listBeforeCreate?: boolean;
  /**
   * What `findCreated` tells objects apart by (default: the whole body). Creates of one identity on one
   * client are sent one at a time, so a lookup after a lost answer never meets a twin made concurrently.
   */
  identity?: unknown;
}

/**
 * When the object may have been created, by the service's clock: the window a later run searches. The
 * bounds are generous by the clock's uncertainty; ISO 8601.
 */
export interface CreationWindow {
  since: string;
  until: string;
  /**
   * What matched before the POST was sent (with `listBeforeCreate`): never the object it made. With it,
   * a match that reports no creation time is still known to be new.
   */
  existing?: string[];
}

/**
 * What is known of an object that a create may have made:
 * - `made`: it was made (it exists, unless something deleted it since), under `id`, its outputs as far as they are
 *   known (none when it could not be read back);
 * - `unresolved`: the create's answer was lost and the lookup could not settle whether it made the object: the window
 *   it may have been made in, and the GUIDs found when several objects matched (none when the lookup failed).
 */
export type MayExist =
  | { state: "made"; id: string; outputs: Record<string, unknown> }
  | { state: "unresolved"; window: CreationWindow; candidates: readonly string[] };

/**
 * The one error that means "the object may exist": a create that made its object, or may have, and did not finish.
 * The client throws it for a lost answer, a kind for a later step that failed, the provider's core turns it into a
 * partial create that state records, and the two forms hand that to the engine in it again: the engine's
 * `ErrorResourceInitFailed`, whose `id`, `properties` and `reasons` the dynamic-provider host reads from the error.
 * Its `code` says which: `created_but_failed` (made) or `unresolved_create` (docs/provider.md, "Errors").
 */
export class MayExistError extends Error {
  override readonly name = "MayExistError";
  readonly code: "created_but_failed" | "unresolved_create";
  /** Why, as the engine records them with the resource (its init errors): the message, unless the engine said otherwise. */
  readonly reasons: string[];
  // Private, read through getters: the outputs hold the resource's secrets in plaintext, and stay out of what inspecting,
  // printing or serializing the error shows (its own properties, util.inspect, JSON).
  readonly #made: MayExist;

  constructor(message: string, made: MayExist, options?: ErrorOptions & { reasons?: string[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.#made = made;
    this.code = made.state === "made" ? "created_but_failed" : "unresolved_create";
    this.reasons = options?.reasons ?? [message];
  }

  get made(): MayExist {
    return this.#made;
  }

  /** The made object's id (the engine's form), undefined while unresolved. */
  get id(): string | undefined {
    return this.#made.state === "made" ? this.#made.id : undefined;
  }

  /** The made object's outputs (the engine's form, secrets in plaintext: for the engine, never for a person). */
  get properties(): Record<string, unknown> | undefined {
    return this.#made.state === "made" ? this.#made.outputs : undefined;
  }
}

/** What `createOnce` needs of the client. */
export interface CreatingClient {
  request<S extends z.ZodType>(options: { method: "POST" | "GET"; path: EncodedPath; body?: unknown; schema: S }): Promise<z.output<S>>;
  /** The service's clock as last seen (its `Date` header), never ahead of it. */
  serverNow(): number;
  /** How long after sending the service may still act on a request (see `GmsClientOptions`). */
  readonly requestDeadlineMs: number;
  /** GUIDs this client created or adopted: never adopted a second time. */
  readonly claimed: Set<string>;
  /** The last create of each identity under way (see `CreateOptions.identity`). */
  readonly creating: Map<string, Promise<void>>;
}

/**
 * How far the window reaches beyond the clock readings: `Date` has whole seconds and is read one
 * response late, and a service may store whole-second timestamps.
 */
const CLOCK_MARGIN_MS = 1_000;

/**
 * How long past the service's deadline the client waits before its last lookup, timed on its own clock (so
 * no allowance for `Date`'s whole seconds): the POST reached the service a little after it left here, and
 * the service counts its deadline from then.
 */
const DEADLINE_MARGIN_MS = 250;

/** The shortest wait between two lookups while the service may still be acting on a lost POST. */
const MIN_LOOKUP_INTERVAL_MS = 50;

/** Errors after which the POST may or may not have acted. A 4xx, a 429 or an unsent request are definite. */
export function leavesCreateUnknown(error: unknown): boolean {
  if (error instanceof ConnectionError) return !error.provablyUnsent;
  if (error instanceof TimeoutError || error instanceof ServerError || error instanceof ResponseShapeError) return true;
  return error instanceof GmsError && error.status === 408;
}

/**
 * Of the errors that leave a create unknown, those after which the service may still be acting on the
 * request: no answer came from it (a timeout, the connection lost after sending) or a gateway answered
 * for it (502, 504). Any other answer, a 5xx or an unreadable 2xx, means the service has finished with it.
 */
export function mayStillBeActing(error: unknown): boolean {
  if (error instanceof TimeoutError) return true;
  if (error instanceof ConnectionError) return !error.provablyUnsent && !error.answered;
  return error instanceof ServerError && (error.status === 502 || error.status === 504);
}

/** A POST whose answer was lost: when it was sent, by the service's clock and by ours. */
interface LostAnswer {
  error: unknown;
  /** The POST's round, from 1. */
  round: number;
  /** `serverNow()` when the POST was sent. */
  sentAt: number;
  /** `policy.now()` when the POST was sent. */
  sentClock: number;
  /** Service time after which the POST can no longer act; undefined when the service has finished with it. */
  actsUntil: number | undefined;
}

export function createOnce<S extends Created>(
  client: CreatingClient,
  options: CreateOptions<S>,
  policy: RetryPolicy,
): Promise<z.output<S>> {
  const identity = `${options.path}\n${JSON.stringify(options.identity ?? options.body)}`;
  const previous = client.creating.get(identity) ?? Promise.resolve();
  const created = previous.then(() => createAlone(client, options, policy));
  const settled = created.then(
    () => undefined,
    () => undefined,
  );
  client.creating.set(identity, settled);
  void settled.then(() => client.creating.get(identity) === settled && client.creating.delete(identity));
  return created;
}

async function createAlone<S extends Created>(
  client: CreatingClient,
  options: CreateOptions<S>,
  policy: RetryPolicy,
): Promise<z.output<S>> {
  const label = { method: "POST", path: options.path };
  const existing = options.listBeforeCreate ? new Set((await options.findCreated()).map((candidate) => candidate.guid)) : undefined;
  for (let round = 1; ; round++) {
    const sentAt = client.serverNow();
    const sentClock = policy.now();
    try {
      const record = await client.request({ method: "POST", path: options.path, body: options.body, schema: options.schema });
      client.claimed.add(record.guid);
      return record;
    } catch (error) {
      if (!leavesCreateUnknown(error)) throw error;
      if (error instanceof GmsError) error.attempts = round;
      const actsUntil = mayStillBeActing(error) ? sentAt + client.requestDeadlineMs : undefined;
      const lost: LostAnswer = { error, round, sentAt, sentClock, actsUntil };
      const found = await findLostObject(client, options, policy, label, lost, existing);
      if (found !== undefined) {
        client.claimed.add(found);
        try {
          return await client.request({ method: "GET", path: childPath(options.path, found), schema: options.schema });
        } catch (readError) {
          throw new MayExistError(
            `${label.method} ${label.path}: the answer was lost; the object it made (${found}) was found, but reading it failed (${describe(readError)})`,
            { state: "made", id: found, outputs: {} },
            { cause: readError },
          );
        }
      }
      // Proven absent: the POST did nothing, so sending it again is safe.
      if (round > policy.maxRetries) throw error;
    }
  }
}

/**
 * The GUID of the object the lost POST created, or undefined once it is proven that there is none: by one
 * lookup when the service has finished with the POST, else by looking again (backing off) until a lookup
 * begun after the POST's deadline finds nothing.
 */
async function findLostObject<S extends Created>(
  client: CreatingClient,
  options: CreateOptions<S>,
  policy: RetryPolicy,
  label: RequestLabel,
  lost: LostAnswer,
  existing: ReadonlySet<string> | undefined,
): Promise<string | undefined> {
  // Measured on our own monotonic clock (elapsed time is the same on the service's), with the margin.
  const deadline = lost.actsUntil === undefined ? Number.NEGATIVE_INFINITY : lost.sentClock + client.requestDeadlineMs + DEADLINE_MARGIN_MS;
  // Work the service had under way when the answer was lost gets a moment to land before the lookup.
  let delay = retryDelayMs(lost.round - 1, lost.error as GmsError, policy) ?? policy.maxDelayMs;
  for (let look = 0; ; look++) {
    await policy.sleep(delay);
    const lookedAt = policy.now();
    let found: string | undefined;
    try {
      found = await lookUp(client, options, label, lost, existing);
    } catch (error) {
      // Only the lookup after the deadline settles it: one that failed before is made again then.
      const failedLookup = error instanceof MayExistError && error.made.state === "unresolved" && error.made.candidates.length === 0;
      if (!failedLookup || lookedAt >= deadline || deadline - policy.now() > policy.maxSettleWaitMs) throw error;
    }
    if (found !== undefined || lookedAt >= deadline) return found;
    const remaining = deadline - policy.now();
    if (look === 0 && remaining > policy.maxSettleWaitMs) throw outwaited(client, label, lost, remaining, policy, existing);
    // The engine's bound on the step runs out first: left unsettled, as a wait too long to make.
    const bound = operationTimeout();
    if (bound !== undefined && remaining > timeLeft()) throw outwaited(client, label, lost, remaining, policy, existing, bound);
    // Capped exponential with half of it jittered, and never past the deadline: the last lookup begins just after it.
    const ceiling = Math.min(policy.maxDelayMs, Math.max(policy.baseDelayMs, MIN_LOOKUP_INTERVAL_MS) * 2 ** look);
    delay = Math.min(Math.max(remaining, 0), Math.floor(ceiling / 2 + (policy.random() * ceiling) / 2));
  }
}

/**
 * The GUID of the object the lost POST created, or undefined when the lookup found none (proof that there
 * is none only once the POST can no longer act).
 */
async function lookUp<S extends Created>(
  client: CreatingClient,
  options: CreateOptions<S>,
  label: RequestLabel,
  lost: LostAnswer,
  existing: ReadonlySet<string> | undefined,
): Promise<string | undefined> {
  let candidates: CreatedCandidate[];
  try {
    candidates = await options.findCreated();
  } catch (lookupError) {
    throw unresolved(
      label,
      `the answer was lost (${describe(lost.error)}) and looking up whether the object was created failed too (${describe(lookupError)}); it may exist`,
      lostWindow(client, lost, existing),
      [],
      lookupError,
    );
  }
  // Read after the lookup, whose answers carried the service's clock.
  const since = lost.sentAt - CLOCK_MARGIN_MS;
  const fresh = candidates.filter(
    (candidate) => !client.claimed.has(candidate.guid) && !existing?.has(candidate.guid) && createdSince(candidate, since),
  );
  if (fresh.length <= 1) return fresh[0]?.guid;
  throw unresolved(
    label,
    `the answer was lost (${describe(lost.error)}) and ${fresh.length} objects that match it were created since ` +
      `(${fresh.map((candidate) => candidate.guid).join(", ")}); it is not known which one is this resource's`,
    lostWindow(client, lost, existing),
    fresh.map((candidate) => candidate.guid),
    lost.error,
  );
}

/** The service may act on the lost POST for longer than this client waits: the next run looks again. */
function outwaited(
  client: CreatingClient,
  label: RequestLabel,
  lost: LostAnswer,
  remainingMs: number,
  policy: RetryPolicy,
  existing: ReadonlySet<string> | undefined,
  bound?: OperationTimeout,
): MayExistError {
  const until = new Date((lost.actsUntil ?? lost.sentAt) + CLOCK_MARGIN_MS).toISOString();
  const longer = bound
    ? `longer than the step has left of ${describeTimeout(bound)}`
    : `longer than this client waits (${policy.maxSettleWaitMs} ms)`;
  return unresolved(
    label,
    `the answer was lost (${describe(lost.error)}) and the service may still create the object until ${until} ` +
      `(its request deadline, ${client.requestDeadlineMs} ms after sending); nothing has appeared yet, and that is ` +
      `${Math.ceil(remainingMs / 1000)} s away, ${longer}; it may exist`,
    lostWindow(client, lost, existing),
    [],
    lost.error,
  );
}

/** A lost create the lookup could not settle, named by its request as the client's errors are. */
const unresolved = (label: RequestLabel, detail: string, window: CreationWindow, candidates: string[], cause: unknown): MayExistError =>
  new MayExistError(`${label.method} ${label.path}: ${detail}`, { state: "unresolved", window, candidates }, { cause });

/** Up to now, or to the end of the POST's deadline when it may still act. */
const lostWindow = (client: CreatingClient, lost: LostAnswer, existing: ReadonlySet<string> | undefined): CreationWindow =>
  windowOf(lost.sentAt, Math.max(client.serverNow(), lost.actsUntil ?? Number.NEGATIVE_INFINITY), existing);

/** Candidates whose creation time the service does not report are kept: only the other fields identify them. */
export function createdSince(candidate: CreatedCandidate, since: number): boolean {
  if (candidate.createdAt === undefined || candidate.createdAt === null) return true;
  const created = Date.parse(candidate.createdAt);
  return Number.isNaN(created) || created >= since;
}

export const windowOf = (sentAt: number, lookedUpAt: number, existing: ReadonlySet<string> | undefined): CreationWindow => ({
  since: new Date(sentAt - CLOCK_MARGIN_MS).toISOString(),
  until: new Date(lookedUpAt + CLOCK_MARGIN_MS).toISOString(),
  ...(existing ? { existing: [...existing] } : {}),
});

const describe = (error: unknown): string =>
  error instanceof GmsError
    ? error.status === undefined
      ? error.detail
      : `${error.status} ${error.detail}`
    : error instanceof Error
      ? error.message
      : String(error);
