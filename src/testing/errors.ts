/** The one error class of the offline engine: a stable `name`, a string `code`, and the step results so far. */
import type { CliResult, EngineResult } from "./results";

export type EngineErrorCode =
  /** `check` reported failures; `failures` lists them. */
  | "CHECK_FAILED"
  /** A provider call (create, update, delete, read, diff) threw. */
  | "STEP_FAILED"
  /** A step was not run because a step it depends on failed. */
  | "SKIPPED"
  /** The program threw, exited early or logged errors. */
  | "PROGRAM_FAILED"
  /** The program used something this engine does not implement (a resource option, an invoke, ...). */
  | "UNSUPPORTED"
  /** Secrets must be stored or read and there is no passphrase. */
  | "PASSPHRASE_REQUIRED"
  /** The passphrase does not open the state file's secrets. */
  | "BAD_PASSPHRASE"
  /** The state file is not one this engine wrote. */
  | "BAD_STATE"
  /** Another operation holds the state file's lock (`up`, `refresh` and `destroy` take it). */
  | "LOCKED";

export interface CheckFailure {
  urn: string;
  property: string;
  reason: string;
}

export class EngineError extends Error {
  override readonly name = "EngineError";
  /** Every check failure of the operation, when `code` is CHECK_FAILED. */
  failures: CheckFailure[] = [];
  /** What the operation did before it failed (state is saved up to there); the real CLI's has no `stateBytesWritten`. */
  result?: EngineResult | CliResult;
  /** Every failure when several steps failed (this error then sums them up); empty otherwise. */
  errors: EngineError[] = [];

  constructor(
    readonly code: EngineErrorCode,
    message: string,
    options?: { cause?: unknown; failures?: CheckFailure[] },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    if (options?.failures) this.failures = options.failures;
  }
}

/** Runs `call` with no stack captured for the errors it creates (for libraries that capture one nobody reads). */
export function withoutStackTraces<T>(call: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return call();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
