/**
 * LocalEngine's step decisions (src/testing/planner.ts), table-driven: every row of each decision table, no
 * program, provider host or child process. The engine's own tests (engine, failures, after-failure, ...) show the
 * executor runs what these decide.
 */
import { describe, expect, it } from "vitest";
import type { DiffResult } from "../../src/testing/host";
import {
  type Fate,
  type Goal,
  type Progress,
  type RefreshFacts,
  type RegistrationFacts,
  leftOver,
  planDelete,
  planLeftOver,
  planRead,
  planRefresh,
  planRegistration,
  stopsOperation,
} from "../../src/testing/planner";
import { makeSecret } from "../../src/testing/properties";
import type { ResourceState } from "../../src/testing/state";

const URN = "urn:pulumi:dev::p::pulumi-nodejs:dynamic/gms:App::a";
const DEP = "urn:pulumi:dev::p::pulumi-nodejs:dynamic/gms:App::dep";
const PARENT = "urn:pulumi:dev::p::my:Component::parent";

const goal = (over: Partial<Goal> = {}): Goal => ({
  urn: URN,
  custom: true,
  unsupported: [],
  inputs: { name: "A" },
  parent: "",
  dependencies: [],
  deleteBeforeReplace: undefined,
  ...over,
});
const old = (over: Partial<ResourceState> = {}): ResourceState => ({
  urn: URN,
  type: "pulumi-nodejs:dynamic/gms:App",
  name: "a",
  id: "guid-a",
  dependencies: [],
  inputs: { name: "A" },
  outputs: { name: "A", guid: "guid-a" },
  additionalSecretOutputs: [],
  ...over,
});
const progress = (over: Partial<Progress> = {}): Progress => ({
  checkFailed: false,
  failed: () => false,
  stoppedBy: undefined,
  preview: false,
  ...over,
});
const checked = (inputs: Record<string, unknown> = { name: "A" }) => ({ inputs, failures: [] });
const diff = (over: Partial<DiffResult> = {}): DiffResult => ({ changes: "none", replaces: [], deleteBeforeReplace: false, ...over });
const STOPPED = `${DEP} failed, and no step starts after a failed one (as \`pulumi up\` without --continue-on-error; continueOnError runs the others)`;

describe("planRegistration: what a registration becomes", () => {
  const rows: [string, Omit<RegistrationFacts, "progress"> & { progress?: Partial<Progress> }, ReturnType<typeof planRegistration>][] = [
    ["a component resource: no step", { goal: goal({ custom: false }), old: undefined }, { step: "component" }],
    [
      "an option the engine does not implement: refused",
      { goal: goal({ unsupported: ["protect", "aliases"] }), old: undefined },
      { step: "refuse", reason: `${URN}: the offline engine does not implement the resource option(s) protect, aliases` },
    ],
    ["not yet checked: ask the provider", { goal: goal(), old: undefined }, { step: "check" }],
    [
      "its check failed (even after another's did)",
      {
        goal: goal(),
        old: undefined,
        check: { inputs: {}, failures: [{ property: "name", reason: "must not be empty" }] },
        progress: { checkFailed: true },
      },
      {
        step: "check-failed",
        failures: [{ urn: URN, property: "name", reason: "must not be empty" }],
        reason: `${URN} failed its checks: name: must not be empty`,
      },
    ],
    [
      "another resource failed its checks: skipped",
      { goal: goal(), old: undefined, check: checked(), progress: { checkFailed: true } },
      { step: "skip", reason: `${URN} was skipped: a resource failed its checks` },
    ],
    [
      "a dependency failed: skipped",
      { goal: goal({ dependencies: [DEP] }), old: undefined, check: checked(), progress: { failed: (urn) => urn === DEP } },
      { step: "skip", reason: `${URN} was skipped: ${DEP} failed` },
    ],
    [
      "its parent failed: skipped",
      { goal: goal({ parent: PARENT }), old: undefined, check: checked(), progress: { failed: (urn) => urn === PARENT } },
      { step: "skip", reason: `${URN} was skipped: ${PARENT} failed` },
    ],
    [
      "a step failed without continueOnError: not started",
      { goal: goal(), old: old(), check: checked(), progress: { stoppedBy: DEP } },
      { step: "skip", reason: `${URN} was not started: ${STOPPED}` },
    ],
    [
      "a step failed, in preview: planned all the same",
      { goal: goal(), old: undefined, check: checked(), progress: { stoppedBy: DEP, preview: true } },
      { step: "create", inputs: { name: "A" } },
    ],
    ["no old state: create", { goal: goal(), old: undefined, check: checked() }, { step: "create", inputs: { name: "A" } }],
    [
      "an old state, not yet diffed: ask the provider",
      { goal: goal(), old: old(), check: checked() },
      { step: "diff", inputs: { name: "A" } },
    ],
    ["no change: same", { goal: goal(), old: old(), check: checked(), diff: diff() }, { step: "same", inputs: { name: "A" } }],
    [
      "an unknown diff, inputs equal: same",
      { goal: goal(), old: old(), check: checked(), diff: diff({ changes: "unknown" }) },
      { step: "same", inputs: { name: "A" } },
    ],
    [
      "an unknown diff, inputs changed: update",
      { goal: goal(), old: old(), check: checked({ name: "B" }), diff: diff({ changes: "unknown" }) },
      { step: "update", inputs: { name: "B" }, changes: ["name"] },
    ],
    [
      "no change, but the old object has init errors: update, so that it is finished",
      { goal: goal(), old: old({ initErrors: ["job failed"] }), check: checked(), diff: diff() },
      { step: "update", inputs: { name: "A" }, changes: [] },
    ],
    [
      "a change without replacement keys: update",
      { goal: goal(), old: old(), check: checked({ name: "B" }), diff: diff({ changes: "some" }) },
      { step: "update", inputs: { name: "B" }, changes: ["name"] },
    ],
    [
      "replacement keys: replace, create before delete",
      { goal: goal(), old: old(), check: checked({ name: "B" }), diff: diff({ changes: "some", replaces: ["name"] }) },
      { step: "replace", inputs: { name: "B" }, changes: ["name"], replaces: ["name"] },
    ],
    [
      "replacement keys and the diff's deleteBeforeReplace: delete before replace",
      {
        goal: goal(),
        old: old(),
        check: checked({ name: "B" }),
        diff: diff({ changes: "some", replaces: ["name"], deleteBeforeReplace: true }),
      },
      { step: "delete-before-replace", inputs: { name: "B" }, changes: ["name"], replaces: ["name"] },
    ],
    [
      "the deleteBeforeReplace option overrides the diff's false",
      {
        goal: goal({ deleteBeforeReplace: true }),
        old: old(),
        check: checked({ name: "B" }),
        diff: diff({ changes: "some", replaces: ["name"] }),
      },
      { step: "delete-before-replace", inputs: { name: "B" }, changes: ["name"], replaces: ["name"] },
    ],
    [
      "the deleteBeforeReplace option overrides the diff's true",
      {
        goal: goal({ deleteBeforeReplace: false }),
        old: old(),
        check: checked({ name: "B" }),
        diff: diff({ changes: "some", replaces: ["name"], deleteBeforeReplace: true }),
      },
      { step: "replace", inputs: { name: "B" }, changes: ["name"], replaces: ["name"] },
    ],
    [
      "init errors and replacement keys: replace",
      { goal: goal(), old: old({ initErrors: ["x"] }), check: checked(), diff: diff({ changes: "some", replaces: ["status"] }) },
      { step: "replace", inputs: { name: "A" }, changes: [], replaces: ["status"] },
    ],
  ];
  it.each(rows)("%s", (_, facts, expected) => {
    expect(planRegistration({ ...facts, progress: progress(facts.progress) })).toEqual(expected);
  });

  it("keeps the secrets the program marked on the checked inputs (the host takes and answers them revealed)", () => {
    const plan = planRegistration({
      goal: goal({ inputs: { name: "A", key: makeSecret("sk") } }),
      old: undefined,
      check: checked({ name: "A", key: "sk" }),
      progress: progress(),
    });
    expect(plan).toEqual({ step: "create", inputs: { name: "A", key: makeSecret("sk") } });
  });
});

describe("stopsOperation: whether a failure stops the operation", () => {
  it.each([
    ["STEP_FAILED", false, true],
    ["STEP_FAILED", true, false],
    ["SKIPPED", false, false],
    ["CHECK_FAILED", false, false],
    ["UNSUPPORTED", false, false],
  ] as const)("%s, continueOnError %s: %s", (code, continueOnError, stops) => {
    expect(stopsOperation(code, continueOnError)).toBe(stops);
  });
});

describe("leftOver: what the end of up deletes", () => {
  const rows: [string, Partial<ResourceState>, Fate | undefined, boolean, boolean][] = [
    ["replaced by this run", {}, "replaced", true, true],
    ["kept", {}, "kept", true, false],
    ["deleted already (delete-before-replace)", {}, "deleted", true, false],
    ["a replaced object an earlier run left pending", { pendingReplacement: true }, undefined, true, true],
    ["no longer declared", {}, undefined, false, true],
    ["declared, but its step failed", {}, undefined, true, false],
  ];
  it.each(rows)("%s", (_, over, fate, registered, deleted) => {
    const resource = old(over);
    const registeredUrns = new Set(registered ? [URN] : []);
    expect(leftOver([resource], () => fate, registeredUrns)).toEqual(deleted ? [resource] : []);
  });
});

describe("planLeftOver: whether the end of up deletes them", () => {
  const rows: [string, Parameters<typeof planLeftOver>[0], ReturnType<typeof planLeftOver>][] = [
    ["the program ran to its end", { checkFailed: false, programFailed: false, firstFailed: undefined }, { step: "delete" }],
    [
      "a resource failed its checks",
      { checkFailed: true, programFailed: true, firstFailed: URN },
      { step: "hold-back", reason: "resources failed their checks, so no step ran" },
    ],
    [
      "the program failed after a failed step",
      { checkFailed: false, programFailed: true, firstFailed: URN },
      {
        step: "hold-back",
        reason: `a step failed (${URN}), so the program did not finish; what it no longer declares is deleted by the next \`up\` that runs it to its end`,
      },
    ],
    [
      "the program failed on its own",
      { checkFailed: false, programFailed: true, firstFailed: undefined },
      { step: "hold-back", reason: "the program failed; what it no longer declares is deleted by the next `up` that runs it to its end" },
    ],
  ];
  it.each(rows)("%s", (_, facts, expected) => expect(planLeftOver(facts)).toEqual(expected));
});

describe("planDelete: one delete, once its dependents are gone", () => {
  const rows: [string, Parameters<typeof planDelete>[0], ReturnType<typeof planDelete>][] = [
    [
      "a failed step depends on it",
      { fate: undefined, protected: true, stoppedBy: DEP, preview: false },
      { step: "hold-back", reason: "a resource whose step failed depends on it" },
    ],
    [
      "stopped by a failed step",
      { fate: undefined, protected: false, stoppedBy: DEP, preview: false },
      { step: "hold-back", reason: STOPPED },
    ],
    [
      "stopped, in preview: shown all the same",
      { fate: undefined, protected: false, stoppedBy: DEP, preview: true },
      { step: "delete", shown: true },
    ],
    [
      "no longer declared: a delete step",
      { fate: undefined, protected: false, stoppedBy: undefined, preview: false },
      { step: "delete", shown: true },
    ],
    [
      "replaced: part of its replace step",
      { fate: "replaced", protected: false, stoppedBy: undefined, preview: false },
      { step: "delete", shown: false },
    ],
  ];
  it.each(rows)("%s", (_, facts, expected) => expect(planDelete(facts)).toEqual(expected));
});

describe("planRefresh: what a refresh makes of a resource", () => {
  const rows: [string, RefreshFacts, ReturnType<typeof planRefresh>][] = [
    ["a replaced object awaiting deletion: kept unread", { old: old({ pendingReplacement: true }) }, { step: "keep" }],
    ["not yet read: ask the provider", { old: old() }, { step: "read" }],
    ["the read failed: kept as it was", { old: old(), read: "failed" }, { step: "keep" }],
    ["gone (an empty id): dropped", { old: old(), read: { id: "" } }, { step: "drop" }],
    [
      "read, without inputs: the recorded ones, then the diff",
      { old: old(), read: { id: "guid-a" } },
      { step: "diff", inputs: { name: "A" } },
    ],
    [
      "read with inputs: those, then the diff",
      { old: old(), read: { id: "guid-a", inputs: { name: "B" } } },
      { step: "diff", inputs: { name: "B" } },
    ],
    [
      "the diff finds no change, even with outputs drifted: same",
      { old: old(), read: { id: "guid-a" }, outputs: { name: "A", guid: "guid-a", updatedAt: "now" }, diff: diff() },
      { step: "same", inputs: { name: "A" }, changes: [] },
    ],
    [
      "the diff finds a change: refresh, naming the drifted outputs",
      {
        old: old(),
        read: { id: "guid-a", inputs: { name: "B" } },
        outputs: { name: "B", guid: "guid-a" },
        diff: diff({ changes: "some" }),
      },
      { step: "refresh", inputs: { name: "B" }, changes: ["name"] },
    ],
    [
      "an unknown diff, inputs changed: refresh",
      {
        old: old(),
        read: { id: "guid-a", inputs: { name: "B" } },
        outputs: { name: "B", guid: "guid-a" },
        diff: diff({ changes: "unknown" }),
      },
      { step: "refresh", inputs: { name: "B" }, changes: ["name"] },
    ],
    [
      "an unknown diff, inputs equal: same",
      { old: old(), read: { id: "guid-a" }, outputs: { name: "B", guid: "guid-a" }, diff: diff({ changes: "unknown" }) },
      { step: "same", inputs: { name: "A" }, changes: [] },
    ],
    [
      "the diff failed, outputs drifted: refresh",
      { old: old(), read: { id: "guid-a" }, outputs: { name: "A", guid: "guid-b" }, diff: "failed" },
      { step: "refresh", inputs: { name: "A" }, changes: ["guid"] },
    ],
    [
      "the diff failed, outputs as recorded: same",
      { old: old(), read: { id: "guid-a" }, outputs: { name: "A", guid: "guid-a" }, diff: "failed" },
      { step: "same", inputs: { name: "A" }, changes: [] },
    ],
  ];
  it.each(rows)("%s", (_, facts, expected) => expect(planRefresh(facts)).toEqual(expected));
});

describe("planRead: a resource read with the `id` option", () => {
  const rows: [string, Parameters<typeof planRead>[0], ReturnType<typeof planRead>][] = [
    [
      "an option the engine does not implement: refused",
      { urn: URN, id: "guid-a", unsupported: ["provider"] },
      { step: "refuse", reason: `${URN}: the offline engine does not implement provider` },
    ],
    ["not yet read: ask the provider", { urn: URN, id: "guid-a", unsupported: [] }, { step: "read" }],
    [
      "no such object",
      { urn: URN, id: "guid-a", unsupported: [], read: { id: "" } },
      { step: "missing", reason: `${URN}: no object with id guid-a exists` },
    ],
    ["found", { urn: URN, id: "guid-a", unsupported: [], read: { id: "guid-a" } }, { step: "done" }],
  ];
  it.each(rows)("%s", (_, facts, expected) => expect(planRead(facts)).toEqual(expected));
});
