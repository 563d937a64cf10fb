/**
 * What `pulumi-gms recover` decides for each pending create of a gms resource, as data: a pure function of what
 * the kind's own lookup (`findCreated`, the lost-create lookup the provider uses) found, which ids the stack's
 * resources hold, and what the user chose with `--choose`, so that a table test can check every rule.
 *
 * A create's candidates are the lookup's matches that no resource of the stack holds and that the service made
 * since the interrupted update began (when recover knows that moment: see ./window.ts; for a record with no
 * creation time, when the kind bounds its age by a record that has one, such as a Dataset's App). Then:
 * - one candidate, told apart from older objects (a creation time in the window, no doubt the kind raises) and
 *   matched by no other pending create: `recorded`, under that id;
 * - none: `dropped` (the create made nothing; the next `pulumi up` makes it);
 * - several, one that cannot be told apart (no creation time, or a kind's doubt), or one that another pending create
 *   matches too (twins of one identity: the provider sends them one at a time, so it is not known which one's POST
 *   made it): `ambiguous`, and nothing is guessed. `--choose URN=GUID` records the user's pick among the candidates,
 *   `--choose URN=none` drops the create; a chosen object is no other create's candidate;
 * - the URN is held already (a later `pulumi up` made it again, or the create was a replacement's): the resource the
 *   stack holds stays, and the one candidate, as certain as above, is `superseded`: recorded as pending deletion, which
 *   the next `pulumi up` deletes (after the steps of the resources that use what the stack holds, as any replaced
 *   object); none is `dropped`, several `ambiguous`;
 * - the lookup could not be made (no credentials, the service unreachable) or the choice names no candidate: `unsettled`.
 */
import type { KindName } from "../resources";

/** An object a kind's lookup found (its GUID, creation time when the service reports one, and the kind's doubt). */
export interface Match {
  guid: string;
  createdAt?: string | null | undefined;
  /** Without a creation time: a moment the object cannot be older than, when the kind knows one. */
  notBefore?: string | undefined;
  doubt?: string | undefined;
}

/** One pending create of a gms resource, with what its kind's lookup found. */
export interface PendingLookup {
  urn: string;
  kind: KindName;
  /** The id of the stack's resource that has this URN already, if one has. */
  heldAs?: string | undefined;
  /**
   * The matches, and the moment the interrupted update began on the service's clock (ms), below which an object is
   * older than it (undefined when recover does not know the moment); or why the lookup could not be made.
   */
  found: { matches: Match[]; since?: number | undefined } | { failure: string };
}

export type Outcome = "recorded" | "dropped" | "ambiguous" | "superseded" | "unsettled";

/** A candidate as the plan names it: why it cannot be recorded on its own, when it cannot. */
export interface Candidate {
  guid: string;
  createdAt: string | null;
  /** Why nothing tells it apart from objects the create did not make. */
  doubt?: string;
  /** Other pending creates it matches too. */
  alsoMatches?: string[];
}

export interface CreatePlan {
  urn: string;
  kind: KindName;
  outcome: Outcome;
  /** `recorded`: the object's GUID; `superseded`: the GUID of the object recorded for deletion. */
  id?: string;
  /** Every candidate (for `recorded`, the one recorded). */
  candidates: Candidate[];
  /** Why, in a sentence. */
  reason: string;
}

export interface PlanInput {
  lookups: readonly PendingLookup[];
  /** Every id the stack's resources hold. */
  heldIds: ReadonlySet<string>;
  /** `--choose`: by URN, the GUID the user says the create made, or null for none. */
  choices?: ReadonlyMap<string, string | null>;
}

const parsed = (time: string | null | undefined): number | undefined => {
  const ms = time ? Date.parse(time) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
};
const timeOf = (match: Match): number | undefined => parsed(match.createdAt);

/** The matches that may be this create's object: held by no resource, and not older than the interrupted update. */
function candidatesOf(lookup: PendingLookup, matches: Match[], since: number | undefined, held: ReadonlySet<string>): Candidate[] {
  return matches
    .filter((match) => !held.has(match.guid))
    .filter((match) => {
      const created = timeOf(match);
      return since === undefined || created === undefined || created >= since;
    })
    .map((match) => {
      const candidate: Candidate = { guid: match.guid, createdAt: match.createdAt ?? null };
      const notBefore = parsed(match.notBefore);
      if (match.doubt) candidate.doubt = match.doubt;
      else if (since !== undefined && timeOf(match) === undefined && !(notBefore !== undefined && notBefore >= since))
        candidate.doubt = `the service reports no creation time for ${lookup.kind} objects, so nothing tells whether the interrupted update made it`;
      return candidate;
    });
}

/** The plan of every pending create, in the order given. */
export function planRecovery(input: PlanInput): CreatePlan[] {
  const choices = input.choices ?? new Map<string, string | null>();
  const chosenGuids = [...choices.values()].filter((guid): guid is string => guid !== null);
  const entries = input.lookups.map((lookup) => {
    if ("failure" in lookup.found) return { lookup, candidates: [] as Candidate[], failure: lookup.found.failure };
    return { lookup, candidates: candidatesOf(lookup, lookup.found.matches, lookup.found.since, input.heldIds), failure: undefined };
  });
  // Who else each candidate matches: only creates that are still to be settled by their matches compete for it.
  const competing = entries.filter(({ lookup, failure }) => failure === undefined && !choices.has(lookup.urn));
  const matchedBy = new Map<string, string[]>();
  for (const { lookup, candidates } of competing)
    for (const { guid } of candidates) if (!chosenGuids.includes(guid)) matchedBy.set(guid, [...(matchedBy.get(guid) ?? []), lookup.urn]);

  return entries.map(({ lookup, candidates, failure }): CreatePlan => {
    const base = { urn: lookup.urn, kind: lookup.kind };
    if (failure !== undefined) return { ...base, outcome: "unsettled", candidates: [], reason: failure };
    if (choices.has(lookup.urn)) return chosen(base, candidates, choices.get(lookup.urn)!, chosenGuids, lookup, input.heldIds);
    const mine = candidates
      .filter((candidate) => !chosenGuids.includes(candidate.guid))
      .map((candidate) => {
        const others = (matchedBy.get(candidate.guid) ?? []).filter((urn) => urn !== lookup.urn);
        return others.length > 0 ? { ...candidate, alsoMatches: others } : candidate;
      });
    const held = lookup.heldAs === undefined ? "" : `the stack holds ${lookup.urn} already (as ${lookup.heldAs}) and keeps it; `;
    if (mine.length === 0) {
      const none = candidates.length === 0 ? "no object of it exists" : "the objects that match it are chosen for other resources";
      return { ...base, outcome: "dropped", candidates: [], reason: `${held}${none}: the create made nothing` };
    }
    const [only] = mine;
    if (mine.length === 1 && only && !only.doubt && !only.alsoMatches && lookup.heldAs !== undefined) {
      return {
        ...base,
        outcome: "superseded",
        id: only.guid,
        candidates: mine,
        reason: `${held}the one object its create made is recorded as pending deletion: the next \`pulumi up\` deletes it`,
      };
    }
    if (mine.length === 1 && only && !only.doubt && !only.alsoMatches) {
      const since = "matches" in lookup.found && lookup.found.since !== undefined;
      return {
        ...base,
        outcome: "recorded",
        id: only.guid,
        candidates: mine,
        reason: since
          ? "the one object of its kind and identifying fields made during the interrupted update that no resource holds"
          : "the one object of its kind and identifying fields that no resource holds (when the update began is not known)",
      };
    }
    const why =
      mine.length > 1
        ? `${mine.length} objects match its create`
        : only?.alsoMatches
          ? `the object that matches it matches ${only.alsoMatches.join(", ")} too`
          : "the one object that matches it cannot be told apart from older ones";
    return { ...base, outcome: "ambiguous", candidates: mine, reason: `${held}${why}: which one (if any) the create made is not known` };
  });
}

/** The plan of a create the user settled with `--choose`. */
function chosen(
  base: { urn: string; kind: KindName },
  candidates: Candidate[],
  choice: string | null,
  chosenGuids: string[],
  lookup: PendingLookup,
  held: ReadonlySet<string>,
): CreatePlan {
  if (choice === null) return { ...base, outcome: "dropped", candidates, reason: "--choose says the create made none of them" };
  const unsettled = (reason: string): CreatePlan => ({ ...base, outcome: "unsettled", candidates, reason });
  if (chosenGuids.filter((guid) => guid === choice).length > 1) return unsettled(`--choose gives ${choice} to more than one resource`);
  if (held.has(choice)) return unsettled(`--choose names ${choice}, which a resource of the stack holds already`);
  // The user may know better than the window: an older match held by no resource is theirs to pick.
  const match = "matches" in lookup.found ? lookup.found.matches.find((each) => each.guid === choice) : undefined;
  if (!match) return unsettled(`--choose names ${choice}, which is no ${lookup.kind} that matches this create`);
  const candidate = candidates.find((each) => each.guid === choice) ?? { guid: choice, createdAt: match.createdAt ?? null };
  const older = candidates.includes(candidate) ? "" : ", though made before the interrupted update began";
  if (lookup.heldAs !== undefined) {
    return {
      ...base,
      outcome: "superseded",
      id: choice,
      candidates: [candidate],
      reason:
        `the stack holds ${lookup.urn} already (as ${lookup.heldAs}) and keeps it; ` +
        `the object chosen with --choose${older} is recorded as pending deletion`,
    };
  }
  return { ...base, outcome: "recorded", id: choice, candidates: [candidate], reason: `chosen with --choose${older}` };
}

/** A pending create of another package's resource: recover knows no lookup for it, so only `--choose` settles it. */
export interface ForeignPlan {
  urn: string;
  type: string;
  outcome: "recorded" | "dropped" | "unsettled";
  id?: string;
  reason: string;
}

/** The plan of each pending create of another package: the id `--choose` gives it (unchecked: the user's word), none, or unsettled. */
export function planForeign(
  creates: readonly { urn: string; type: string }[],
  heldIds: ReadonlySet<string>,
  choices: ReadonlyMap<string, string | null> = new Map(),
): ForeignPlan[] {
  return creates.map(({ urn, type }): ForeignPlan => {
    const choice = choices.get(urn);
    if (choice === undefined)
      return { urn, type, outcome: "unsettled", reason: `recover knows no lookup for a ${type}: --choose settles it` };
    if (choice === null) return { urn, type, outcome: "dropped", reason: "--choose says the create made nothing" };
    if (heldIds.has(choice))
      return { urn, type, outcome: "unsettled", reason: `--choose names ${choice}, which a resource of the stack holds` };
    return { urn, type, outcome: "recorded", id: choice, reason: "chosen with --choose (its provider's refresh reads it)" };
  });
}
