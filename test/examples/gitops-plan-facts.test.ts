/**
 * examples/gitops/plan.ts as pure functions: the steps read from a preview's engine events (secrets masked by value,
 * computed values, a replacement's three events as one step, replacements and deletions first), every kind of
 * difference between a reviewed plan and a fresh one, the keyed digests of secrets, and plan.md. And drift.md's
 * verdict, which says "makes the deleted objects again" only when something was deleted. Needs no CLI.
 */
import { describe, expect, it } from "vitest";
import { type DriftFacts, renderDriftMarkdown, type StepEvent } from "../../examples/gitops/drift.ts";
import {
  planCounts,
  planDifferences,
  planSteps,
  type ReviewedPlan,
  renderPlanDiffMarkdown,
  renderPlanMarkdown,
  secretDigest,
  secretDigests,
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
    old: { type: type("Skill"), urn: urn("Skill", "old-search"), id: "skill-1" },
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

describe("planDifferences", () => {
  const reviewed = planOf(EVENTS, { openaiKey: secretDigest(KEY, "k") });

  it("finds none between a plan and itself", () => {
    expect(planDifferences(reviewed, planOf(EVENTS, { openaiKey: secretDigest(KEY, "k") }))).toEqual([]);
  });

  it("names a step dropped, a step added, another operation, another value, another reason and another secret", () => {
    const changed = EVENTS.filter((event) => event.resourcePreEvent?.metadata.urn !== urn("Skill", "old-search")).map((event) => {
      const step = event.resourcePreEvent!.metadata;
      if (step.urn === urn("App", "helpdesk"))
        return pre({ ...step, new: { ...step.new!, inputs: { ...step.new!.inputs, name: "Help desk" } } });
      if (step.urn === urn("Workflow", "triage") && step.op === "create")
        return pre({ ...step, op: "update", old: { ...step.new!, id: "wf-1" } });
      if (step.urn === urn("ProviderConnection", "openai") && step.op === "replace") return pre({ ...step, keys: ["key", "provider"] });
      return event;
    });
    changed.push(
      pre({
        op: "create",
        urn: urn("Dataset", "golden"),
        type: type("Dataset"),
        new: { type: type("Dataset"), urn: urn("Dataset", "golden"), inputs: {} },
      }),
    );
    const differences = planDifferences(reviewed, planOf(changed, { openaiKey: secretDigest("another", "k") }));
    // In the fresh plan's order: replacements, deletions, creations, updates.
    expect(differences).toEqual([
      "`old-search` (Skill): the reviewed plan would delete it; now nothing is planned for it",
      "`openai` (ProviderConnection): field `provider`: reviewed no change; now null → null",
      "`openai` (ProviderConnection): the reviewed plan replaces it for key; now for key, provider",
      "`golden` (Dataset): now it would create it, a step the reviewed plan does not have",
      '`helpdesk` (App): field `name`: reviewed "Helpdesk (renamed)" → "Helpdesk"; now "Helpdesk (renamed)" → "Help desk"',
      "`triage` (Workflow): the reviewed plan would create it; now it would update it",
      "the secret `openaiKey` is not the value the review was made with",
    ]);
    const diff = renderPlanDiffMarkdown(reviewed, differences);
    expect(diff).toContain("## The merge did not apply: stack `dev` has changed since the review");
    expect(diff).toContain("reviewed on commit `abc123`");
    for (const difference of differences) expect(diff).toContain(`- ${difference}`);
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
