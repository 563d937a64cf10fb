/**
 * The reviewed plan: what the `preview` job of a pull request writes (`plan.json` for the merge job, `plan.md` for the
 * people who review it, as the pull request's comment), and what the merge's `up --plan-file plan.json` checks a fresh
 * preview against before it applies anything (`plan-diff.md`, when they differ).
 *
 * Pure functions, like drift.ts. `planFacts` reads the steps from the engine events of a preview (`onEvent`): each
 * resource the preview would create, update, replace or delete, the fields it changes with their old and new values
 * (secrets as "[secret]", values computed during `up` as "[known after up]"), and for a replacement the fields that
 * only a replacement can change. `planDifferences` compares two plans step by step and field by field, and the
 * digests of the secret config each was made with: a secret shows as "[secret]" in both, so a merge run with another
 * key than the review saw would otherwise look the same. A digest is an HMAC-SHA256 of the value, keyed by a key the
 * pipeline has and the plan does not hold (GMS_PLAN_DIGEST_KEY, else the state's passphrase, else the API key): it
 * tells values apart without giving one away.
 */
import { createHmac } from "node:crypto";
import {
  cell,
  changedKeys,
  isProgramResource,
  kindOf,
  masked,
  plural,
  resourceName,
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
  fields: PlanField[];
  /** replace: the fields that only a replacement changes. */
  replaceBecause?: string[];
}

export interface PlanProvenance {
  stack: string;
  /** The program's commit (GMS_COMMIT, else GITHUB_SHA, else the program folder's git HEAD), or null. */
  commit: string | null;
  /** The state the plan was made from: its last update's version and time, and a digest of the whole deployment. */
  state: { version: number | null; updatedAt: string | null; digest: string };
  madeAt: string;
}

export interface ReviewedPlan {
  format: 1;
  provenance: PlanProvenance;
  /** Steps by operation; resources that stay the same are counted, not listed. */
  counts: Record<string, number>;
  steps: PlanStep[];
  /** A keyed digest of each secret config value the plan was made with, by config key. */
  secretDigests: Record<string, string>;
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
  if (op === "delete") return { ...base, fields: [] };
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

/** The keyed digest of a secret value (see the top of this file). */
export const secretDigest = (value: string, key: string) => `hmac-sha256:${createHmac("sha256", key).update(value).digest("hex")}`;

export function secretDigests(values: Record<string, string | undefined>, key: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values)
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([name, value]) => [name, secretDigest(value, key)]),
  );
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const shown = (value: unknown) => (value === "[secret]" || value === "[known after up]" ? String(value) : JSON.stringify(value));
const described = (step: PlanStep) => `\`${step.resource}\` (${step.kind})`;

/**
 * How a fresh plan differs from the reviewed one, one sentence each: a step it adds or drops, another operation, a
 * field changed otherwise, another replacement's reason, a secret that is not the one the review saw. None: the same.
 */
export function planDifferences(reviewed: ReviewedPlan, fresh: ReviewedPlan): string[] {
  const differences: string[] = [];
  const before = new Map(reviewed.steps.map((step) => [step.urn, step]));
  const now = new Map(fresh.steps.map((step) => [step.urn, step]));
  for (const [urn, step] of before)
    if (!now.has(urn)) differences.push(`${described(step)}: the reviewed plan would ${step.op} it; now nothing is planned for it`);
  for (const [urn, step] of now) {
    const was = before.get(urn);
    if (!was) {
      differences.push(`${described(step)}: now it would ${step.op} it, a step the reviewed plan does not have`);
      continue;
    }
    if (was.op !== step.op) {
      differences.push(`${described(step)}: the reviewed plan would ${was.op} it; now it would ${step.op} it`);
      continue;
    }
    const fields = new Map(was.fields.map((field) => [field.field, field]));
    const fresher = new Map(step.fields.map((field) => [field.field, field]));
    for (const name of [...new Set([...fields.keys(), ...fresher.keys()])].sort()) {
      const a = fields.get(name);
      const b = fresher.get(name);
      if (a && b && same(a.old, b.old) && same(a.new, b.new)) continue;
      const what = (field: PlanField | undefined) => (field ? `${shown(field.old)} → ${shown(field.new)}` : "no change");
      differences.push(`${described(step)}: field \`${name}\`: reviewed ${what(a)}; now ${what(b)}`);
    }
    if (!same(was.replaceBecause ?? [], step.replaceBecause ?? []))
      differences.push(
        `${described(step)}: the reviewed plan replaces it for ${(was.replaceBecause ?? []).join(", ") || "no field"}; now for ${(step.replaceBecause ?? []).join(", ") || "no field"}`,
      );
  }
  for (const name of [...new Set([...Object.keys(reviewed.secretDigests), ...Object.keys(fresh.secretDigests)])].sort())
    if (reviewed.secretDigests[name] !== fresh.secretDigests[name])
      differences.push(`the secret \`${name}\` is not the value the review was made with`);
  return differences;
}

/** The line that says what a replacement or a deletion does, in words a reviewer cannot miss. */
function warning(step: PlanStep): string {
  if (step.op === "delete")
    return `- **Deletes** ${described(step)}${step.id ? ` \`${step.id}\`` : ""}: the object is gone from the workspace.`;
  const because = (step.replaceBecause ?? []).map((field) => `\`${field}\``).join(", ");
  return (
    `- **Replaces** ${described(step)}${step.id ? ` \`${step.id}\`` : ""}${because ? `: changing ${because}, which only a replacement can change` : ""}. ` +
    "A new object is made (a new GUID) and the old one deleted."
  );
}

const opWords: Record<PlanOp, string> = { create: "create", update: "update", replace: "replace", delete: "delete" };

/** The state a plan was made from, in words: its version where the backend numbers them, its last update, its digest. */
function stateOf(provenance: PlanProvenance): string {
  const { version, updatedAt, digest } = provenance.state;
  const which = version ? `state version ${version}` : updatedAt ? `the state as of its update at ${updatedAt}` : "a new stack";
  return `${which} (\`${digest}\`)`;
}

/** `plan.md`: what merging would do, for the pull request's comment. */
export function renderPlanMarkdown(plan: ReviewedPlan): string {
  const { provenance } = plan;
  const changes = ORDER.filter((op) => (plan.counts[op] ?? 0) > 0).map((op) => `${plural(plan.counts[op]!, opWords[op], opWords[op])}`);
  const lines = [
    `## Plan: stack \`${provenance.stack}\``,
    "",
    `**${changes.length > 0 ? changes.join(" · ") : "No change"}** · ${plural(plan.counts.same ?? 0, "resource", "resources")} unchanged.`,
    "",
  ];
  const warnings = plan.steps.filter((step) => step.op === "replace" || step.op === "delete");
  if (warnings.length > 0) lines.push("### Replacements and deletions", "", ...warnings.map(warning), "");
  if (plan.steps.length > 0) {
    lines.push("### Steps", "");
    lines.push("| Resource | Kind | Operation | Field | Now | After |", "|---|---|---|---|---|---|");
    for (const step of plan.steps) {
      const rows = step.fields.length > 0 ? step.fields : [undefined];
      for (const [index, field] of rows.entries())
        lines.push(
          `| ${index === 0 ? `\`${step.resource}\`` : ""} | ${index === 0 ? step.kind : ""} | ${index === 0 ? step.op : ""} | ${
            field ? `\`${field.field}\`${step.replaceBecause?.includes(field.field) ? " (replaces)" : ""}` : ""
          } | ${field && step.op !== "create" ? cell(field.old) : ""} | ${field ? cell(field.new) : ""} |`,
        );
    }
    lines.push("");
  }
  lines.push(
    `<sub>Made ${provenance.madeAt} by \`node pipeline.ts preview\` from commit \`${provenance.commit ?? "unknown"}\`, stack \`${provenance.stack}\`, ` +
      `${stateOf(provenance)}. The merge applies exactly these steps, or changes nothing.</sub>`,
    "",
  );
  return lines.join("\n");
}

/** `plan-diff.md`: why the merge applied nothing, and what to do. */
export function renderPlanDiffMarkdown(reviewed: ReviewedPlan, differences: readonly string[]): string {
  return [
    `## The merge did not apply: stack \`${reviewed.provenance.stack}\` has changed since the review`,
    "",
    `A new preview differs from the plan reviewed on commit \`${reviewed.provenance.commit ?? "unknown"}\` (made ${reviewed.provenance.madeAt}). Nothing was changed.`,
    "",
    ...differences.map((difference) => `- ${difference}`),
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
