/**
 * When the interrupted update's creates may have made their objects, as bounds recover can know.
 *
 * Below: the update's start. The diy backend's lock is written when an update begins, before any step, and names
 * the moment on the clock of the machine that ran it; recover reads it (./lock.ts: a file backend's lock files, a
 * bucket's as the CLI names them) before releasing it. The
 * checkpoint's manifest time is no lower bound (it is the run's last write, after most of its creates were sent),
 * nor is the stack's history (the file backend records an update there only when it ends, and a refresh or an `up`
 * run since the kill would move the bound past the objects). Without a lock (released already, or Pulumi Cloud's,
 * which names no time) there is no lower bound: any match held by no resource counts, and an older orphan of
 * the same identity then makes the create ambiguous rather than being taken silently.
 *
 * The lock's moment is shifted onto the service's clock by the skew measured after the lookup, the service's `Date`
 * header against this machine's clock (a lock recover releases by itself is this machine's, so its clock is this one;
 * another machine's, released with `--release-lock`, counts five minutes earlier than it says), less the margin
 * src/provider/window.ts allows for what that measurement cannot tell.
 *
 * Above: nothing an object was made after can have been sent by the interrupted run, but a create it had in flight
 * may still land until the service's deadline for a request has passed since it was sent. Its POSTs were sent after
 * the pending operation was written and before the kill; recover takes the run's last write of the checkpoint as the
 * latest sending it can know of, and before dropping a create that found nothing it waits until that write plus the
 * deadline (`gms:requestDeadlineMs`, 60 s by default) has passed, then looks again.
 */
import { SKEW_MARGIN_MS, type ServiceClock } from "../provider/window";

/** The interrupted update's start on the service's clock (ms), from its start on this machine's clock. */
export function sinceOnService(startedAt: number | undefined, clock: ServiceClock, now: number = Date.now()): number | undefined {
  if (startedAt === undefined) return undefined;
  return startedAt + (clock.serverNow() - now) - SKEW_MARGIN_MS;
}

/** When (this machine's ms) a create sent at the run's last write of the checkpoint has landed, if it was going to. */
export const landedBy = (lastWriteAt: number | undefined, clock: Required<ServiceClock>): number | undefined =>
  lastWriteAt === undefined ? undefined : lastWriteAt + clock.requestDeadlineMs + SKEW_MARGIN_MS;
