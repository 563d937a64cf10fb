/**
 * The values an object needs only to be created, which the service never returns: each kind's required write-only
 * inputs as its declaration marks them (a ProviderConnection's `provider` and `key`, a Model's `key`, a FineTune's
 * `providerConnection`). The code `pulumi import` writes leaves them out and previews with no change (the plugin
 * takes the program's value for a write-only field an import could not read), but a program that has to create the
 * object anew (another stack, a replacement) needs them.
 *
 * `pulumi import` cannot write a reference to config: an import entry's `inputs` are values, which the import stores
 * in state and writes into the generated code as literals (a secret's plaintext included). So a secret (a key) is
 * not put in the import file: discover names a config key for it, with the `pulumi config set --secret` line to run
 * and the line that reads it in the program. A value that is not secret goes into the entry's `inputs` when the
 * workspace shows it elsewhere (a connection's type, in the Models linked to it), and is a note otherwise.
 */
import { fieldNames } from "../provider/field-names";
import type { InputField } from "../provider/fields";
import { type KindName, kinds } from "../resources";
import type { ListedObject } from "./list";

/** A kind's inputs that are required to create it and never returned. */
export const requiredToCreateOnly = (kind: KindName): [string, InputField][] => {
  const inputs: Record<string, InputField> = kinds[kind].inputs;
  return fieldNames(kinds[kind])
    .writeOnly.map((name): [string, InputField] => [name, inputs[name]!])
    .filter(([, field]) => field.required);
};

/** A value of a required write-only input that the workspace shows elsewhere, and what shows it. */
export interface Evident {
  value: unknown;
  shownBy: string;
}

type Evidence = (object: ListedObject, objects: readonly ListedObject[]) => Evident | undefined;

const EVIDENCE: Partial<Record<KindName, Record<string, Evidence>>> = {
  ProviderConnection: {
    // A Model linked to a connection shows the connection's type (`providerName`); taken when they all show one.
    provider: (connection, objects) => {
      const types = new Set(
        objects
          .filter((object) => object.kind === "Model" && object.record.providerGuid === connection.guid)
          .map((model) => model.record.providerName)
          .filter((type) => typeof type === "string" && type !== ""),
      );
      return types.size === 1 ? { value: [...types][0], shownBy: "the Models linked to it show" } : undefined;
    },
  },
};

/** What the workspace shows of `object`'s required write-only input `property`, or undefined. */
export const evidentValue = (object: ListedObject, property: string, objects: readonly ListedObject[]): Evident | undefined =>
  EVIDENCE[object.kind]?.[property]?.(object, objects);

/** `gpt_4o` → `gpt4o`: a resource name in camelCase, the form of a config key. */
const camelCase = (name: string) => name.replace(/_+([a-z0-9])/g, (_, next: string) => next.toUpperCase());
const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * The config key for `property` of each resource, by `<resource>.<property>`: the resource's name in camelCase and
 * the property (`openai` → `openaiKey`), never one of the resources' names, which are lowercase. Keys that would be
 * the same (`gpt_4o` and `gpt4o`) take the first 8 digits of the object's GUID (`gpt4o5e306a16Key`), then all 32.
 */
export function configKeys(wanted: readonly { resource: string; guid: string; property: string }[]): Map<string, string> {
  const keyOf = (want: (typeof wanted)[number], digits: number) =>
    `${camelCase(want.resource)}${want.guid.replace(/-/g, "").slice(0, digits)}${capitalized(want.property)}`;
  const levels = [0, 8, 32];
  const level = wanted.map(() => 0);
  for (;;) {
    const keys = wanted.map((want, index) => keyOf(want, levels[level[index]!]!));
    const uses = new Map<string, number>();
    for (const key of keys) uses.set(key, (uses.get(key) ?? 0) + 1);
    const clashing = keys.flatMap((key, index) => (uses.get(key)! > 1 ? [index] : []));
    if (clashing.length === 0) return new Map(wanted.map((want, index) => [`${want.resource}.${want.property}`, keys[index]!]));
    if (clashing.every((index) => level[index] === levels.length - 1)) throw new Error(`no unique config key for ${keys[clashing[0]!]}`);
    for (const index of clashing) level[index] = Math.min(level[index]! + 1, levels.length - 1);
  }
}
