/**
 * Creating exactly once over an unreliable network. A POST whose answer never arrives whole (the
 * connection cut after sending, a timeout, a 5xx, a 2xx body that cannot be read) may or may not have
 * created the object, and sending it again blindly makes a duplicate that nobody manages. So the client
 * finds out instead: it lists the objects that match what the POST asked for (the caller's
 * `findCreated`), keeps those created since the POST was sent (by the service's clock) that no other
 * create of this client has already taken, and adopts the one it finds. Only when the lookup proves
 * that nothing was created does it send the POST again, after a backoff. When the lookup itself fails,
 * or finds several candidates, it stops with an `UnresolvedCreateError` that says when the object may
 * have been created, so that the caller can record that and look again on the next run.
 */
import type { z } from "zod";
import { ConnectionError, GmsError, ResponseShapeError, ServerError, TimeoutError, type RequestLabel } from "./errors";
import { type EncodedPath, childPath } from "./path";
import { retryDelayMs, type RetryPolicy } from "./retry";

/** An object that a lost POST may have created: its GUID and, when the service says, its creation time. */
export interface CreatedCandidate {
  guid: string;
  createdAt?: string | null | undefined;
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

/** The create's answer was lost and the lookup could not settle whether the object exists. */
export class UnresolvedCreateError extends GmsError {
  override readonly name = "UnresolvedCreateError";
  override readonly code = "create_unresolved";
  readonly window: CreationWindow;
  /** The GUIDs found when several objects matched; empty when the lookup failed. */
  readonly candidates: string[];

  constructor(label: RequestLabel, detail: string, window: CreationWindow, candidates: string[], cause: unknown) {
    super({ ...label, detail, cause }, `${label.method} ${label.path}: ${detail}`);
    this.window = window;
    this.candidates = candidates;
  }
}

/** The lost create's object was found (and is this client's now), but reading it failed: it exists. */
export class CreatedUnreadError extends GmsError {
  override readonly name = "CreatedUnreadError";
  override readonly code = "created_unread";

  constructor(
    label: RequestLabel,
    detail: string,
    readonly guid: string,
    cause: unknown,
  ) {
    super({ ...label, detail, cause }, `${label.method} ${label.path}: ${detail}`);
  }
}

/** What `createOnce` needs of the client. */
export interface CreatingClient {
  request<S extends z.ZodType>(options: { method: "POST" | "GET"; path: EncodedPath; body?: unknown; schema: S }): Promise<z.output<S>>;
  /** The service's clock as last seen (its `Date` header), never ahead of it. */
  serverNow(): number;
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

/** Errors after which the POST may or may not have acted. A 4xx, a 429 or an unsent request are definite. */
export function leavesCreateUnknown(error: unknown): boolean {
  if (error instanceof ConnectionError) return !error.provablyUnsent;
  if (error instanceof TimeoutError || error instanceof ServerError || error instanceof ResponseShapeError) return true;
  return error instanceof GmsError && error.status === 408;
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
    try {
      const record = await client.request({ method: "POST", path: options.path, body: options.body, schema: options.schema });
      client.claimed.add(record.guid);
      return record;
    } catch (error) {
      if (!leavesCreateUnknown(error)) throw error;
      if (error instanceof GmsError) error.attempts = round;
      // Work the service had under way when the answer was lost gets a moment to land before the lookup.
      const delay = retryDelayMs(round - 1, error as GmsError, policy) ?? policy.maxDelayMs;
      await policy.sleep(delay);
      const found = await lookUp(client, options, label, sentAt, error, existing);
      if (found !== undefined) {
        client.claimed.add(found);
        try {
          return await client.request({ method: "GET", path: childPath(options.path, found), schema: options.schema });
        } catch (readError) {
          throw new CreatedUnreadError(
            label,
            `the answer was lost; the object it made (${found}) was found, but reading it failed (${describe(readError)})`,
            found,
            readError,
          );
        }
      }
      // Proven absent: the POST did nothing, so sending it again is safe.
      if (round > policy.maxRetries) throw error;
    }
  }
}

/** The GUID of the object the lost POST created, or undefined when the lookup proves there is none. */
async function lookUp<S extends Created>(
  client: CreatingClient,
  options: CreateOptions<S>,
  label: RequestLabel,
  sentAt: number,
  lost: unknown,
  existing: ReadonlySet<string> | undefined,
): Promise<string | undefined> {
  let candidates: CreatedCandidate[];
  try {
    candidates = await options.findCreated();
  } catch (lookupError) {
    const window = windowOf(sentAt, client.serverNow(), existing);
    throw new UnresolvedCreateError(
      label,
      `the answer was lost (${describe(lost)}) and looking up whether the object was created failed too (${describe(lookupError)}); it may exist`,
      window,
      [],
      lookupError,
    );
  }
  // Read after the lookup, whose answers carried the service's clock.
  const since = sentAt - CLOCK_MARGIN_MS;
  const fresh = candidates.filter(
    (candidate) => !client.claimed.has(candidate.guid) && !existing?.has(candidate.guid) && createdSince(candidate, since),
  );
  if (fresh.length <= 1) return fresh[0]?.guid;
  throw new UnresolvedCreateError(
    label,
    `the answer was lost (${describe(lost)}) and ${fresh.length} objects that match it were created since ` +
      `(${fresh.map((candidate) => candidate.guid).join(", ")}); it is not known which one is this resource's`,
    windowOf(sentAt, client.serverNow(), existing),
    fresh.map((candidate) => candidate.guid),
    lost,
  );
}

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
