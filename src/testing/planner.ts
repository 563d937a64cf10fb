/**
 * The step decisions of LocalEngine, in one pure place: what to do with a registration, a resource the
 * program no longer declares, a resource a refresh read, and a read (`.get`), from the old state of the
 * resource (or none), the registration (the goal), the provider's answers (check, diff, read) and what the
 * operation met so far (check failures, failed resources, a stop). No I/O and no clock: `Deployment`
 * (engine.ts) asks the provider what a plan asks for, runs the step a plan answers, and tells the state books
 * (operation-state.ts) and the failures (operation-failures.ts) what happened.
 *
 * As the Pulumi engine's step generator decides (pkg/resource/deploy/step_generator.go, `generateSteps` and
 * `generateStepsFromDiff`):
 * - no old state: create;
 * - otherwise the provider's diff (of the old OUTPUTS against the checked inputs); a DIFF_UNKNOWN falls back
 *   to comparing the inputs (`diffResource`). No change: same, unless the old object has init errors
 *   (a create that made it but failed to finish it), which is updated so that it is finished;
 * - a change without replacement keys: update; with them: replace, the old object deleted after the
 *   program (create-before-delete), or first (delete-before-replace) when the `deleteBeforeReplace` option
 *   says so, or, left unset, the diff does.
 * And as the CLI propagates a failure: after a check failure no step starts (checks still run, so every
 * failure is reported at once); after a failed step, one that depends on it is skipped, and without
 * `continueOnError` no step starts at all (steps under way finish).
 */
import type { CheckFailure, EngineErrorCode } from "./errors";
import type { CheckResult, DiffResult } from "./host";
import { type Props, annotateSecrets, changedKeys } from "./properties";
import type { ResourceState } from "./state";

/** A registration as the planner reads it. */
export interface Goal {
  urn: string;
  /** False for a component resource (the root stack included): not recorded, no step. */
  custom: boolean;
  /** Resource options the offline engine does not implement. */
  unsupported: string[];
  /** The inputs as the program sent them (secrets marked). */
  inputs: Props;
  parent: string;
  dependencies: string[];
  /** The `deleteBeforeReplace` option; undefined leaves it to the diff. */
  deleteBeforeReplace: boolean | undefined;
}

/** What the operation met so far, read when a plan is made (other steps run meanwhile). */
export interface Progress {
  /** Whether any resource failed its checks. */
  checkFailed: boolean;
  /** Whether the step of a resource failed or was skipped. */
  failed: (urn: string) => boolean;
  /** Without `continueOnError`: the first resource whose step failed, after which no step starts. */
  stoppedBy: string | undefined;
  preview: boolean;
}

export interface RegistrationFacts {
  goal: Goal;
  /** The resource's old state: the previous state's object of its URN that is not a replaced one awaiting deletion. */
  old: ResourceState | undefined;
  /** The provider's check of the goal's inputs, once asked. */
  check?: CheckResult;
  /** The provider's diff of the old outputs against the checked inputs, once asked. */
  diff?: DiffResult;
  progress: Progress;
}

/** What to do with a registration: ask the provider (`check`, `diff`) and plan again, or the step. */
export type RegistrationPlan =
  | { step: "component" }
  | { step: "refuse"; reason: string }
  | { step: "check" }
  | { step: "check-failed"; failures: CheckFailure[]; reason: string }
  | { step: "skip"; reason: string }
  | { step: "diff"; inputs: Props }
  | { step: "create"; inputs: Props }
  | { step: "same"; inputs: Props }
  | { step: "update"; inputs: Props; changes: string[] }
  | { step: "replace" | "delete-before-replace"; inputs: Props; changes: string[]; replaces: string[] };

/** The next thing to do with a registration, given what is known of it so far. */
export function planRegistration({ goal, old, check, diff, progress }: RegistrationFacts): RegistrationPlan {
  const { urn } = goal;
  if (!goal.custom) return { step: "component" };
  if (goal.unsupported.length > 0)
    return {
      step: "refuse",
      reason: `${urn}: the offline engine does not implement the resource option(s) ${goal.unsupported.join(", ")}`,
    };
  if (!check) return { step: "check" };
  if (check.failures.length > 0) {
    const reason = `${urn} failed its checks: ${check.failures.map((f) => `${f.property}: ${f.reason}`).join("; ")}`;
    return { step: "check-failed", failures: check.failures.map((failure) => ({ urn, ...failure })), reason };
  }
  if (progress.checkFailed) return { step: "skip", reason: `${urn} was skipped: a resource failed its checks` };
  const failedDependency = [...goal.dependencies, goal.parent].find((dependency) => dependency && progress.failed(dependency));
  if (failedDependency) return { step: "skip", reason: `${urn} was skipped: ${failedDependency} failed` };
  if (progress.stoppedBy && !progress.preview)
    return { step: "skip", reason: `${urn} was not started: ${stoppedReason(progress.stoppedBy)}` };

  const inputs = annotateSecrets(check.inputs, goal.inputs);
  if (!old) return { step: "create", inputs };
  if (!diff) return { step: "diff", inputs };
  const changes = changedKeys(old.inputs, inputs);
  if (!diffChanged(diff, old.inputs, inputs) && !old.initErrors) return { step: "same", inputs };
  if (diff.replaces.length === 0) return { step: "update", inputs, changes };
  const deleteFirst = goal.deleteBeforeReplace ?? diff.deleteBeforeReplace;
  return { step: deleteFirst ? "delete-before-replace" : "replace", inputs, changes, replaces: diff.replaces };
}

/** Whether a diff finds a change: DIFF_SOME, or a DIFF_UNKNOWN whose inputs differ (the engine's fallback). */
export function diffChanged(diff: DiffResult, oldInputs: Props, newInputs: Props): boolean {
  return diff.changes === "some" || (diff.changes === "unknown" && changedKeys(oldInputs, newInputs).length > 0);
}

/** Why a step is not started once the operation stopped. */
export const stoppedReason = (stoppedBy: string): string =>
  `${stoppedBy} failed, and no step starts after a failed one (as \`pulumi up\` without --continue-on-error; continueOnError runs the others)`;

/** Whether a failure stops the operation: a failed step without `continueOnError` (a skip, a check failure or a refusal does not). */
export const stopsOperation = (code: EngineErrorCode, continueOnError: boolean): boolean => code === "STEP_FAILED" && !continueOnError;

/** How a resource of the previous state fared in this operation. */
export type Fate = "kept" | "replaced" | "deleted";

/**
 * What the end of `up` (and preview) deletes: replaced objects (this run's, and those an earlier, failed run
 * left pending) and what the program no longer declares, in the previous state's order.
 */
export function leftOver(previous: ResourceState[], fate: (resource: ResourceState) => Fate | undefined, registered: ReadonlySet<string>) {
  return previous.filter((old) => {
    const fared = fate(old);
    return fared === "replaced" || (fared === undefined && (old.pendingReplacement || !registered.has(old.urn)));
  });
}

/** What happens to the left-over deletes once the program is done: made, or all held back and why. */
export type LeftOverPlan = { step: "delete" } | { step: "hold-back"; reason: string };

export function planLeftOver(facts: { checkFailed: boolean; programFailed: boolean; firstFailed: string | undefined }): LeftOverPlan {
  if (facts.checkFailed) return { step: "hold-back", reason: "resources failed their checks, so no step ran" };
  // A program that failed declared only part of what it wants: deleting the rest would destroy what it still needs.
  if (facts.programFailed) {
    const why = facts.firstFailed ? `a step failed (${facts.firstFailed}), so the program did not finish` : "the program failed";
    return { step: "hold-back", reason: `${why}; what it no longer declares is deleted by the next \`up\` that runs it to its end` };
  }
  return { step: "delete" };
}

/** What to do with one delete (of `up`'s left-overs or of destroy), once every resource depending on it is gone. */
export type DeletePlan = { step: "hold-back"; reason: string } | { step: "delete"; shown: boolean };

export function planDelete(facts: {
  fate: Fate | undefined;
  protected: boolean;
  stoppedBy: string | undefined;
  preview: boolean;
}): DeletePlan {
  if (facts.protected) return { step: "hold-back", reason: "a resource whose step failed depends on it" };
  if (facts.stoppedBy && !facts.preview) return { step: "hold-back", reason: stoppedReason(facts.stoppedBy) };
  // A replaced resource's delete is part of its replace step, not a step of its own.
  return { step: "delete", shown: facts.fate === undefined };
}

/** What a refresh makes of a resource: keep it unread, ask the provider, drop it, or the step its read and diff show. */
export type RefreshPlan =
  | { step: "keep" }
  | { step: "read" }
  | { step: "drop" }
  | { step: "diff"; inputs: Props }
  | { step: "same" | "refresh"; inputs: Props; changes: string[] };

export interface RefreshFacts {
  old: ResourceState;
  /** The provider's read, once asked; `failed` when it failed (the resource is kept as it was). */
  read?: { id: string; inputs?: Props } | "failed";
  /** The refreshed outputs (secrets marked as recorded). */
  outputs?: Props;
  /** The provider's diff of the refreshed outputs against the recorded inputs, once asked; `failed` when it failed. */
  diff?: DiffResult | "failed";
}

export function planRefresh({ old, read, outputs, diff }: RefreshFacts): RefreshPlan {
  // A replaced object awaiting deletion is not read: the next `up` or `destroy` deletes it.
  if (old.pendingReplacement) return { step: "keep" };
  if (!read) return { step: "read" };
  if (read === "failed") return { step: "keep" };
  if (read.id === "") return { step: "drop" };
  const inputs = read.inputs ? annotateSecrets(read.inputs, old.inputs) : old.inputs;
  if (!diff || !outputs) return { step: "diff", inputs };
  // As the engine decides it: the diff an `up` of the unchanged program would see right after this refresh (the
  // provider's diff of the refreshed outputs against the recorded inputs; an unknown diff compares the inputs), so
  // drift of outputs the program does not set alone (a computed timestamp) is no change. Without a diff, any drift.
  const drifted = diff === "failed" ? changedKeys(old.outputs, outputs).length > 0 : diffChanged(diff, inputs, old.inputs);
  return drifted ? { step: "refresh", inputs, changes: changedKeys(old.outputs, outputs) } : { step: "same", inputs, changes: [] };
}

/** A read (`.get`): refused, asked of the provider, failed (no such object) or done. */
export type ReadPlan = { step: "refuse"; reason: string } | { step: "read" } | { step: "missing"; reason: string } | { step: "done" };

export function planRead(facts: { urn: string; id: string; unsupported: string[]; read?: { id: string } }): ReadPlan {
  const { urn, unsupported, read } = facts;
  if (unsupported.length > 0) return { step: "refuse", reason: `${urn}: the offline engine does not implement ${unsupported.join(", ")}` };
  if (!read) return { step: "read" };
  if (read.id === "") return { step: "missing", reason: `${urn}: no object with id ${facts.id} exists` };
  return { step: "done" };
}
