/**
 * What changed between two Pulumi package schemas (`schema.json`), by kind, and which changes break a user of the
 * older one: a program that no longer compiles or runs, or a stack whose next `up` would replace objects or store a
 * secret in plain text. `npm run schema:compare` (scripts/schema-compare.mts) runs it against the last release's schema.
 *
 * Breaking: a resource, function or object type removed (a renamed resource too: its alias keeps stacks, but programs
 * name the old class); an input or output removed or its type changed; an input made required, or an output made
 * optional (a program may find it unset); a property no longer secret; a new `replaceOnChanges` (a change that updated
 * in place now replaces); a default added or changed (leaving the input out now means another value, a diff on every
 * stack that left it out). Listed, not breaking: what is added, an input made optional, a property made secret, a
 * `replaceOnChanges` dropped, a default dropped, and every deprecation.
 */
import { parseVersion } from "../upgrade/corpus.mts";

/** The kinds of change, in the order they are listed. */
export const CHANGE_KINDS = [
  "resources",
  "functions",
  "types",
  "properties",
  "required",
  "secret",
  "replaceOnChanges",
  "defaults",
  "deprecations",
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export interface SchemaChange {
  kind: ChangeKind;
  /** What changed: a token, with the property's place in it (`gms:index:App input name`). */
  subject: string;
  /** The change, in words. */
  change: string;
  breaking: boolean;
}

interface PropertySpec {
  type?: string;
  items?: unknown;
  additionalProperties?: unknown;
  $ref?: string;
  oneOf?: unknown[];
  secret?: boolean;
  replaceOnChanges?: boolean;
  default?: unknown;
  deprecationMessage?: string;
}
interface ObjectSpec {
  properties?: Record<string, PropertySpec>;
  required?: string[];
}
interface ResourceSpec {
  inputProperties?: Record<string, PropertySpec>;
  requiredInputs?: string[];
  properties?: Record<string, PropertySpec>;
  required?: string[];
  aliases?: { type?: string }[];
  deprecationMessage?: string;
}
interface FunctionSpec {
  inputs?: ObjectSpec;
  outputs?: ObjectSpec & PropertySpec;
  deprecationMessage?: string;
}
export interface PackageSchema {
  version?: string;
  config?: { variables?: Record<string, PropertySpec>; required?: string[] };
  provider?: { inputProperties?: Record<string, PropertySpec>; requiredInputs?: string[] };
  resources?: Record<string, ResourceSpec>;
  functions?: Record<string, FunctionSpec>;
  types?: Record<string, ObjectSpec & { deprecationMessage?: string }>;
}

/** Whether a property is read by programs (an output), written by them (an input), or both (an object type's). */
type Role = "input" | "output" | "both";

/** The parts of a property spec that make its type, in a canonical text (object keys sorted at every depth). */
const typeOf = (spec: PropertySpec | undefined): string => {
  if (!spec) return "none";
  const { type, items, additionalProperties, $ref, oneOf } = spec;
  return JSON.stringify({ type, items, additionalProperties, $ref, oneOf }, (_key, value: unknown) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
};
const shortType = (spec: PropertySpec): string =>
  spec.$ref?.replace(/^#\/types\//, "") ?? (spec.type === "array" ? "array" : spec.oneOf ? "one of several types" : (spec.type ?? "any"));

class Changes {
  readonly list: SchemaChange[] = [];
  add(kind: ChangeKind, subject: string, change: string, breaking: boolean): void {
    this.list.push({ kind, subject, change, breaking });
  }

  /** Two maps of properties of one thing: what was removed, added, retyped, and each flag that changed. */
  properties(
    subject: string,
    place: string,
    role: Role,
    olds: Record<string, PropertySpec> = {},
    news: Record<string, PropertySpec> = {},
  ): void {
    for (const [name, old] of Object.entries(olds)) {
      const at = `${subject} ${place} ${name}`;
      const next = news[name];
      if (!next) {
        this.add("properties", at, "removed", true);
        continue;
      }
      if (typeOf(old) !== typeOf(next)) this.add("properties", at, `type ${shortType(old)} changed to ${shortType(next)}`, true);
      if (old.secret && !next.secret) this.add("secret", at, "no longer secret: its values would be stored in plain text", true);
      if (!old.secret && next.secret) this.add("secret", at, "now secret", false);
      if (!old.replaceOnChanges && next.replaceOnChanges)
        this.add("replaceOnChanges", at, "a change now replaces the object (it updated in place)", true);
      if (old.replaceOnChanges && !next.replaceOnChanges) this.add("replaceOnChanges", at, "a change now updates in place", false);
      if (JSON.stringify(old.default) !== JSON.stringify(next.default)) {
        if (next.default === undefined) this.add("defaults", at, `default ${JSON.stringify(old.default)} dropped`, false);
        else
          this.add(
            "defaults",
            at,
            `default ${old.default === undefined ? "added" : `${JSON.stringify(old.default)} changed to`} ${JSON.stringify(next.default)}`,
            true,
          );
      }
      this.deprecation(at, old.deprecationMessage, next.deprecationMessage);
    }
    for (const [name, next] of Object.entries(news)) {
      if (olds[name]) continue;
      this.add("properties", `${subject} ${place} ${name}`, `added (${role === "output" ? "an output" : shortType(next)})`, false);
      this.deprecation(`${subject} ${place} ${name}`, undefined, next.deprecationMessage);
    }
  }

  /** Two required lists: an input made required breaks a program that leaves it out, an output made optional one that reads it. */
  required(subject: string, place: string, role: Role, olds: string[] = [], news: string[] = []): void {
    for (const name of news.filter((name) => !olds.includes(name)))
      this.add("required", `${subject} ${place} ${name}`, "now required", role !== "output");
    for (const name of olds.filter((name) => !news.includes(name)))
      this.add(
        "required",
        `${subject} ${place} ${name}`,
        role === "input" ? "no longer required" : "no longer always set",
        role !== "input",
      );
  }

  deprecation(subject: string, old: string | undefined, next: string | undefined): void {
    if (old === next) return;
    if (next === undefined) this.add("deprecations", subject, "no longer deprecated", false);
    else this.add("deprecations", subject, `${old === undefined ? "deprecated" : "deprecation reworded"}: ${next}`, false);
  }
}

/** What to say of each token of one section (resources, functions, types): removed, in both, added. */
interface Section<T> {
  removed(token: string): void;
  both(token: string, was: T, now: T): void;
  added(token: string, now: T): void;
}

function eachToken<T>(olds: Record<string, T> = {}, news: Record<string, T> = {}, section: Section<T>): void {
  for (const [token, was] of Object.entries(olds)) {
    const now = news[token];
    if (now) section.both(token, was, now);
    else section.removed(token);
  }
  for (const [token, now] of Object.entries(news)) if (!olds[token]) section.added(token, now);
}

/** Every change from `old` to `next`, by kind in CHANGE_KINDS order, then by subject. */
export function compareSchemas(old: PackageSchema, next: PackageSchema): SchemaChange[] {
  const changes = new Changes();
  changes.properties("config", "variable", "input", old.config?.variables, next.config?.variables);
  changes.required("config", "variable", "input", old.config?.required, next.config?.required);
  changes.properties("provider", "input", "input", old.provider?.inputProperties, next.provider?.inputProperties);
  changes.required("provider", "input", "input", old.provider?.requiredInputs, next.provider?.requiredInputs);

  eachToken(old.resources, next.resources, {
    removed(token) {
      const renamed = Object.entries(next.resources ?? {}).find(([, spec]) => spec.aliases?.some((alias) => alias.type === token))?.[0];
      const change = renamed
        ? `renamed to ${renamed}: its alias keeps the stacks' objects, but a program that names ${token} fails`
        : "removed: a program that declares it fails, and a stack that holds one cannot manage it";
      changes.add("resources", token, change, true);
    },
    both(token, was, now) {
      changes.properties(token, "input", "input", was.inputProperties, now.inputProperties);
      changes.required(token, "input", "input", was.requiredInputs, now.requiredInputs);
      changes.properties(token, "output", "output", onlyOutputs(was), onlyOutputs(now));
      changes.required(token, "output", "output", was.required, now.required);
      changes.deprecation(token, was.deprecationMessage, now.deprecationMessage);
    },
    added(token, now) {
      const aliases = (now.aliases ?? []).flatMap((alias) => (alias.type ? [alias.type] : []));
      changes.add("resources", token, aliases.length > 0 ? `added, with the alias ${aliases.join(", ")}` : "added", false);
      changes.deprecation(token, undefined, now.deprecationMessage);
    },
  });

  eachToken(old.functions, next.functions, {
    removed: (token) => changes.add("functions", token, "removed: a program that calls it fails", true),
    both(token, was, now) {
      changes.properties(token, "argument", "input", was.inputs?.properties, now.inputs?.properties);
      changes.required(token, "argument", "input", was.inputs?.required, now.inputs?.required);
      if (was.outputs?.properties || now.outputs?.properties) {
        changes.properties(token, "result", "output", was.outputs?.properties, now.outputs?.properties);
        changes.required(token, "result", "output", was.outputs?.required, now.outputs?.required);
      } else if (typeOf(was.outputs) !== typeOf(now.outputs)) {
        changes.add(
          "properties",
          `${token} result`,
          `type ${shortType(was.outputs ?? {})} changed to ${shortType(now.outputs ?? {})}`,
          true,
        );
      }
      changes.deprecation(token, was.deprecationMessage, now.deprecationMessage);
    },
    added: (token) => changes.add("functions", token, "added", false),
  });

  eachToken(old.types, next.types, {
    removed: (token) => changes.add("types", token, "removed: the properties of this type no longer have it", true),
    both(token, was, now) {
      // An object type may be an input and an output both: a property that changes either way breaks one of them.
      changes.properties(token, "property", "both", was.properties, now.properties);
      changes.required(token, "property", "both", was.required, now.required);
      changes.deprecation(token, was.deprecationMessage, now.deprecationMessage);
    },
    added: (token) => changes.add("types", token, "added", false),
  });

  return changes.list.sort(
    (a, b) =>
      CHANGE_KINDS.indexOf(a.kind) - CHANGE_KINDS.indexOf(b.kind) || a.subject.localeCompare(b.subject) || a.change.localeCompare(b.change),
  );
}

/** A resource's outputs of its own: its properties but its inputs (compared as inputs). */
const onlyOutputs = (spec: ResourceSpec): Record<string, PropertySpec> =>
  Object.fromEntries(Object.entries(spec.properties ?? {}).filter(([name]) => !(name in (spec.inputProperties ?? {}))));

/**
 * Whether `next` may break what `released` promised: a new major version, or before 1.0 a new minor one (0.x treats
 * the minor as the major). The reason says which, or what version would.
 */
export function breakingAllowed(released: string, next: string): { allowed: boolean; reason: string } {
  const from = parseVersion(released)?.core;
  const to = parseVersion(next)?.core;
  if (!from || !to) throw new Error(`not a version: ${!from ? released : next}`);
  const [major, minor] = from;
  if (to[0] > major) return { allowed: true, reason: `${next} is a new major version after ${released}` };
  if (major === 0 && to[0] === 0 && to[1] > minor)
    return { allowed: true, reason: `${next} is a new minor version of 0.x after ${released}, which may break before 1.0` };
  const wanted = major === 0 ? `0.${minor + 1}.0` : `${major + 1}.0.0`;
  return {
    allowed: false,
    reason:
      `${next} keeps ${major === 0 ? `0.${minor}` : `${major}.x`}: a breaking change needs ${wanted} ` +
      `(\`npm version ${wanted}\`), a deprecation first, or the change undone`,
  };
}

/** The changes as lines, grouped by kind, breaking ones marked. */
export function renderChanges(changes: SchemaChange[]): string[] {
  const lines: string[] = [];
  for (const kind of CHANGE_KINDS) {
    const ofKind = changes.filter((change) => change.kind === kind);
    if (ofKind.length === 0) continue;
    lines.push(`${kind} (${ofKind.length}):`);
    for (const change of ofKind) lines.push(`  ${change.breaking ? "BREAKING " : ""}${change.subject}: ${change.change}`);
  }
  return lines;
}
