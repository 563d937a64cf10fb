/**
 * The names a kind's field declaration marks, read from it once per kind: the parameters the provider core
 * (./provider.ts) and both forms take (the dynamic resource class, the plugin's router), instead of each asking the
 * fields again.
 */
import type { Kind } from "./kind";

export interface FieldNames {
  /** The inputs declared secret (a key): their values are blanked from every message the provider passes on. */
  secretInputs: readonly string[];
  /**
   * What the engine always holds as secret, whatever the program passed: the secret inputs, `connection` (it holds
   * an API key) and the outputs declared secret.
   */
  alwaysSecret: readonly string[];
  /** The inputs the service never returns (a key): what state holds of them is the program's value. */
  writeOnly: readonly string[];
}

const computed = new WeakMap<Kind, FieldNames>();

/** The names of the fields `marked` says yes to. */
const namesOf = <F>(fields: Record<string, F>, marked: (field: F) => boolean): string[] =>
  Object.entries(fields)
    .filter(([, field]) => marked(field))
    .map(([name]) => name);

export function fieldNames(kind: Kind): FieldNames {
  let names = computed.get(kind);
  if (!names) {
    const secretInputs = namesOf(kind.inputs, (field) => field.secret);
    names = {
      secretInputs,
      alwaysSecret: [...secretInputs, "connection", ...namesOf(kind.outputs, (field) => field.secret)],
      writeOnly: namesOf(kind.inputs, (field) => field.writeOnly),
    };
    computed.set(kind, names);
  }
  return names;
}
