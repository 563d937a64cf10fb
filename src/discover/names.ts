/**
 * The Pulumi resource names discover gives the objects it lists: derived from each object's own name, unique across
 * the whole import (every name of a program shares one namespace: YAML's `${name}`, a variable in code), and a
 * function of the workspace's objects alone, so that two runs over the same workspace name everything the same.
 *
 * A name is the object's name as a slug of lowercase letters, digits and underscores that starts with a letter:
 * underscores, not dashes, because the code `pulumi import` writes refers to a resource by its name
 * (`${customer_support.id}`), and a dash there is no identifier (YAML then writes `${["customer-support"].id}`).
 * Objects whose slugs are the same (twins of one name, of one kind or of several) are told apart by their kind when
 * the kinds differ, and by the first 8 hexadecimal digits of their GUID within one kind: `support_app`,
 * `support_dataset`, `golden_3f2a9c01`. A name the stack already uses for something else gets the GUID digits too.
 */
import type { KindName } from "../resources";

/** Long enough for any real name, short enough to read in a URN. */
const MAX_SLUG = 48;

/** `ContextSource` → `context_source`. */
export const kindSlug = (kind: KindName): string => kind.replace(/(?<=[a-z])(?=[A-Z])/g, "_").toLowerCase();

/** `Customer Support (EU)` → `customer_support_eu`; letters lose their accents, anything else becomes one underscore. */
export const slugOf = (text: string): string =>
  text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, MAX_SLUG)
    .replace(/_+$/, "");

/** The slug of an object's name, starting with a letter: the kind's slug stands before one that would not (or for none). */
export function baseName(kind: KindName, name: string): string {
  const slug = slugOf(name);
  if (slug === "") return kindSlug(kind);
  return /^[a-z]/.test(slug) ? slug : `${kindSlug(kind)}_${slug}`;
}

const guidDigits = (guid: string, count: number) => guid.replace(/-/g, "").toLowerCase().slice(0, count);

export interface Nameable {
  kind: KindName;
  guid: string;
  name: string;
}

/**
 * A unique name for each object, by GUID (see the top of this file). `taken` holds the names already used in the
 * stack the import goes into, by the GUID of the object they stand for (undefined for anything else).
 */
export function assignNames(objects: readonly Nameable[], taken: ReadonlyMap<string, string | undefined> = new Map()): Map<string, string> {
  const bases = new Map(objects.map((object) => [object.guid, baseName(object.kind, object.name)]));
  const groups = new Map<string, Nameable[]>();
  for (const object of objects) {
    const base = bases.get(object.guid)!;
    groups.set(base, [...(groups.get(base) ?? []), object]);
  }
  const names = new Map<string, string>();
  for (const [base, group] of groups) {
    const perKind = new Map<KindName, number>();
    for (const { kind } of group) perKind.set(kind, (perKind.get(kind) ?? 0) + 1);
    for (const object of group) {
      const parts = [base];
      if (perKind.size > 1) parts.push(kindSlug(object.kind));
      const name = parts.join("_");
      const takenByAnother = taken.has(name) && taken.get(name) !== object.guid;
      if (perKind.get(object.kind)! > 1 || takenByAnother) parts.push(guidDigits(object.guid, 8));
      names.set(object.guid, parts.join("_"));
    }
  }
  // Two names can still meet (an object named like another's disambiguated name, GUIDs sharing their first digits):
  // those take the kind and the whole GUID, which no other object has.
  const uses = new Map<string, number>();
  for (const name of [...names.values(), ...taken.keys()]) uses.set(name, (uses.get(name) ?? 0) + 1);
  for (const object of objects) {
    const name = names.get(object.guid)!;
    if (uses.get(name)! > 1 && taken.get(name) !== object.guid)
      names.set(object.guid, `${bases.get(object.guid)}_${kindSlug(object.kind)}_${guidDigits(object.guid, 32)}`);
  }
  return names;
}
