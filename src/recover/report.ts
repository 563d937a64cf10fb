/**
 * What recover found, decided and did, as one document (`--json` prints it; ./render.ts words it for people): the
 * lock, the interrupted update's start, each pending create's plan, the other pending operations, what stops recover
 * from applying (any one of them stops all of it: `pulumi stack import` clears every pending operation, so a create
 * left unsettled would lose its record), and what to run next.
 */
import { describeHolder, type LockHolder, type Locks } from "./lock";
import type { CreatePlan, ForeignPlan } from "./plan";
import type { OtherOperation } from "./stack";

export interface LockReport {
  /** False for a backend whose locks recover cannot read (`reason` says which). */
  readable: boolean;
  reason?: string;
  holders: LockHolder[];
  /** Whether recover releases it (every holder a run of this machine that is gone). */
  release: boolean;
}

export interface RecoveryReport {
  stack: string;
  /** Whether recover changed the stack (`--yes`, and nothing stopped it). */
  applied: boolean;
  lock: LockReport;
  /** The interrupted update's start, from its lock (this machine's clock); null when recover does not know it. */
  since: string | null;
  pendingCreates: CreatePlan[];
  foreignCreates: ForeignPlan[];
  /** Pending operations that need no lookup: cleared by the import, their resources refreshed. */
  otherOperations: OtherOperation[];
  /** Why recover does not apply the plan, each in a sentence; empty when it can. */
  blockers: string[];
  /**
   * Another run has the stack: its lock names a run still going or one recover cannot check, or the stack changed
   * while recover looked. Running recover again once that run has ended is all it takes (a pipeline waits for it).
   */
  underway: boolean;
  /** The commands to run next. */
  next: string[];
  /** What recover cannot settle and the user must know before running again (`unrecordedRun`). */
  warnings: string[];
}

/**
 * The lock as read, and whether recover releases it: when every holder is a run of this machine that is gone, or when
 * the caller `vouched` that its runs are gone (`--release-lock`) and none is a process still running here. A backend
 * whose locks recover cannot read is released only when vouched for (else the CLI names its holders if it refuses).
 */
export function lockReport(locks: Locks, vouched = false): LockReport {
  if (!locks.readable) return { readable: false, reason: locks.reason, holders: [], release: vouched };
  const freed = (holder: LockHolder) => holder.status === "gone" || (vouched && holder.status === "elsewhere");
  return { readable: true, holders: locks.holders, release: locks.holders.length > 0 && locks.holders.every(freed) };
}

/** Why the lock stops recover, if it does. */
export function lockBlocker(lock: LockReport, stack: string): string | undefined {
  if (lock.release) return undefined;
  const running = lock.holders.filter((holder) => holder.status === "running");
  if (running.length > 0)
    return (
      `the stack is locked by a run that is still going (${running.map(describeHolder).join("; ")}): ` +
      "its creates may be in flight; run recover once it has ended"
    );
  const elsewhere = lock.holders.filter((holder) => holder.status === "elsewhere");
  if (elsewhere.length > 0)
    return (
      `the stack is locked by a run of another machine, which recover cannot check (${elsewhere.map(describeHolder).join("; ")}). ` +
      `If that run is gone (its runner was stopped), run recover again with --release-lock, or release the lock with ` +
      `\`pulumi cancel --stack ${stack} --yes\` and run recover again ` +
      "(it then does not know when the update began, so any match held by no resource counts)"
    );
  return undefined;
}

export function reportOf(parts: {
  stack: string;
  lock: LockReport;
  since: number | undefined;
  pendingCreates: CreatePlan[];
  foreignCreates: ForeignPlan[];
  otherOperations: OtherOperation[];
  /** The URNs `--choose` names that have no pending create. */
  unknownChoices?: string[];
  /** The checkpoint's last write (its manifest's time, this machine's ms), when it says. */
  lastWriteAt?: number | undefined;
}): RecoveryReport {
  const { stack, lock, pendingCreates, foreignCreates } = parts;
  const blockers: string[] = (parts.unknownChoices ?? []).map((urn) => `--choose names ${urn}, which has no pending create in the stack`);
  const lockStops = lockBlocker(lock, stack);
  if (lockStops) blockers.push(lockStops);
  const unsettled = [...pendingCreates, ...foreignCreates].filter((plan) => plan.outcome === "ambiguous" || plan.outcome === "unsettled");
  if (unsettled.length > 0)
    blockers.push(
      `${unsettled.length} pending create${unsettled.length === 1 ? " is" : "s are"} not settled (${unsettled.map((plan) => plan.urn).join(", ")}): ` +
        "recover changes nothing until each is, since importing the stack clears every pending operation",
    );
  const warnings = lock.holders.length > 0 ? unrecordedRun(stack, parts.since, parts.lastWriteAt) : [];
  // After a run that recorded nothing, what comes next is that run's own command (the warning says which are safe).
  const next = blockers.length === 0 && warnings.length === 0 ? [`pulumi up --stack ${stack}`] : [];
  return {
    stack,
    applied: false,
    lock,
    since: parts.since === undefined ? null : new Date(parts.since).toISOString(),
    pendingCreates,
    foreignCreates,
    otherOperations: parts.otherOperations,
    blockers,
    underway: !lock.release && lock.holders.some((holder) => holder.status !== "gone"),
    next,
    warnings,
  };
}

/**
 * Whether what the killed run did may be recorded nowhere: its lock says when it began, and the checkpoint's last write
 * is older. A run writes the checkpoint as its first change begins (a pending operation), so one that wrote none since
 * it began changed nothing, or ran with PULUMI_SKIP_CHECKPOINTS=true, which writes the checkpoint only when the run
 * ends. Then the objects it created are in the service and in no stack, and no pending operation names them. Both
 * times are the run's machine's clock when that machine wrote the checkpoint before; another's may hide the case.
 */
export function unrecordedRun(stack: string, since: number | undefined, lastWriteAt: number | undefined): string[] {
  if (since === undefined || (lastWriteAt !== undefined && lastWriteAt >= since)) return [];
  const last = lastWriteAt === undefined ? "never written" : `last written at ${new Date(lastWriteAt).toISOString()}`;
  return [
    `the killed run wrote no checkpoint after it began at ${new Date(since).toISOString()} (the checkpoint was ${last}): ` +
      "either it changed nothing, or it ran with PULUMI_SKIP_CHECKPOINTS=true and nothing it did is recorded. " +
      "When it creates nothing (an adoption's imports, a refresh, a destroy), run the same command again. " +
      `Otherwise an object it created is in the service and in no stack, and running it again makes it twice: ` +
      `\`pulumi-gms discover --stack ${stack}\` lists what the stack does not hold, to import into it or delete first`,
  ];
}

/** Whether there is anything to change: a lock to release, or a pending operation to settle. */
export const hasWork = (report: RecoveryReport): boolean =>
  report.lock.release || report.pendingCreates.length > 0 || report.foreignCreates.length > 0 || report.otherOperations.length > 0;
