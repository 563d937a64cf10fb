/**
 * How failure propagates through one operation of LocalEngine, and how it is reported: which resources failed
 * or were skipped (their dependents are skipped), which a failed step or a held-back delete still depends on
 * (never deleted in this operation), the first failed step that stops new steps without `continueOnError`, the
 * deletes held back and why, and every check failure and step error, reported together at the end in a fixed
 * order. No I/O: `Deployment` (engine.ts) tells it what happened and the planner reads it (`progress`).
 */
import { type CheckFailure, EngineError } from "./errors";
import { type Progress, stopsOperation } from "./planner";
import type { HeldBack } from "./results";
import type { ResourceState } from "./state";

/** A provider call's failure, as the step's error: `<operation> of <urn> failed: <why>`. */
export function stepError(operation: string, urn: string, error: unknown): EngineError {
  const message = error instanceof Error ? error.message : String(error);
  return new EngineError("STEP_FAILED", `${operation} of ${urn} failed: ${message}`, { cause: error });
}

/** The URN a step's error names (as stepError words it), or "". */
const urnInMessage = (failure: EngineError): string => /^\w+ of (urn:\S+) failed/.exec(failure.message)?.[1] ?? "";

export class OperationFailures {
  private readonly checkFailures: CheckFailure[] = [];
  /** Every failure reported at the end but the check failures (reported on their own) and skips (the failure's echo). */
  private readonly errors: EngineError[] = [];
  /** Resources whose step failed or was skipped: their dependents are skipped too. */
  private readonly failedUrns = new Set<string>();
  /** Resources a failed step or a resource left in place still depends on: never deleted in this operation. */
  private readonly protectedUrns = new Set<string>();
  /** Without `continueOnError`: the first resource whose step failed, after which no step starts. */
  private stoppedBy: string | undefined;
  private readonly held: HeldBack[] = [];
  /** The URN of the registration each failed step's error belongs to. */
  private readonly stepUrns = new WeakMap<EngineError, string>();

  constructor(private readonly continueOnError: boolean) {}

  /** What the operation met so far, as the planner reads it. */
  progress(preview: boolean): Progress {
    return { checkFailed: this.checkFailures.length > 0, failed: (urn) => this.failedUrns.has(urn), stoppedBy: this.stoppedBy, preview };
  }

  /** What the planner needs to decide a delete of `urn` (planDelete). */
  deleteFacts(urn: string): { protected: boolean; stoppedBy: string | undefined } {
    return { protected: this.protectedUrns.has(urn), stoppedBy: this.stoppedBy };
  }

  /** What the planner needs to decide the left-over deletes once the program is done (planLeftOver). */
  leftOverFacts(programFailed: boolean): { checkFailed: boolean; programFailed: boolean; firstFailed: string | undefined } {
    return { checkFailed: this.checkFailures.length > 0, programFailed, firstFailed: [...this.failedUrns][0] };
  }

  /** A resource failed its checks: reported with every other's at the end. */
  checkFailed(failures: CheckFailure[]): void {
    this.checkFailures.push(...failures);
  }

  /**
   * A registration's step failed, or it was skipped or refused: its dependents are skipped, and what it depends on
   * is not deleted in this operation. A failed step without `continueOnError` stops the operation.
   */
  registrationFailed(resource: { urn: string; dependencies: string[]; parent?: string }, error: unknown): void {
    this.failedUrns.add(resource.urn);
    this.protect(resource);
    if (error instanceof EngineError && stopsOperation(error.code, this.continueOnError)) this.stoppedBy ??= resource.urn;
    if (error instanceof EngineError) this.stepUrns.set(error, resource.urn);
  }

  /** A delete failed: reported at the end; what the resource depends on stays, and without `continueOnError` no step starts. */
  deleteFailed(old: ResourceState, error: unknown): void {
    this.errors.push(stepError("delete", old.urn, error));
    this.protect(old);
    if (stopsOperation("STEP_FAILED", this.continueOnError)) this.stoppedBy ??= old.urn;
  }

  /** A failure that fails nothing else (a refresh's read or diff): reported at the end. */
  failed(error: EngineError): void {
    this.errors.push(error);
  }

  /**
   * The error a registration or read was answered with, as an EngineError, kept for the report unless it is a
   * check failure or a skip (each reported otherwise).
   */
  answered(error: unknown): EngineError {
    const failure = error instanceof EngineError ? error : new EngineError("STEP_FAILED", String(error), { cause: error });
    if (failure.code !== "CHECK_FAILED" && failure.code !== "SKIPPED") this.errors.push(failure);
    return failure;
  }

  /** The registration whose step `failure` failed (the program is answered with a failed registration), if it is one. */
  failedStep(failure: EngineError): string | undefined {
    return failure.code === "STEP_FAILED" ? this.stepUrns.get(failure) : undefined;
  }

  /** Deletes not made, each with why; what they depend on stays too. Answers the new ones, to be printed. */
  holdBack(resources: ResourceState[], reason: string): HeldBack[] {
    const held = resources.map((resource) => ({ urn: resource.urn, type: resource.type, name: resource.name, id: resource.id, reason }));
    for (const resource of resources) this.protect(resource);
    this.held.push(...held);
    return held;
  }

  get heldBack(): HeldBack[] {
    return [...this.held];
  }

  private protect(resource: { dependencies: string[]; parent?: string }): void {
    for (const urn of resource.dependencies) this.protectedUrns.add(urn);
    if (resource.parent) this.protectedUrns.add(resource.parent);
  }

  /** Every check failure, reported together (no step ran after the first). */
  throwCheckFailures(): void {
    if (this.checkFailures.length === 0) return;
    const lines = this.checkFailures.map((failure) => `  ${failure.urn}\n    ${failure.property}: ${failure.reason}`);
    throw new EngineError("CHECK_FAILED", `Resources failed their checks:\n${lines.join("\n")}`, { failures: this.checkFailures });
  }

  /**
   * Every failure of the operation, reported together once everything that could run has run, in a fixed order
   * whatever order the steps finished in: the program's own failure first (as the program's, never counted as a
   * step), then each failed step once, in `order` (the URNs as the program registered them, then the old state's).
   * A program failure that only repeats a failed step (a dependent awaited its output) is not reported twice.
   */
  throwReport(order: string[], programFailure?: EngineError): void {
    const index = new Map(order.map((urn, position) => [urn, position] as const));
    const position = (failure: EngineError) => index.get(this.stepUrns.get(failure) ?? urnInMessage(failure)) ?? index.size;
    const steps = [...this.errors].sort((a, b) => position(a) - position(b) || a.message.localeCompare(b.message));
    // The SDK's own words for a program that awaited an output of a resource whose step failed or was skipped.
    const repeatsFailedStep = (failure: EngineError) =>
      steps.some((step) => failure.message.includes(step.message)) ||
      (this.failedUrns.size > 0 && /resource \S+ \[[^\]]+\] failed to register/.test(failure.message));
    const program = programFailure && !repeatsFailedStep(programFailure) ? programFailure : undefined;
    const failures = program ? [program, ...steps] : steps;
    if (failures.length === 0) return;
    if (failures.length === 1) throw failures[0]!;
    const stepCount = steps.length === 1 ? "1 step failed" : `${steps.length} steps failed`;
    const error = new EngineError(
      failures[0]!.code,
      `${program ? `The program failed, and ${stepCount}` : stepCount}:\n${failures.map((failure) => `  ${failure.message}`).join("\n")}`,
      { cause: failures[0] },
    );
    error.errors = failures;
    throw error;
  }
}
