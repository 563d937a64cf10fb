/**
 * A placeholder's creation window as bounds on the service's clock, which is what its candidates'
 * `createdAt` are stamped by. Two kinds of window reach the provider:
 * - the provider's own (a create whose answer was lost, see ../client/create.ts), read on the service's
 *   clock from its `Date` headers and already widened by that reading's uncertainty: used as they are;
 * - LocalEngine's, for a create a killed run left in flight, read on the engine machine's clock and marked
 *   `clock: "local"`. That clock may be minutes away from the service's, so the window is shifted by the skew
 *   measured now, the service's `Date` header against this machine's clock (the provider host runs on the
 *   engine's machine), and widened by what that measurement cannot tell.
 * `gmsPlaceholders` is the one hook through which the offline engines (src/testing) learn this package's placeholder
 * of such a create and how its provider is told the stack's ids: they know no marker, id form or type of this package.
 */
import type { CreationWindow } from "../client";
import { kindOfDynamicToken } from "./tokens";
import { placeholderId, UNRESOLVED_CREATE } from "./unsettled";

/** The mark of a window read on the engine machine's clock. */
export const LOCAL_CLOCK = "local";

/** A window as a placeholder records it. */
export interface RecordedWindow extends CreationWindow {
  /** Absent: the service's clock. */
  clock?: typeof LOCAL_CLOCK;
}

/** What the skew is measured with: the provider's client, which reads every answer's `Date` header. */
export interface ServiceClock {
  /** The service's clock as its `Date` headers tell it: at most the truth, by up to a second and a response's travel. */
  serverNow(): number;
  /** The service's deadline for a request (`gms:requestDeadlineMs`): a create in flight may land until it has passed. */
  readonly requestDeadlineMs?: number;
}

/**
 * How far a local window reaches beyond the shifted readings. Below: the measured skew is at most the true
 * one (a `Date` header has whole seconds and is read on arrival), and a service may store whole-second
 * timestamps, a second early. Above: the true skew may be larger than the measured one by a second and a
 * response's travel.
 */
export const SKEW_MARGIN_MS = 2_000;

/**
 * The window's bounds in milliseconds on the service's clock. Call it after a request of `clock` has been
 * answered (the lookup's), so that its reading of the service's clock is a fresh one.
 */
export function serviceWindow(window: RecordedWindow, clock: ServiceClock, now: number = Date.now()): { since: number; until: number } {
  const since = Date.parse(window.since);
  const until = Date.parse(window.until);
  if (window.clock !== LOCAL_CLOCK) return { since, until };
  const skew = clock.serverNow() - now;
  // The create was in flight when the engine was killed: the service may still make its object until its deadline.
  const landsBy = Math.max(until, since + (clock.requestDeadlineMs ?? 0));
  return { since: since + skew - SKEW_MARGIN_MS, until: landsBy + skew + SKEW_MARGIN_MS };
}

/**
 * The environment variable naming a file that lists, one per line, the id of every resource in the stack's
 * state as the operation loaded it. The engines of src/testing write it; a user's `pulumi up` can too
 * (`pulumi stack export | jq -r '.deployment.resources[].id // empty'`). A placeholder never takes an object
 * listed there: it is another resource's.
 */
export const STACK_IDS_FILE = "GMS_STACK_IDS_FILE";

/** The offline engines' one hook into this package's placeholders (`PlaceholderHook` of src/testing/placeholder-hook.ts). */
export const gmsPlaceholders = {
  /**
   * A create a killed run left unsettled (it may or may not have made its object): this package's placeholder, which
   * the next `up` or `destroy` deletes (deleting the object if the provider finds it in the window) and `refresh`
   * resolves; undefined for a resource of another provider, which the engine forgets. `since` and `until` are the
   * engine machine's clock readings: when the create was sent, and when the load found it.
   */
  lostCreate(create: { id: string; type: string; inputs: Record<string, unknown>; since: string; until: string }) {
    // Only this package's dynamic resources' provider resolves a placeholder.
    if (kindOfDynamicToken(create.type) === undefined) return undefined;
    const window: RecordedWindow = { since: create.since, until: create.until, clock: LOCAL_CLOCK };
    return { id: placeholderId(create.id), outputs: { ...create.inputs, [UNRESOLVED_CREATE]: window } };
  },
  /** The file of the ids the stack's state holds, which no placeholder takes. */
  stackIdsVariable: STACK_IDS_FILE,
};
