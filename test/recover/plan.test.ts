/**
 * recover's plan as data (src/recover/plan.ts): for each case, the pending creates' lookups, the ids the stack holds
 * and the user's `--choose`, and the outcome of each create (with the id recorded and the candidates named).
 */
import { describe, expect, it } from "vitest";
import { type Match, type PendingLookup, planForeign, planRecovery } from "../../src/recover/plan";

const T0 = Date.parse("2026-11-28T12:00:00Z");
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const urn = (name: string) => `urn:pulumi:dev::p::gms:index:App::${name}`;
/** A lookup of App `name` that found `matches`, with the update's start at T0 (null: not known). */
const found = (name: string, matches: Match[], since: number | null = T0): PendingLookup => ({
  urn: urn(name),
  kind: "App",
  found: { matches, since: since ?? undefined },
});

interface Row {
  lookups: PendingLookup[];
  held?: string[];
  choices?: [string, string | null][];
  /** By URN's name: outcome, recorded id, the candidates named. */
  expected: Record<string, [string, string | undefined, string[]]>;
}

const cases: Record<string, Row> = {
  "one match made in the update, held by no resource: recorded": {
    lookups: [found("a", [{ guid: "g1", createdAt: at(5) }])],
    expected: { a: ["recorded", "g1", ["g1"]] },
  },
  "no match: dropped": {
    lookups: [found("a", [])],
    expected: { a: ["dropped", undefined, []] },
  },
  "the only match is held by a resource of the stack: dropped": {
    lookups: [found("a", [{ guid: "g1", createdAt: at(5) }])],
    held: ["g1"],
    expected: { a: ["dropped", undefined, []] },
  },
  "the only match is older than the update: dropped": {
    lookups: [found("a", [{ guid: "g1", createdAt: at(-60) }])],
    expected: { a: ["dropped", undefined, []] },
  },
  "an older match beside one made in the update: the new one recorded": {
    lookups: [
      found("a", [
        { guid: "old", createdAt: at(-60) },
        { guid: "g1", createdAt: at(5) },
      ]),
    ],
    expected: { a: ["recorded", "g1", ["g1"]] },
  },
  "two matches made in the update: ambiguous, both named": {
    lookups: [
      found("a", [
        { guid: "g1", createdAt: at(5) },
        { guid: "g2", createdAt: at(6) },
      ]),
    ],
    expected: { a: ["ambiguous", undefined, ["g1", "g2"]] },
  },
  "a match without a creation time when the update's start is known: ambiguous (it may be older)": {
    lookups: [found("a", [{ guid: "g1" }])],
    expected: { a: ["ambiguous", undefined, ["g1"]] },
  },
  "a match without a creation time that the kind bounds after the update's start (a Dataset of an App made then): recorded": {
    lookups: [found("a", [{ guid: "g1", notBefore: at(2) }])],
    expected: { a: ["recorded", "g1", ["g1"]] },
  },
  "a match without a creation time that the kind bounds only before the update's start: ambiguous": {
    lookups: [found("a", [{ guid: "g1", notBefore: at(-2) }])],
    expected: { a: ["ambiguous", undefined, ["g1"]] },
  },
  "a match the kind doubts (a file-backed Context Source's): ambiguous": {
    lookups: [found("a", [{ guid: "g1", createdAt: at(5), doubt: "nothing identifies the upload" }])],
    expected: { a: ["ambiguous", undefined, ["g1"]] },
  },
  "the update's start unknown: the one unheld match recorded, creation time or not": {
    lookups: [found("a", [{ guid: "g1" }], null)],
    expected: { a: ["recorded", "g1", ["g1"]] },
  },
  "the update's start unknown: an old orphan beside the new object makes it ambiguous": {
    lookups: [
      found(
        "a",
        [
          { guid: "old", createdAt: at(-3600) },
          { guid: "g1", createdAt: at(5) },
        ],
        null,
      ),
    ],
    expected: { a: ["ambiguous", undefined, ["old", "g1"]] },
  },
  "twins: one object that two pending creates match is neither's": {
    lookups: [found("a", [{ guid: "g1", createdAt: at(5) }]), found("b", [{ guid: "g1", createdAt: at(5) }])],
    expected: { a: ["ambiguous", undefined, ["g1"]], b: ["ambiguous", undefined, ["g1"]] },
  },
  "twins: the object chosen for one is no longer the other's candidate": {
    lookups: [
      found("a", [
        { guid: "g1", createdAt: at(5) },
        { guid: "g2", createdAt: at(6) },
      ]),
      found("b", [
        { guid: "g1", createdAt: at(5) },
        { guid: "g2", createdAt: at(6) },
      ]),
    ],
    choices: [[urn("a"), "g2"]],
    expected: { a: ["recorded", "g2", ["g2"]], b: ["recorded", "g1", ["g1"]] },
  },
  "--choose URN=none drops the create": {
    lookups: [
      found("a", [
        { guid: "g1", createdAt: at(5) },
        { guid: "g2", createdAt: at(6) },
      ]),
    ],
    choices: [[urn("a"), null]],
    expected: { a: ["dropped", undefined, ["g1", "g2"]] },
  },
  "--choose of a GUID that matches nothing: unsettled": {
    lookups: [found("a", [{ guid: "g1", createdAt: at(5) }])],
    choices: [[urn("a"), "stranger"]],
    expected: { a: ["unsettled", undefined, ["g1"]] },
  },
  "--choose of a GUID the stack holds: unsettled": {
    lookups: [found("a", [{ guid: "g1", createdAt: at(5) }])],
    held: ["g1"],
    choices: [[urn("a"), "g1"]],
    expected: { a: ["unsettled", undefined, []] },
  },
  "--choose of an older match: recorded (the user's word)": {
    lookups: [found("a", [{ guid: "old", createdAt: at(-60) }])],
    choices: [[urn("a"), "old"]],
    expected: { a: ["recorded", "old", ["old"]] },
  },
  "--choose of one GUID for two creates: both unsettled": {
    lookups: [found("a", [{ guid: "g1", createdAt: at(5) }]), found("b", [{ guid: "g1", createdAt: at(5) }])],
    choices: [
      [urn("a"), "g1"],
      [urn("b"), "g1"],
    ],
    expected: { a: ["unsettled", undefined, ["g1"]], b: ["unsettled", undefined, ["g1"]] },
  },
  "a URN the stack holds already (a later run made it): its one candidate superseded, to be deleted": {
    lookups: [
      {
        ...found("a", [
          { guid: "orphan", createdAt: at(5) },
          { guid: "kept", createdAt: at(90) },
        ]),
        heldAs: "kept",
      },
    ],
    held: ["kept"],
    expected: { a: ["superseded", "orphan", ["orphan"]] },
  },
  "a URN the stack holds already, no candidate: dropped": {
    lookups: [{ ...found("a", [{ guid: "kept", createdAt: at(90) }]), heldAs: "kept" }],
    held: ["kept"],
    expected: { a: ["dropped", undefined, []] },
  },
  "a URN the stack holds already, two candidates: ambiguous (neither is deleted on a guess)": {
    lookups: [
      {
        ...found("a", [
          { guid: "o1", createdAt: at(5) },
          { guid: "o2", createdAt: at(6) },
        ]),
        heldAs: "kept",
      },
    ],
    held: ["kept"],
    expected: { a: ["ambiguous", undefined, ["o1", "o2"]] },
  },
  "a URN the stack holds already, --choose: the chosen object superseded": {
    lookups: [
      {
        ...found("a", [
          { guid: "o1", createdAt: at(5) },
          { guid: "o2", createdAt: at(6) },
        ]),
        heldAs: "kept",
      },
    ],
    held: ["kept"],
    choices: [[urn("a"), "o2"]],
    expected: { a: ["superseded", "o2", ["o2"]] },
  },
  "a lookup that failed: unsettled": {
    lookups: [{ urn: urn("a"), kind: "App", found: { failure: "its lookup failed: 503" } }],
    expected: { a: ["unsettled", undefined, []] },
  },
};

describe("planRecovery", () => {
  it.each(Object.entries(cases))("%s", (_name, row) => {
    const plans = planRecovery({ lookups: row.lookups, heldIds: new Set(row.held ?? []), choices: new Map(row.choices ?? []) });
    const outcome = Object.fromEntries(
      plans.map((plan) => [plan.urn.split("::").at(-1)!, [plan.outcome, plan.id, plan.candidates.map((candidate) => candidate.guid)]]),
    );
    expect(outcome).toEqual(row.expected);
    for (const plan of plans) expect(plan.reason).not.toBe("");
  });

  it("says why a candidate cannot be recorded on its own", () => {
    const [twin, other] = planRecovery({
      lookups: [found("a", [{ guid: "g1", createdAt: at(5) }]), found("b", [{ guid: "g1", createdAt: at(5) }, { guid: "g2" }])],
      heldIds: new Set(),
    });
    expect(twin!.candidates).toEqual([{ guid: "g1", createdAt: at(5), alsoMatches: [urn("b")] }]);
    expect(other!.candidates[1]).toEqual({
      guid: "g2",
      createdAt: null,
      doubt: expect.stringContaining("no creation time for App objects"),
    });
  });
});

describe("planForeign", () => {
  it("settles another package's pending create only by --choose, unchecked", () => {
    const creates = ["x", "y", "z", "w"].map((name) => ({
      urn: `urn:pulumi:dev::p::random:index:RandomId::${name}`,
      type: "random:index:RandomId",
    }));
    const choices = new Map<string, string | null>([
      [creates[1]!.urn, "id-1"],
      [creates[2]!.urn, null],
      [creates[3]!.urn, "held"],
    ]);
    expect(planForeign(creates, new Set(["held"]), choices).map((plan) => [plan.outcome, plan.id])).toEqual([
      ["unsettled", undefined],
      ["recorded", "id-1"],
      ["dropped", undefined],
      ["unsettled", undefined],
    ]);
  });
});
