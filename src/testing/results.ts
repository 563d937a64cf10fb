/** What an engine operation reports: its steps, their counts and the stack outputs. */
export type Operation = "preview" | "up" | "refresh" | "destroy";
export type StepOp = "create" | "update" | "replace" | "delete" | "same" | "refresh" | "read";

export interface PlanStep {
  op: StepOp;
  urn: string;
  type: string;
  name: string;
  /** The resource's ID (before the step for deletes and replacements; absent for a create in preview). */
  id?: string;
  /** Changed input properties (update, replace) or drifted output properties (refresh). */
  changes: string[];
  /** The properties that force a replacement. */
  replaces: string[];
  durationMs?: number;
}

/** A stack output: `value` is plain (the secret revealed); in preview it may be or hold `UNKNOWN`. */
export interface StackOutput {
  value: unknown;
  secret: boolean;
}

/** A delete the operation would have made but did not (the program failed, or a step failed first), and why. */
export interface HeldBack {
  urn: string;
  type: string;
  name: string;
  id: string;
  reason: string;
}

export interface EngineResult {
  operation: Operation;
  steps: PlanStep[];
  counts: Record<StepOp, number>;
  /** Stack outputs (preview and up). */
  outputs: Record<string, StackOutput>;
  /** Deletes held back (LocalEngine reports them; the CLI prints nothing of them, and PulumiCliEngine reports none). */
  heldBack?: HeldBack[];
  /** Bytes of state the operation wrote (checkpoint journal and state file); 0 when nothing changed. */
  stateBytesWritten: number;
}

/** What the real Pulumi CLI's operation reports (`PulumiCliEngine`): the same, less `stateBytesWritten` (the CLI writes its own checkpoints). */
export type CliResult = Omit<EngineResult, "stateBytesWritten">;
