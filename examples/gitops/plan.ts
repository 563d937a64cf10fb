/**
 * The reviewed plan: what the `preview` job of a pull request writes (`plan.json` for the merge job, `plan.md` for the
 * people who review it), and what the merge's `up --plan-file plan.json` checks a fresh preview against before it
 * applies anything (`plan-diff.md`, when they differ).
 *
 * Pure functions, like drift.ts. `planSteps` reads the steps from the engine events of a preview (`onEvent`): each
 * resource the preview would create, update, replace or delete, the fields it changes with their old and new values
 * (secrets as "[secret]", values computed during `up` as "[known after up]"), and for a replacement the fields that
 * only a replacement can change. `comparePlans` compares two plans step by step and field by field, and the digests of
 * the secret config each was made with: a secret shows as "[secret]" in both, so a merge run with another key than the
 * review saw would otherwise look the same. A digest is an HMAC-SHA256 of the value, keyed by a key the pipeline has
 * and the plan does not hold (GMS_PLAN_DIGEST_KEY, else the state's passphrase, else the API key): it tells values
 * apart without giving one away.
 *
 * A value the reviewed plan holds as "[known after up]" may take any value at the merge, as in Pulumi's own update
 * plans: a value computed during `up`, or one read from a stack that the same review changes (pipeline.ts holds such a
 * stack's outputs unknown). A step that hinges only on such values may then be gone, or a replacement may be an update.
 * Everything else must match.
 */
import { createHmac } from "node:crypto";
import {
  cell,
  changedKeys,
  isProgramResource,
  KNOWN_AFTER_UP,
  kindOf,
  masked,
  plural,
  resourceName,
  SECRET,
  type StepEvent,
  type StepMetadata,
  valueAt,
} from "./drift.ts";

export type PlanOp = "create" | "update" | "replace" | "delete";

export interface PlanField {
  /** The property path, as Pulumi names it. */
  field: string;
  old: unknown;
  new: unknown;
}

export interface PlanStep {
  urn: string;
  /** The resource's name in the program. */
  resource: string;
  kind: string;
  op: PlanOp;
  /** The object's GUID, for a step on an object the stack holds. */
  id?: string;
  /** The fields the step changes; for a delete, the fields the object holds (`new` null). */
  fields: PlanField[];
  /** replace: the fields that only a replacement changes. */
  replaceBecause?: string[];
}

export interface PlanProvenance {
  stack: string;
  /** The entry of the stack list (gms-stacks.yaml) the plan is of, when the pipeline runs one. */
  entry?: string;
  /** The program's commit (GMS_COMMIT, else GITHUB_SHA, else the program folder's git HEAD), or null. */
  commit: string | null;
  /** The state the plan was made from: its last update's version and time, and a digest of the whole deployment. */
  state: { version: number | null; updatedAt: string | null; digest: string };
  madeAt: string;
  /**
   * How the stack encrypts its secrets (`passphrase`, `awskms://...`, `service`) and a digest of its settings: the
   * engine's plan is encrypted with them, so the merge must read it with the same.
   */
  secretsProvider?: string;
  /** The stacks this plan reads by StackReference that the same review changes: what it reads of them is [known after up]. */
  heldUnknown?: string[];
}

export interface ReviewedPlan {
  format: 1;
  provenance: PlanProvenance;
  /** Steps by operation; resources that stay the same are counted, not listed. */
  counts: Record<string, number>;
  steps: PlanStep[];
  /** A keyed digest of each secret config value the plan was made with, by config key. */
  secretDigests: Record<string, string>;
  /** The stack's outputs now, and after the plan ([known after up] where `up` decides), secrets as [secret]. */
  outputs?: { now: Record<string, unknown>; planned: Record<string, unknown> };
  /** The engine's own update plan (`pulumi preview --save-plan`), which the merge's `up --plan` holds the engine to. */
  engine: unknown;
}

const OPS: Record<string, PlanOp | undefined> = {
  create: "create",
  update: "update",
  replace: "replace",
  "create-replacement": "replace",
  "delete-replaced": "replace",
  delete: "delete",
};

/** The program's own fields (not the dynamic provider's `__provider`, nor the plugin's markers). */
const isProgramField = (field: string) => !field.startsWith("__");

/** Replacements and deletions first (what a reviewer must not miss), then creations and updates; by name within each. */
const ORDER: PlanOp[] = ["replace", "delete", "create", "update"];
const byOrder = (a: PlanStep, b: PlanStep) =>
  ORDER.indexOf(a.op) - ORDER.indexOf(b.op) || (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0);

function stepOf(step: StepMetadata, op: PlanOp, clean: (value: unknown) => unknown): PlanStep {
  const base = {
    urn: step.urn,
    resource: resourceName(step.urn),
    kind: kindOf(step.type),
    op,
    ...(step.old?.id ? { id: step.old.id } : {}),
  };
  if (op === "delete") {
    const olds = step.old?.inputs ?? {};
    const fields = Object.keys(olds).filter(isProgramField).sort();
    return { ...base, fields: fields.map((field) => ({ field, old: clean(olds[field] ?? null), new: null })) };
  }
  const news = step.new?.inputs ?? {};
  // A secret field that changes shows "[secret]" before and after, so the provider's own keys name it too.
  const names = op === "create" ? Object.keys(news).sort() : [...new Set([...changedKeys(step), ...(step.keys ?? [])])].sort();
  const fields = names.filter(isProgramField).map((field) => ({
    field,
    old: op === "create" ? null : clean(valueAt(step.old?.inputs, field) ?? valueAt(step.old?.outputs, field) ?? null),
    new: clean(valueAt(news, field) ?? null),
  }));
  if (op !== "replace") return { ...base, fields };
  const because = (
    step.keys ?? Object.entries(step.detailedDiff ?? {}).flatMap(([key, diff]) => (diff.diffKind.endsWith("-replace") ? [key] : []))
  )
    .filter(isProgramField)
    .sort();
  return { ...base, fields, replaceBecause: because };
}

/** The steps of a preview, from its engine events, every secret value masked. */
export function planSteps(events: readonly StepEvent[], secrets: readonly string[]): PlanStep[] {
  const clean = (value: unknown) => masked(value, secrets);
  const steps = new Map<string, PlanStep>();
  for (const event of events) {
    const step = event.resourcePreEvent?.metadata;
    const op = step && OPS[step.op];
    if (!step || !op || !isProgramResource(step.type) || steps.has(step.urn)) continue;
    // A replacement's steps (replace, create-replacement, delete-replaced) are one step: the first carries its diff.
    steps.set(step.urn, stepOf(step, op, clean));
  }
  return [...steps.values()].sort(byOrder);
}

/**
 * The stack's outputs now and after a preview, from its engine events: the stack resource's last outputs event holds
 * both (the planned ones with the engine's unknowns where `up` decides), every secret value masked.
 */
export function planOutputs(events: readonly StepEvent[], secrets: readonly string[]): ReviewedPlan["outputs"] {
  const stack = events.findLast((event) => event.resOutputsEvent?.metadata.type === "pulumi:pulumi:Stack")?.resOutputsEvent?.metadata;
  if (!stack) return undefined;
  const clean = (value: unknown) => masked(value ?? {}, secrets) as Record<string, unknown>;
  return { now: clean(stack.old?.outputs), planned: clean(stack.new?.outputs) };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const holds = (value: unknown, mark: string): boolean =>
  value === mark ||
  (Array.isArray(value)
    ? value.some((each) => holds(each, mark))
    : value !== null && typeof value === "object" && Object.values(value).some((each) => holds(each, mark)));

/**
 * Whether the plan may change the stack's outputs, which the stacks that read them by StackReference see: outputs
 * that differ after it, or hold a value known only after `up`; a secret output (the same "[secret]" either way) counts
 * as changed whenever the plan has a step.
 */
export function changesOutputs(plan: ReviewedPlan): boolean {
  if (!plan.outputs) return plan.steps.length > 0;
  return !same(plan.outputs.now, plan.outputs.planned) || (plan.steps.length > 0 && holds(plan.outputs.planned, SECRET));
}

/** Whether a value of a plan made now fits the reviewed one: equal, where "[known after up]" in the reviewed one fits anything. */
export function fits(reviewed: unknown, fresh: unknown): boolean {
  if (reviewed === KNOWN_AFTER_UP) return true;
  if (Array.isArray(reviewed))
    return Array.isArray(fresh) && reviewed.length === fresh.length && reviewed.every((each, index) => fits(each, fresh[index]));
  if (reviewed !== null && typeof reviewed === "object") {
    if (fresh === null || typeof fresh !== "object" || Array.isArray(fresh)) return false;
    const a = reviewed as Record<string, unknown>;
    const b = fresh as Record<string, unknown>;
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].every((key) => fits(a[key] ?? null, b[key] ?? null));
  }
  return same(reviewed, fresh);
}

/** The keyed digest of a secret value (see the top of this file). */
export const secretDigest = (value: string, key: string) => `hmac-sha256:${createHmac("sha256", key).update(value).digest("hex")}`;

export function secretDigests(values: Record<string, string | undefined>, key: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values)
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([name, value]) => [name, secretDigest(value, key)]),
  );
}

/** What one plan does about a step or one of its fields: its operation and, for a field, the values. */
export type PlanSide = { op: PlanOp | "none"; old?: unknown; new?: unknown } | { text: string };

/** One difference between the reviewed plan and a plan made now: a step, one of its fields, or the whole stack's. */
export interface PlanDifference {
  /** The step's resource and kind; absent for a difference of the whole stack (a secret, the secrets provider). */
  resource?: string;
  kind?: string;
  /** What differs when it is not a step: "the secret `openaiKey`". */
  subject?: string;
  /** The field, when the difference is one field's; absent for the step as a whole. */
  field?: string;
  reviewed: PlanSide;
  now: PlanSide;
}

/** A side in words: `format` writes a value (JSON in a sentence, a code span in a table). */
function sideText(side: PlanSide, format: (value: unknown) => string, field: boolean): string {
  if ("text" in side) return side.text;
  if (!field) return side.op === "none" ? "no step" : side.op;
  if (side.op === "none") return "no change";
  if (side.op === "create") return `create with ${format(side.new)}`;
  if (side.op === "delete") return `delete (it holds ${format(side.old)})`;
  return `${side.op} ${format(side.old)} → ${format(side.new)}`;
}

const shown = (value: unknown) => (value === SECRET || value === KNOWN_AFTER_UP ? String(value) : JSON.stringify(value));
const describedStep = (resource: string, kind: string) => `\`${resource}\` (${kind})`;

/** A difference in one sentence, for the job's error and its log. */
export function differenceSentence(difference: PlanDifference): string {
  const subject = difference.subject ?? describedStep(difference.resource!, difference.kind!);
  const isField = difference.field !== undefined;
  const field = isField ? `field \`${difference.field}\`: ` : "";
  return `${subject}: ${field}reviewed ${sideText(difference.reviewed, shown, isField)}; now ${sideText(difference.now, shown, isField)}`;
}

/** What a step does about one field, or "no change" when the step (or its absence) leaves it. */
function fieldSide(step: PlanStep | undefined, name: string): PlanSide {
  const field = step?.fields.find((each) => each.field === name);
  return step && field ? { op: step.op, old: field.old, new: field.new } : { op: "none" };
}

/** Whether every change a step makes could turn out to be no change: each new value fits the value it replaces. */
const hingesOnUnknowns = (step: PlanStep, fields: readonly PlanField[] = step.fields) =>
  step.op !== "create" && step.op !== "delete" && fields.length > 0 && fields.every((field) => fits(field.new, field.old));

/**
 * How a plan made now differs from the reviewed one. `differences` refuse the merge; `allowed` are the ways a value the
 * reviewed plan held as [known after up] turned out (a value, a replacement that is now an update, a step now gone),
 * which the merge accepts. Steps in the fresh plan's order, then the reviewed plan's steps it lacks, then the stack's.
 */
export function comparePlans(reviewed: ReviewedPlan, fresh: ReviewedPlan): { differences: PlanDifference[]; allowed: PlanDifference[] } {
  const differences: PlanDifference[] = [];
  const allowed: PlanDifference[] = [];
  const before = new Map(reviewed.steps.map((step) => [step.urn, step]));
  const now = new Map(fresh.steps.map((step) => [step.urn, step]));
  const urns = [...fresh.steps.map((step) => step.urn), ...reviewed.steps.filter((step) => !now.has(step.urn)).map((step) => step.urn)];
  for (const urn of urns) {
    const was = before.get(urn);
    const is = now.get(urn);
    const { resource, kind } = (is ?? was)!;
    const step = (reviewedSide: PlanSide, nowSide: PlanSide, field?: string): PlanDifference => ({
      resource,
      kind,
      ...(field === undefined ? {} : { field }),
      reviewed: reviewedSide,
      now: nowSide,
    });
    if (!was || !is) {
      // A step one plan has and the other does not: the step, then each field it changes.
      const only = (was ?? is)!;
      const row = step({ op: was?.op ?? "none" }, { op: is?.op ?? "none" });
      const rows = only.fields.map((field) => step(fieldSide(was, field.field), fieldSide(is, field.field), field.field));
      if (was && hingesOnUnknowns(was)) allowed.push(row, ...rows);
      else differences.push(row, ...rows);
      continue;
    }
    const names = [...new Set([...was.fields.map((field) => field.field), ...is.fields.map((field) => field.field)])].sort();
    const rows: { row: PlanDifference; resolved: boolean }[] = [];
    for (const name of names) {
      const a = was.fields.find((field) => field.field === name);
      const b = is.fields.find((field) => field.field === name);
      if (a && b && same(a.old, b.old) && same(a.new, b.new)) continue;
      // An unknown that resolved: to any value (b), or to the value it had (no change now). What the field holds now
      // may differ from what the review saw when the reviewed value was unknown: it may follow from what made it unknown
      // (a replaced object that another one was linked to).
      const resolved =
        a !== undefined && (b ? (same(a.old, b.old) || holds(a.new, KNOWN_AFTER_UP)) && fits(a.new, b.new) : fits(a.new, a.old));
      rows.push({ row: step(fieldSide(was, name), fieldSide(is, name), name), resolved });
    }
    let stepRow: PlanDifference | undefined;
    let stepResolved = true;
    if (was.op !== is.op) {
      const because = was.fields.filter((field) => (was.replaceBecause ?? []).includes(field.field));
      stepRow = step({ op: was.op }, { op: is.op });
      stepResolved = was.op === "replace" && is.op === "update" && hingesOnUnknowns(was, because);
    } else if (!same(was.replaceBecause ?? [], is.replaceBecause ?? [])) {
      const a = was.replaceBecause ?? [];
      const b = is.replaceBecause ?? [];
      const extra = was.fields.filter((field) => a.includes(field.field) && !b.includes(field.field));
      const list = (fields: string[]) => ({ text: `replaces it for ${fields.map((field) => `\`${field}\``).join(", ") || "no field"}` });
      stepRow = step(list(a), list(b));
      stepResolved = b.every((field) => a.includes(field)) && hingesOnUnknowns(was, extra);
    }
    if (stepResolved && rows.every((each) => each.resolved)) allowed.push(...(stepRow ? [stepRow] : []), ...rows.map((each) => each.row));
    // Refused: the step's own difference with every field that differs, or the fields that do not fit.
    else if (!stepResolved) differences.push(stepRow!, ...rows.map((each) => each.row));
    else differences.push(...rows.filter((each) => !each.resolved).map((each) => each.row));
  }
  const other = { text: `${SECRET}, not the value the review was made with` };
  for (const name of [...new Set([...Object.keys(reviewed.secretDigests), ...Object.keys(fresh.secretDigests)])].sort())
    if (reviewed.secretDigests[name] !== fresh.secretDigests[name])
      differences.push({ subject: `the secret \`${name}\``, reviewed: { text: SECRET }, now: other });
  const { secretsProvider } = reviewed.provenance;
  if (secretsProvider !== undefined && secretsProvider !== fresh.provenance.secretsProvider)
    differences.push({
      subject: "the stack's secrets provider",
      reviewed: { text: secretsProvider },
      now: { text: fresh.provenance.secretsProvider ?? "unknown" },
    });
  return { differences, allowed };
}

/**
 * Whether a replacement hinges only on values read from a stack the review changes (the plan holds such a stack's
 * values, and every field that replaces the object is known only after `up`): it may turn out an update, or nothing.
 * Within one stack, a value known only after `up` is an object to be made, whose new GUID does replace.
 */
const mayNotReplace = (step: PlanStep, plan: ReviewedPlan) =>
  step.op === "replace" &&
  (plan.provenance.heldUnknown ?? []).length > 0 &&
  (step.replaceBecause ?? []).length > 0 &&
  step.fields.filter((field) => step.replaceBecause!.includes(field.field)).every((field) => field.new === KNOWN_AFTER_UP);

/** The line that says what a replacement or a deletion does, in words a reviewer cannot miss. */
export function warning(step: PlanStep, plan: ReviewedPlan): string {
  const id = step.id ? ` \`${step.id}\`` : "";
  if (step.op === "delete") return `- **Deletes** ${describedStep(step.resource, step.kind)}${id}: the object is gone from the workspace.`;
  const because = (step.replaceBecause ?? []).map((field) => `\`${field}\``).join(", ");
  if (mayNotReplace(step, plan))
    return (
      `- **May replace** ${describedStep(step.resource, step.kind)}${id}: ${because} will be known only after \`up\` ` +
      `(read from ${plan.provenance.heldUnknown!.join(", ")}, which this review changes). ` +
      "If it then differs, a new object is made (a new GUID) and the old one deleted; else nothing changes."
    );
  return (
    `- **Replaces** ${describedStep(step.resource, step.kind)}${id}${because ? `: changing ${because}, which only a replacement can change` : ""}. ` +
    "A new object is made (a new GUID) and the old one deleted."
  );
}

/** The state a plan was made from, in words: its version where the backend numbers them, its last update, its digest. */
function stateOf(provenance: PlanProvenance): string {
  const { version, updatedAt, digest } = provenance.state;
  const which = version ? `state version ${version}` : updatedAt ? `the state as of its update at ${updatedAt}` : "a new stack";
  return `${which} (\`${digest}\`)`;
}

/** The plan's title: the stack, and its entry of the stack list when there is one. */
export const planTitle = (provenance: PlanProvenance) =>
  provenance.entry === undefined ? `stack \`${provenance.stack}\`` : `\`${provenance.entry}\` (stack \`${provenance.stack}\`)`;

/** The counts line: every operation the plan makes, and how many resources stay. */
export function countsLine(plan: ReviewedPlan): string {
  const changes = ORDER.filter((op) => (plan.counts[op] ?? 0) > 0).map((op) => plural(plan.counts[op]!, op, op));
  return `**${changes.length > 0 ? changes.join(" · ") : "No change"}** · ${plural(plan.counts.same ?? 0, "resource", "resources")} unchanged.`;
}

/** The replacements and deletions, in the plan's order (replacements first). */
export const warningsOf = (plan: ReviewedPlan) => plan.steps.filter((step) => step.op === "replace" || step.op === "delete");

/** The table of every step and field. */
function stepsTable(plan: ReviewedPlan): string[] {
  const lines = ["| Resource | Kind | Operation | Field | Now | After |", "|---|---|---|---|---|---|"];
  for (const step of plan.steps) {
    const rows = step.fields.length > 0 ? step.fields : [undefined];
    for (const [index, field] of rows.entries())
      lines.push(
        `| ${index === 0 ? `\`${step.resource}\`` : ""} | ${index === 0 ? step.kind : ""} | ${index === 0 ? step.op : ""} | ${
          field ? `\`${field.field}\`${step.replaceBecause?.includes(field.field) ? " (replaces)" : ""}` : ""
        } | ${field && step.op !== "create" ? cell(field.old) : ""} | ${field && step.op !== "delete" ? cell(field.new) : ""} |`,
      );
  }
  return lines;
}

/** The footnote that says what the plan was made from. */
export function madeFrom(plan: ReviewedPlan): string {
  const { provenance } = plan;
  return (
    `<sub>Made ${provenance.madeAt} by \`node pipeline.ts preview\` from commit \`${provenance.commit ?? "unknown"}\`, stack \`${provenance.stack}\`, ` +
    `${stateOf(provenance)}. The merge applies exactly these steps, or changes nothing.</sub>`
  );
}

/** `plan.md`: what merging would do, in full; `heading` is the Markdown level of its title (2 by default). */
export function renderPlanMarkdown(plan: ReviewedPlan, heading = 2): string {
  const h = "#".repeat(heading);
  const lines = [`${h} Plan: ${planTitle(plan.provenance)}`, "", countsLine(plan), ""];
  if (plan.provenance.heldUnknown?.length)
    lines.push(
      `What it reads of ${plan.provenance.heldUnknown.map((name) => `\`${name}\``).join(", ")}, which this review changes, is ` +
        `${KNOWN_AFTER_UP}: the merge applies it after them, with whatever values they then hold.`,
      "",
    );
  const warnings = warningsOf(plan);
  if (warnings.length > 0) lines.push(`${h}# Replacements and deletions`, "", ...warnings.map((step) => warning(step, plan)), "");
  if (plan.steps.length > 0) lines.push(`${h}# Steps`, "", ...stepsTable(plan), "");
  lines.push(madeFrom(plan), "");
  return lines.join("\n");
}

/** `plan-diff.md`: why the merge applied nothing, each difference a row with its reviewed and present values, and what to do. */
export function renderPlanDiffMarkdown(reviewed: ReviewedPlan, differences: readonly PlanDifference[]): string {
  const text = (value: string) => value.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
  const rows = differences.map((difference) => {
    const isField = difference.field !== undefined;
    return [
      difference.subject ?? `\`${difference.resource}\``,
      difference.kind ?? "",
      isField ? `\`${difference.field}\`` : "",
      text(sideText(difference.reviewed, cell, isField)),
      text(sideText(difference.now, cell, isField)),
    ];
  });
  return [
    `## The merge did not apply: ${planTitle(reviewed.provenance)} has changed since the review`,
    "",
    `A new preview differs from the plan reviewed on commit \`${reviewed.provenance.commit ?? "unknown"}\` ` +
      `(made ${reviewed.provenance.madeAt}). Nothing was changed.`,
    "",
    "| Resource | Kind | Field | Reviewed | Now |",
    "|---|---|---|---|---|",
    ...rows.map((row) => `| ${row.join(" | ")} |`),
    "",
    "What to do: run the preview on the pull request again and review the new plan, then merge again (or re-run this job with the new plan). " +
      "If the difference is an out-of-band change you did not mean, put it back in the service first.",
    "",
  ].join("\n");
}

/** The plan's counts from its steps and the preview's own summary of unchanged resources. */
export function planCounts(steps: readonly PlanStep[], unchanged: number): Record<string, number> {
  const counts: Record<string, number> = { same: unchanged };
  for (const step of steps) counts[step.op] = (counts[step.op] ?? 0) + 1;
  return counts;
}
