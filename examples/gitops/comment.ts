/**
 * The pull request's one comment: a section per stack the change plans, from each stack's plan.json. GitHub refuses a
 * comment over 65,536 characters, so the whole comment never exceeds 60,000 (`COMMENT_LIMIT`). When every plan in full
 * would, the comment keeps, in this order: every stack's counts; its replacements and deletions, as many as fit, taken
 * in turn from each stack so that none is left without; the other steps counted per kind; how many steps it left out;
 * and the link to the run's artifacts, where each stack's plan.md holds its plan in full. A small stack (a section of at
 * most a twentieth of the limit) keeps its full section first, while there is room; with every replacement and deletion
 * listed, the others get theirs back too, the smallest first. A pure function, like plan.ts.
 */
import { plural } from "./drift.ts";
import { countsLine, madeFrom, type PlanStep, planTitle, type ReviewedPlan, renderPlanMarkdown, warning, warningsOf } from "./plan.ts";

/** The comment's first line, by which the workflow finds it to update it in place. */
export const COMMENT_MARKER = "<!-- gms-plan -->";
/** GitHub's limit is 65,536 characters: the margin leaves room for what GitHub adds around a comment. */
export const COMMENT_LIMIT = 60_000;

export interface CommentOptions {
  /** Default COMMENT_LIMIT. */
  limit?: number;
  /** Where the full plans are: the run's page, whose artifacts hold each stack's plan.md and plan.json. */
  artifactUrl?: string;
  /** What the comment says when there is no plan (no stack touched). */
  empty?: string;
}

/** How a stack's section is written: in full, or briefly with its first `warnings` replacements and deletions. */
interface Mode {
  full: boolean;
  warnings: number;
}

const OPS = ["create", "update", "replace", "delete"] as const;

/** The steps a brief section does not list, counted per kind and operation, as a table. */
function perKind(steps: readonly PlanStep[]): string[] {
  const counts = new Map<string, Record<string, number>>();
  for (const step of steps) {
    const row = counts.get(step.kind) ?? {};
    row[step.op] = (row[step.op] ?? 0) + 1;
    counts.set(step.kind, row);
  }
  const kinds = [...counts.keys()].sort();
  return [
    `| Kind | ${OPS.join(" | ")} |`,
    `|---|${OPS.map(() => "---:").join("|")}|`,
    ...kinds.map((kind) => `| ${kind} | ${OPS.map((op) => counts.get(kind)![op] ?? "").join(" | ")} |`),
  ];
}

/** A stack's section, brief: its counts, its first `shown` warnings, the rest counted per kind, and what it left out. */
function briefSection(plan: ReviewedPlan, shown: number): string {
  const warnings = warningsOf(plan);
  const listed = new Set(warnings.slice(0, shown));
  const rest = plan.steps.filter((step) => !listed.has(step));
  const lines = [`## Plan: ${planTitle(plan.provenance)}`, "", countsLine(plan), ""];
  if (warnings.length > 0) {
    const which = listed.size === warnings.length ? "" : ` (${listed.size} of ${warnings.length} listed)`;
    lines.push(`### Replacements and deletions${which}`, "", ...[...listed].map((step) => warning(step, plan)), "");
  }
  if (rest.length > 0)
    lines.push(
      listed.size > 0 ? "### The other steps, by kind" : "### Steps, by kind",
      "",
      ...perKind(rest),
      "",
      `_${plural(rest.length, "step", "steps")} of this stack not listed here: its plan.md holds every step and field._`,
      "",
    );
  lines.push(madeFrom(plan), "");
  return lines.join("\n");
}

/**
 * The comment for each way of writing its sections (`modes`): its text, and whether it fits. Each section is rendered
 * once per way it is written, since the search below tries many combinations.
 */
function composer(plans: readonly ReviewedPlan[], options: CommentOptions, limit: number) {
  const total = plans.reduce((sum, plan) => sum + plan.steps.length, 0);
  const where = options.artifactUrl ? `the run's artifacts (${options.artifactUrl})` : "the run's artifacts";
  const head = `# gms plan: ${plural(plans.length, "stack", "stacks")}, ${plural(total, "step", "steps")}`;
  const sections = new Map<string, string>();
  const section = (index: number, mode: Mode) => {
    const key = mode.full ? `${index}:full` : `${index}:${mode.warnings}`;
    let text = sections.get(key);
    if (text === undefined) {
      text = mode.full ? renderPlanMarkdown(plans[index]!, 2) : briefSection(plans[index]!, mode.warnings);
      sections.set(key, text);
    }
    return text;
  };
  const parts = (modes: readonly Mode[]) => {
    const left = plans.reduce((sum, plan, index) => sum + (modes[index]!.full ? 0 : plan.steps.length - modes[index]!.warnings), 0);
    const foot =
      left > 0
        ? `**This comment leaves out ${plural(left, "step", "steps")} of ${total}** (a comment must stay under ` +
          `${limit.toLocaleString("en-US")} characters). Each stack's plan.md, in ${where}, holds its plan in full.`
        : `Each stack's plan.md and plan.json are in ${where}.`;
    return [COMMENT_MARKER, head, "", ...modes.map((mode, index) => section(index, mode)), foot, ""];
  };
  return {
    text: (modes: readonly Mode[]) => parts(modes).join("\n"),
    fits: (modes: readonly Mode[]) => {
      const all = parts(modes);
      return all.reduce((sum, part) => sum + part.length, all.length - 1) <= limit;
    },
    fullSize: (index: number) => section(index, { full: true, warnings: 0 }).length,
  };
}

/** Stacks so many that even their brief sections overflow: the counts of as many as fit, and how many more there are. */
function countsOnly(plans: readonly ReviewedPlan[], limit: number): string {
  const tail = (rest: number) => `\n**${plural(rest, "stack", "stacks")} more**: each stack's plan.md is in the run's artifacts.\n`;
  const lines = [COMMENT_MARKER, `# gms plan: ${plural(plans.length, "stack", "stacks")}`, ""];
  let size = lines.join("\n").length;
  for (const plan of plans) {
    const line = `- ${planTitle(plan.provenance)}: ${countsLine(plan)}`;
    if (size + 1 + line.length + tail(plans.length).length > limit) break;
    lines.push(line);
    size += 1 + line.length;
  }
  const kept = lines.length - 3;
  return `${lines.join("\n")}${kept < plans.length ? tail(plans.length - kept) : "\n"}`;
}

/**
 * The comment for `plans` (each stack's plan, in the order of the stack list): in full when it fits within the limit,
 * else as the top of this file says.
 */
export function renderComment(plans: readonly ReviewedPlan[], options: CommentOptions = {}): string {
  const limit = options.limit ?? COMMENT_LIMIT;
  if (plans.length === 0) return [COMMENT_MARKER, "# gms plan", "", options.empty ?? "No stack to plan.", ""].join("\n");
  const { text, fits, fullSize } = composer(plans, options, limit);
  const full = plans.map(() => ({ full: true, warnings: 0 }));
  if (fits(full)) return text(full);

  // Every stack brief; a small one (a section of at most a twentieth of the limit) in full while there is room; then the
  // others' replacements and deletions, taken in turn from each, as many as fit.
  const brief = (small: ReadonlySet<number>): Mode[] => plans.map((_, index) => ({ full: small.has(index), warnings: 0 }));
  if (!fits(brief(new Set()))) return countsOnly(plans, limit);
  const sizes = plans.map((_, index) => fullSize(index));
  const bySize = plans.map((_, at) => at).sort((a, b) => sizes[a]! - sizes[b]!);
  const small = new Set<number>();
  for (const index of bySize.filter((at) => sizes[at]! <= limit / 20)) {
    small.add(index);
    if (!fits(brief(small))) small.delete(index);
  }
  const warnings = plans.map((plan, index) => (small.has(index) ? 0 : warningsOf(plan).length));
  const dealt = (count: number): Mode[] => {
    const modes = brief(small);
    for (let round = 0, given = 0; given < count; round++)
      for (const [index, mode] of modes.entries())
        if (given < count && round < warnings[index]!) {
          mode.warnings++;
          given++;
        }
    return modes;
  };
  const all = warnings.reduce((sum, count) => sum + count, 0);
  let low = 0;
  let high = all;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(dealt(middle))) low = middle;
    else high = middle - 1;
  }
  const modes = dealt(low);
  // With every warning listed, the other stacks get their full section back while there is room, the smallest first.
  if (low === all)
    for (const index of bySize.filter((at) => !small.has(at))) {
      modes[index] = { full: true, warnings: 0 };
      if (!fits(modes)) modes[index] = { full: false, warnings: warnings[index]! };
    }
  return text(modes);
}
