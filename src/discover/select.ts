/**
 * What a team picks to adopt out of a shared workspace (`--kind`, `--name`, `--exclude`): an object is picked when
 * its kind is one of `--kind` (any kind without it), its name matches one of the `--name` globs (any name without
 * one), and it matches none of the `--exclude` globs. A glob is matched against the whole of the object's own name
 * (what the service calls it: an App's name, a connection's nickname, a Model's llm), ignoring case: `*` stands for
 * any run of characters, `?` for one, anything else for itself.
 */
import { KIND_NAMES, type KindName } from "../resources";
import { nameOfNativeToken } from "../provider/tokens";

export interface Selection {
  /** The kinds to adopt; undefined for every kind. */
  kinds?: readonly KindName[];
  /** `--name` globs: an object's name must match one (none given: any name). */
  names: readonly string[];
  /** `--exclude` globs: an object whose name matches one is left out. */
  excludes: readonly string[];
}

/** A `--kind` value that names no kind: its message names the value and the kinds there are. */
export class SelectionError extends Error {
  override readonly name = "SelectionError";
}

/** The kind a `--kind` value names: a kind's name in any case (`app`, `ContextSource`) or its type token (`gms:index:App`). */
function kindNamed(value: string): KindName {
  const name = (nameOfNativeToken(value) ?? value).toLowerCase();
  const kind = KIND_NAMES.find((candidate) => candidate.toLowerCase() === name);
  if (!kind) throw new SelectionError(`--kind ${value} is not a kind: use one of ${KIND_NAMES.join(", ")} (several: --kind App,Workflow)`);
  return kind;
}

/** The selection the flags ask for: each `--kind` value may list several kinds, separated by commas. */
export function selectionOf(flags: { kind?: readonly string[]; name?: readonly string[]; exclude?: readonly string[] }): Selection {
  const kinds = flags.kind?.flatMap((value) => value.split(",")).map((value) => kindNamed(value.trim()));
  for (const [flag, globs] of [
    ["name", flags.name],
    ["exclude", flags.exclude],
  ] as const)
    if (globs?.some((glob) => glob === "")) throw new SelectionError(`--${flag} needs a glob, for example --${flag} 'billing*'`);
  return { ...(kinds ? { kinds: [...new Set(kinds)] } : {}), names: flags.name ?? [], excludes: flags.exclude ?? [] };
}

/** Whether the selection picks everything (no flag given). */
export const picksAll = (selection: Selection): boolean =>
  selection.kinds === undefined && selection.names.length === 0 && selection.excludes.length === 0;

const globPattern = (glob: string): RegExp =>
  new RegExp(
    `^${[...glob].map((char) => (char === "*" ? "[\\s\\S]*" : char === "?" ? "[\\s\\S]" : char.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("")}$`,
    "iu",
  );

/** Why the selection leaves an object out, in the words of the flag that does; undefined when it picks the object. */
export function leftOutBy(selection: Selection, object: { kind: KindName; name: string }): string | undefined {
  if (selection.kinds && !selection.kinds.includes(object.kind)) return `not of --kind ${selection.kinds.join(",")}`;
  if (selection.names.length > 0 && !selection.names.some((glob) => globPattern(glob).test(object.name)))
    return `its name matches no --name (${selection.names.join(", ")})`;
  const excluded = selection.excludes.find((glob) => globPattern(glob).test(object.name));
  return excluded === undefined ? undefined : `its name matches --exclude ${excluded}`;
}
