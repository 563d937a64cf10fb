/**
 * examples/gitops/plan.ts as pure functions: the steps read from a preview's engine events (secrets masked by value,
 * computed values, a replacement's three events as one step, replacements and deletions first), every kind of
 * difference between a reviewed plan and a fresh one, the keyed digests of secrets, and plan.md. And drift.md's
 * verdict, which says "makes the deleted objects again" only when something was deleted. Needs no CLI.
 */
import { describe, expect, it } from "vitest";
import { COMMENT_LIMIT, COMMENT_MARKER, renderComment } from "../../examples/gitops/comment.ts";
import { type DriftFacts, renderDriftMarkdown, type StepEvent } from "../../examples/gitops/drift.ts";
import {
  changesOutputs,
  comparePlans,
  differenceSentence,
  fits,
  countsLine,
  type PlanDifference,
  type PlanStep,
  planCounts,
  planSteps,
  type ReviewedPlan,
  renderPlanDiffMarkdown,
  renderPlanMarkdown,
  secretDigest,
  secretDigests,
  warning,
  warningsOf,
} from "../../examples/gitops/plan.ts";

const urn = (kind: string, name: string) => `urn:pulumi:dev::gms-quickstart::pulumi-nodejs:dynamic/gms:${kind}::${name}`;
const type = (kind: string) => `pulumi-nodejs:dynamic/gms:${kind}`;
const pre = (metadata: Record<string, unknown>): StepEvent => ({ resourcePreEvent: { metadata } as never });
const KEY = "sk-plan-facts-secret";
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

const EVENTS: StepEvent[] = [
  pre({ op: "create", urn: "urn:pulumi:dev::gms-quickstart::pulumi:pulumi:Stack::gms-quickstart-dev", type: "pulumi:pulumi:Stack" }),
  pre({
    op: "update",
    urn: urn("App", "helpdesk"),
    type: type("App"),
    old: {
      type: type("App"),
      urn: urn("App", "helpdesk"),
      id: "app-1",
      inputs: { name: "Helpdesk (renamed)", description: "x", __provider: "a" },
    },
    new: { type: type("App"), urn: urn("App", "helpdesk"), inputs: { name: "Helpdesk", description: "x", __provider: "b" } },
  }),
  pre({
    op: "replace",
    urn: urn("ProviderConnection", "openai"),
    type: type("ProviderConnection"),
    keys: ["key"],
    old: {
      type: type("ProviderConnection"),
      urn: urn("ProviderConnection", "openai"),
      id: "conn-1",
      inputs: { key: "[secret]", nickname: "a" },
    },
    new: { type: type("ProviderConnection"), urn: urn("ProviderConnection", "openai"), inputs: { key: "[secret]", nickname: "a" } },
  }),
  pre({ op: "create-replacement", urn: urn("ProviderConnection", "openai"), type: type("ProviderConnection") }),
  pre({ op: "delete-replaced", urn: urn("ProviderConnection", "openai"), type: type("ProviderConnection") }),
  pre({
    op: "create",
    urn: urn("Workflow", "triage"),
    type: type("Workflow"),
    new: { type: type("Workflow"), urn: urn("Workflow", "triage"), inputs: { name: `made with ${KEY}`, app: UNKNOWN } },
  }),
  pre({
    op: "delete",
    urn: urn("Skill", "old-search"),
    type: type("Skill"),
    old: { type: type("Skill"), urn: urn("Skill", "old-search"), id: "skill-1", inputs: { name: "old-search", __provider: "x" } },
  }),
  pre({ op: "same", urn: urn("Eval", "quality"), type: type("Eval") }),
];

const planOf = (events: StepEvent[], digests: Record<string, string> = {}): ReviewedPlan => {
  const steps = planSteps(events, [KEY]);
  return {
    format: 1,
    provenance: {
      stack: "dev",
      commit: "abc123",
      state: { version: null, updatedAt: "2026-12-05T07:00:00.000Z", digest: "sha256:0011" },
      madeAt: "now",
    },
    counts: planCounts(steps, 1),
    steps,
    secretDigests: digests,
    engine: {},
  };
};

describe("planSteps", () => {
  it("reads each step of the program's resources once, replacements and deletions first, secrets and computed values masked", () => {
    const steps = planSteps(EVENTS, [KEY]);
    expect(steps.map((step) => `${step.op} ${step.resource}`)).toEqual([
      "replace openai",
      "delete old-search",
      "create triage",
      "update helpdesk",
    ]);
    expect(steps[0]).toEqual({
      urn: urn("ProviderConnection", "openai"),
      resource: "openai",
      kind: "ProviderConnection",
      op: "replace",
      id: "conn-1",
      fields: [{ field: "key", old: "[secret]", new: "[secret]" }],
      replaceBecause: ["key"],
    });
    expect(steps[2]!.fields).toEqual([
      { field: "app", old: null, new: "[known after up]" },
      { field: "name", old: null, new: "[secret]" },
    ]);
    // The dynamic provider's own input is not a field of the program.
    expect(steps[3]!.fields).toEqual([{ field: "name", old: "Helpdesk (renamed)", new: "Helpdesk" }]);
    expect(planCounts(steps, 1)).toEqual({ same: 1, replace: 1, delete: 1, create: 1, update: 1 });
  });
});

describe("comparePlans", () => {
  const reviewed = planOf(EVENTS, { openaiKey: secretDigest(KEY, "k") });
  const sentences = (differences: PlanDifference[]) => differences.map(differenceSentence);

  it("finds none between a plan and itself", () => {
    expect(comparePlans(reviewed, planOf(EVENTS, { openaiKey: secretDigest(KEY, "k") }))).toEqual({ differences: [], allowed: [] });
  });

  it("names each field that differs with its reviewed and present values: an update, a replacement, a create, a delete, a secret", () => {
    const changed = EVENTS.filter((event) => event.resourcePreEvent?.metadata.urn !== urn("Skill", "old-search")).map((event) => {
      const step = event.resourcePreEvent!.metadata;
      if (step.urn === urn("App", "helpdesk"))
        return pre({ ...step, op: "replace", keys: ["name"], new: { ...step.new!, inputs: { ...step.new!.inputs, name: "Help desk" } } });
      if (step.urn === urn("Workflow", "triage") && step.op === "create")
        return pre({ ...step, op: "update", old: { ...step.new!, id: "wf-1", inputs: { name: `made with ${KEY}`, app: "app-1" } } });
      return event;
    });
    changed.push(
      pre({
        op: "create",
        urn: urn("Dataset", "golden"),
        type: type("Dataset"),
        new: { type: type("Dataset"), urn: urn("Dataset", "golden"), inputs: { name: "Golden" } },
      }),
    );
    const { differences, allowed } = comparePlans(reviewed, planOf(changed, { openaiKey: secretDigest("another", "k") }));
    expect(allowed).toEqual([]);
    // In the fresh plan's order (replacements, deletions, creations, updates), then the steps it no longer has.
    expect(sentences(differences)).toEqual([
      "`helpdesk` (App): reviewed update; now replace",
      '`helpdesk` (App): field `name`: reviewed update "Helpdesk (renamed)" → "Helpdesk"; now replace "Helpdesk (renamed)" → "Help desk"',
      "`golden` (Dataset): reviewed no step; now create",
      '`golden` (Dataset): field `name`: reviewed no change; now create with "Golden"',
      "`triage` (Workflow): reviewed create; now update",
      '`triage` (Workflow): field `app`: reviewed create with [known after up]; now update "app-1" → [known after up]',
      "`triage` (Workflow): field `name`: reviewed create with [secret]; now no change",
      "`old-search` (Skill): reviewed delete; now no step",
      '`old-search` (Skill): field `name`: reviewed delete (it holds "old-search"); now no change',
      "the secret `openaiKey`: reviewed [secret]; now [secret], not the value the review was made with",
    ]);
    const diff = renderPlanDiffMarkdown(reviewed, differences);
    expect(diff).toContain("## The merge did not apply: stack `dev` has changed since the review");
    expect(diff).toContain("reviewed on commit `abc123`");
    expect(diff).toContain("| Resource | Kind | Field | Reviewed | Now |");
    expect(diff).toContain(
      '| `helpdesk` | App | `name` | update `"Helpdesk (renamed)"` → `"Helpdesk"` | replace `"Helpdesk (renamed)"` → `"Help desk"` |',
    );
    expect(diff).toContain('| `golden` | Dataset | `name` | no change | create with `"Golden"` |');
    expect(diff).toContain('| `old-search` | Skill | `name` | delete (it holds `"old-search"`) | no change |');
    expect(diff).toContain("| the secret `openaiKey` |  |  | [secret] | [secret], not the value the review was made with |");
    expect(diff).not.toContain(KEY);
  });

  it("lets a value held [known after up] take any value, or the one it had: a replacement may become an update or nothing", () => {
    const model = (provider: unknown, op: string, extra: Record<string, unknown> = {}) =>
      pre({
        op,
        urn: urn("Model", "helpdesk-llm"),
        type: type("Model"),
        keys: op === "replace" ? ["provider"] : [],
        old: { type: type("Model"), urn: urn("Model", "helpdesk-llm"), id: "m-1", inputs: { provider: "conn-1", llm: "gpt-4o" } },
        new: { type: type("Model"), urn: urn("Model", "helpdesk-llm"), inputs: { provider, llm: "gpt-4o", ...extra } },
      });
    const held = planOf([model(UNKNOWN, "replace")]);
    expect(held.steps[0]!.fields).toEqual([{ field: "provider", old: "conn-1", new: "[known after up]" }]);
    // Another connection now: the replacement, with the value known.
    const another = comparePlans(held, planOf([model("conn-2", "replace")]));
    expect(another.differences).toEqual([]);
    expect(sentences(another.allowed)).toEqual([
      '`helpdesk-llm` (Model): field `provider`: reviewed replace "conn-1" → [known after up]; now replace "conn-1" → "conn-2"',
    ]);
    // The same connection: nothing to do now.
    const none = comparePlans(held, planOf([]));
    expect(none.differences).toEqual([]);
    expect(sentences(none.allowed)).toEqual([
      "`helpdesk-llm` (Model): reviewed replace; now no step",
      '`helpdesk-llm` (Model): field `provider`: reviewed replace "conn-1" → [known after up]; now no change',
    ]);
    // What the field held may have moved with what made it unknown (a refresh after the connection was replaced).
    const moved = pre({
      ...model("conn-2", "replace").resourcePreEvent!.metadata,
      old: { type: type("Model"), urn: urn("Model", "helpdesk-llm"), id: "m-1", inputs: { provider: "openai", llm: "gpt-4o" } },
    });
    expect(comparePlans(held, planOf([moved])).differences).toEqual([]);
    // A field held unknown does not excuse another: a value the review knew must match.
    const llm = comparePlans(held, planOf([model("conn-2", "replace", { llm: "gpt-4.1" })]));
    expect(sentences(llm.differences)).toEqual([
      '`helpdesk-llm` (Model): field `llm`: reviewed no change; now replace "gpt-4o" → "gpt-4.1"',
    ]);
    // A replacement the review knew for sure cannot quietly become nothing.
    const sure = planOf([model("conn-9", "replace")]);
    expect(sentences(comparePlans(sure, planOf([])).differences)[0]).toBe("`helpdesk-llm` (Model): reviewed replace; now no step");
    // A replacement for a field held unknown may turn out an update of another field.
    const both = planOf([model(UNKNOWN, "replace", { llm: "gpt-4.1" })]);
    const update = comparePlans(both, planOf([model("conn-1", "update", { llm: "gpt-4.1" })]));
    expect(update.differences).toEqual([]);
    expect(sentences(update.allowed)).toContain("`helpdesk-llm` (Model): reviewed replace; now update");
  });

  it("refuses a plan read with other secrets settings than the review's", () => {
    const made = (secretsProvider: string) => {
      const plan = planOf([]);
      return { ...plan, provenance: { ...plan.provenance, secretsProvider } };
    };
    expect(sentences(comparePlans(made("passphrase (settings sha256:aaa)"), made("passphrase (settings sha256:bbb)")).differences)).toEqual(
      ["the stack's secrets provider: reviewed passphrase (settings sha256:aaa); now passphrase (settings sha256:bbb)"],
    );
  });
});

describe("fits, and whether a plan changes its stack's outputs", () => {
  it("matches [known after up] anywhere in a reviewed value, and nothing else", () => {
    expect(fits("[known after up]", { any: "thing" })).toBe(true);
    expect(fits({ a: 1, b: "[known after up]" }, { a: 1, b: "x" })).toBe(true);
    expect(fits({ a: 1, b: "[known after up]" }, { a: 2, b: "x" })).toBe(false);
    expect(fits(["[known after up]", 2], ["x", 2])).toBe(true);
    expect(fits(["[known after up]"], ["x", 2])).toBe(false);
    expect(fits("a", "a")).toBe(true);
    expect(fits({ a: null }, {})).toBe(true);
  });

  it("says a stack's outputs change when they differ after it, hold a value known after up, or hold a secret it may change", () => {
    const plan = (now: Record<string, unknown>, planned: Record<string, unknown>, steps = EVENTS) => ({
      ...planOf(steps),
      outputs: { now, planned },
    });
    expect(changesOutputs(plan({ a: 1 }, { a: 1 }))).toBe(false);
    expect(changesOutputs(plan({ a: 1 }, { a: 1, b: 2 }))).toBe(true);
    expect(changesOutputs(plan({ a: "g" }, { a: "[known after up]" }))).toBe(true);
    expect(changesOutputs(plan({ a: "[secret]" }, { a: "[secret]" }))).toBe(true);
    expect(changesOutputs(plan({ a: "[secret]" }, { a: "[secret]" }, []))).toBe(false);
    expect(changesOutputs({ ...planOf([]), outputs: undefined })).toBe(false);
  });
});

describe("secret digests", () => {
  it("tell values apart under one key, differ under another, and never hold the value", () => {
    const digests = secretDigests({ openaiKey: KEY, unset: undefined }, "pipeline key");
    expect(Object.keys(digests)).toEqual(["openaiKey"]);
    expect(digests.openaiKey).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(digests.openaiKey).toBe(secretDigest(KEY, "pipeline key"));
    expect(secretDigest(KEY, "another key")).not.toBe(digests.openaiKey);
    expect(secretDigest("sk-plan-facts-other", "pipeline key")).not.toBe(digests.openaiKey);
    expect(digests.openaiKey).not.toContain(KEY);
  });
});

describe("plan.md", () => {
  it("puts replacements and deletions first in words, then every step's fields, the counts and what it was made from", () => {
    const markdown = renderPlanMarkdown(planOf(EVENTS));
    expect(markdown).toMatch(/^## Plan: stack `dev`\n\n\*\*1 replace · 1 delete · 1 create · 1 update\*\* · 1 resource unchanged\.\n/);
    expect(markdown).toContain(
      "- **Replaces** `openai` (ProviderConnection) `conn-1`: changing `key`, which only a replacement can change. " +
        "A new object is made (a new GUID) and the old one deleted.",
    );
    expect(markdown).toContain("- **Deletes** `old-search` (Skill) `skill-1`: the object is gone from the workspace.");
    expect(markdown.indexOf("**Replaces**")).toBeLessThan(markdown.indexOf("### Steps"));
    expect(markdown).toContain("| `openai` | ProviderConnection | replace | `key` (replaces) | [secret] | [secret] |");
    expect(markdown).toContain('| `helpdesk` | App | update | `name` | `"Helpdesk (renamed)"` | `"Helpdesk"` |');
    expect(markdown).toContain("|  |  |  | `name` |  | [secret] |");
    expect(markdown).toContain("from commit `abc123`, stack `dev`, the state as of its update at 2026-12-05T07:00:00.000Z (`sha256:0011`)");
    expect(markdown).not.toContain(KEY);
    expect(renderPlanMarkdown(planOf([]))).toContain("**No change** · 1 resource unchanged.");
  });
});

describe("drift.md's verdict", () => {
  const facts = (changed: number, deleted: number): DriftFacts => ({
    stack: "dev",
    checkedAt: "now",
    changedFields: Array.from({ length: changed }, () => ({
      resource: "helpdesk",
      kind: "App",
      id: "app-1",
      field: "name",
      service: "a",
      program: "b",
      putBack: true as const,
      replaces: false,
    })),
    deleted: Array.from({ length: deleted }, () => ({ resource: "triage", kind: "Workflow", id: "wf-1", putBack: true as const })),
    unmanaged: [],
  });

  it("says what the next up does: puts values back, makes deleted objects again, or both; nothing when there is no drift", () => {
    expect(renderDriftMarkdown(facts(1, 0))).toContain("The next `up` puts the program's values back.");
    expect(renderDriftMarkdown(facts(0, 1))).toContain("The next `up` makes the deleted objects again.");
    expect(renderDriftMarkdown(facts(1, 1))).toContain("The next `up` puts the program's values back and makes the deleted objects again.");
    expect(renderDriftMarkdown(facts(0, 0))).toContain("The service holds what the program declares.");
  });
});

describe("plan.md for a stack that reads a stack this review changes", () => {
  it("says a replacement that hinges on a value read from a stack the review changes may not happen, and what is held", () => {
    const events = [
      pre({
        op: "replace",
        urn: urn("Model", "helpdesk-llm"),
        type: type("Model"),
        keys: ["provider"],
        old: { type: type("Model"), urn: urn("Model", "helpdesk-llm"), id: "m-1", inputs: { provider: "conn-1" } },
        new: { type: type("Model"), urn: urn("Model", "helpdesk-llm"), inputs: { provider: UNKNOWN } },
      }),
    ];
    const plan = planOf(events);
    const markdown = renderPlanMarkdown({ ...plan, provenance: { ...plan.provenance, entry: "helpdesk", heldUnknown: ["shared"] } });
    expect(markdown).toMatch(/^## Plan: `helpdesk` \(stack `dev`\)\n/);
    expect(markdown).toContain("What it reads of `shared`, which this review changes, is [known after up]");
    expect(markdown).toContain(
      "- **May replace** `helpdesk-llm` (Model) `m-1`: `provider` will be known only after `up` (read from shared, which this review changes). " +
        "If it then differs, a new object is made (a new GUID) and the old one deleted; else nothing changes.",
    );
    // Within one stack, a value known only after up is an object to be made: its new GUID does replace.
    expect(renderPlanMarkdown(plan)).toContain(
      "- **Replaces** `helpdesk-llm` (Model) `m-1`: changing `provider`, which only a replacement can change.",
    );
  });
});

describe("the pull request's comment", () => {
  const KINDS = ["App", "Workflow", "Dataset", "Model", "Skill"];
  /** A plan of `size` steps: every 7th a replacement, every 11th a deletion, every 3rd an update, the rest creations. */
  const bigPlan = (entry: string, size: number): ReviewedPlan => {
    const steps: PlanStep[] = Array.from({ length: size }, (_, index) => {
      const kind = KINDS[index % KINDS.length]!;
      const op: PlanStep["op"] = index % 7 === 0 ? "replace" : index % 11 === 0 ? "delete" : index % 3 === 0 ? "update" : "create";
      const resource = `${entry}-${kind.toLowerCase()}-${String(index).padStart(4, "0")}`;
      return {
        urn: urn(kind, resource),
        resource,
        kind,
        op,
        ...(op === "create" ? {} : { id: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}` }),
        fields: [
          { field: "name", old: op === "create" ? null : `${resource} before`, new: op === "delete" ? null : `${resource} after` },
          { field: "description", old: null, new: "A description long enough to take some room in a table of steps" },
        ],
        ...(op === "replace" ? { replaceBecause: ["name"] } : {}),
      };
    });
    const plan = planOf([]);
    return {
      ...plan,
      provenance: { ...plan.provenance, entry },
      steps: [...steps].sort((a, b) => ORDER.indexOf(a.op) - ORDER.indexOf(b.op)),
      counts: planCounts(steps, 5),
    };
  };
  const ORDER = ["replace", "delete", "create", "update"];
  const URL = "https://github.com/acme/infra/actions/runs/42";
  const listed = (text: string) => text.split("\n").filter((line) => /^- \*\*(Replaces|Deletes|May replace)\*\*/.test(line));

  it("holds every plan in full when they fit", () => {
    const plans = [bigPlan("shared", 12), bigPlan("support", 5)];
    const text = renderComment(plans, { artifactUrl: URL });
    expect(text.startsWith(`${COMMENT_MARKER}\n# gms plan: 2 stacks, 17 steps\n`)).toBe(true);
    for (const plan of plans) expect(text).toContain(renderPlanMarkdown(plan));
    expect(text).toContain(`Each stack's plan.md and plan.json are in the run's artifacts (${URL}).`);
    expect(renderComment([], { empty: "Nothing to plan." })).toBe(`${COMMENT_MARKER}\n# gms plan\n\nNothing to plan.\n`);
  });

  it("one stack of 2,000 steps: under 60,000 characters, its counts, replacements then deletions as many as fit, the rest per kind", () => {
    const plan = bigPlan("shared", 2000);
    expect(renderPlanMarkdown(plan).length).toBeGreaterThan(COMMENT_LIMIT);
    const text = renderComment([plan], { artifactUrl: URL });
    expect(text.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(text).toContain(`## Plan: \`shared\` (stack \`dev\`)\n\n${countsLine(plan)}\n`);
    expect(countsLine(plan)).toBe("**286 replace · 156 delete · 1039 create · 519 update** · 5 resources unchanged.");
    const warnings = warningsOf(plan);
    const lines = listed(text);
    // As many as fit, in the plan's order: every replacement before any deletion.
    expect(lines.length).toBeGreaterThan(100);
    expect(lines.length).toBeLessThan(warnings.length);
    expect(lines).toEqual(warnings.slice(0, lines.length).map((step) => warning(step, plan)));
    expect(text).toContain(`### Replacements and deletions (${lines.length} of ${warnings.length} listed)`);
    // The other steps counted per kind: every step is listed or counted.
    const table = text.slice(text.indexOf("### The other steps, by kind"));
    const counted = [
      ...table.matchAll(/^\| (App|Workflow|Dataset|Model|Skill) \| ([\d ]*) \| ([\d ]*) \| ([\d ]*) \| ([\d ]*) \|$/gm),
    ].reduce((sum, row) => sum + row.slice(2).reduce((cells, cell) => cells + (Number(cell.trim()) || 0), 0), 0);
    expect(counted + lines.length).toBe(2000);
    expect(text).toContain(`**This comment leaves out ${2000 - lines.length} steps of 2000**`);
    expect(text).toContain(`Each stack's plan.md, in the run's artifacts (${URL}), holds its plan in full.`);
  });

  it("five stacks of 2,000 steps each: under 60,000 characters, every stack's counts, and replacements listed for each in turn", () => {
    const plans = ["shared", "support", "billing", "reports", "search"].map((entry) => bigPlan(entry, 2000));
    const text = renderComment(plans, { artifactUrl: URL });
    expect(text.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    let shown = 0;
    for (const plan of plans) {
      const section = text.slice(text.indexOf(`## Plan: \`${plan.provenance.entry}\``)).split("\n## Plan:")[0]!;
      expect(section).toContain(countsLine(plan));
      const lines = listed(section);
      expect(lines.length).toBeGreaterThan(10);
      expect(lines).toEqual(
        warningsOf(plan)
          .slice(0, lines.length)
          .map((step) => warning(step, plan)),
      );
      expect(section).toContain("### The other steps, by kind");
      shown += lines.length;
    }
    expect(text).toContain(`**This comment leaves out ${10_000 - shown} steps of 10000**`);
  });

  it("keeps a small stack in full beside a big one, and only counts when stacks are too many for more", () => {
    const small = bigPlan("support", 4);
    const text = renderComment([bigPlan("shared", 2000), small], { artifactUrl: URL });
    expect(text.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(text).toContain(renderPlanMarkdown(small));
    const many = Array.from({ length: 1500 }, (_, index) => bigPlan(`stack-${index}`, 3));
    const counts = renderComment(many, { artifactUrl: URL });
    expect(counts.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(counts).toContain(`- \`stack-0\` (stack \`dev\`): ${countsLine(many[0]!)}`);
    expect(counts).toMatch(/\*\*\d+ stacks more\*\*: each stack's plan\.md is in the run's artifacts\.\n$/);
  });
});
