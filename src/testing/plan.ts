/** Printing in the familiar `pulumi` form; secret values are never printed, unknown ones read `[unknown]`. */
import type { CliResult, EngineResult, HeldBack, Operation, PlanStep, StackOutput, StepOp } from "./results";
import { UNKNOWN, isSecret } from "./properties";

const SYMBOL: Record<StepOp, string> = {
  create: "  + ",
  update: "  ~ ",
  replace: " +- ",
  delete: "  - ",
  same: "    ",
  refresh: "  ~ ",
  read: "  > ",
};
const PAST: Record<StepOp, string> = {
  create: "created",
  update: "updated",
  replace: "replaced",
  delete: "deleted",
  same: "unchanged",
  refresh: "refreshed",
  read: "read",
};
const FUTURE: Record<StepOp, string> = {
  create: "to create",
  update: "to update",
  replace: "to replace",
  delete: "to delete",
  same: "unchanged",
  refresh: "to refresh",
  read: "to read",
};

const HEADER: Record<Operation, string> = { preview: "Previewing update", up: "Updating", refresh: "Refreshing", destroy: "Destroying" };

export const formatHeader = (operation: Operation, project: string, stack: string): string => `${HEADER[operation]} (${project}/${stack}):`;

/** One line per step: `  ~ pulumi-nodejs:dynamic/gms:App support update [name, description]`. */
export function formatStep(step: PlanStep, preview = false): string {
  const keys = step.op === "replace" ? step.replaces : step.changes;
  const detail = keys.length > 0 ? ` [${keys.join(", ")}]` : "";
  const verb = preview ? step.op : PAST[step.op];
  const time = step.durationMs === undefined || preview ? "" : ` (${(step.durationMs / 1000).toFixed(2)}s)`;
  return `${SYMBOL[step.op]}${step.type} ${step.name} ${verb}${detail}${time}`;
}

/** `  - pulumi-nodejs:dynamic/gms:App old not deleted: <why>`: a delete the operation held back. */
export const formatHeldBack = (held: HeldBack): string => `  - ${held.type} ${held.name} not deleted: ${held.reason}`;

/**
 * `Resources: 1 to create, 2 to update, 3 unchanged` (past tense after the operation ran). A preview that failed
 * planned nothing a user can rely on: it says so rather than count what it registered before the failure.
 */
export function formatSummary(result: CliResult, failed = false): string {
  if (failed && result.operation === "preview") return "Resources: none planned (the preview failed)";
  const order: StepOp[] = ["create", "update", "replace", "delete", "refresh", "read", "same"];
  const tense = result.operation === "preview" ? FUTURE : PAST;
  const parts = order.filter((op) => result.counts[op] > 0).map((op) => `${result.counts[op]} ${tense[op]}`);
  return `Resources: ${parts.length > 0 ? parts.join(", ") : "none"}`;
}

export function formatOutputs(outputs: Record<string, StackOutput>): string[] {
  const names = Object.keys(outputs);
  if (names.length === 0) return [];
  const width = Math.max(...names.map((name) => name.length));
  return [
    "Outputs:",
    ...names.map((name) => `    ${name.padEnd(width)}: ${outputs[name]!.secret ? "[secret]" : display(outputs[name]!.value)}`),
  ];
}

const SECRET_TEXT = "@@pulumi-gms:secret@@";
const UNKNOWN_TEXT = "@@pulumi-gms:unknown@@";

/** JSON with secrets masked and unknowns named. */
export function display(value: unknown): string {
  const masked = (_key: string, item: unknown) => (isSecret(item) ? SECRET_TEXT : item === UNKNOWN ? UNKNOWN_TEXT : item);
  return (JSON.stringify(value, masked) ?? "undefined")
    .replaceAll(`"${SECRET_TEXT}"`, "[secret]")
    .replaceAll(`"${UNKNOWN_TEXT}"`, "[unknown]");
}

export function formatPlan(result: EngineResult, project: string, stack: string): string[] {
  return [
    formatHeader(result.operation, project, stack),
    ...result.steps.filter((step) => step.op !== "same").map((step) => formatStep(step, result.operation === "preview")),
    ...formatOutputs(result.outputs),
    formatSummary(result),
  ];
}
