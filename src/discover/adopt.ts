/**
 * The program that adopts what discover found (`pulumi-gms discover --language`, and each program of `--split-by
 * app`): every resource declared with the `import` resource option and the inputs the service shows, so that the first
 * `up` imports each object and changes nothing, and a preview after it finds no change.
 *
 * The program is written once as Pulumi YAML, like the project's examples, and converted into TypeScript, Python or
 * Go by the examples' own converter (./convert.ts). Its inputs are what the plugin's read answers when `pulumi import`
 * reads the object (the fields the service returns), values equal to a field's default left out. A GUID that names
 * another object of the program becomes a reference to it (`${name.id}`), so that the program keeps the link and the
 * order; one that names an object of the shared project (`--split-by app`) reads the shared stack's output; one that
 * names an object the program does not adopt (left out, or another App's) stays the GUID, with a warning naming it.
 * A key the service never returns is read from a secret config value the program declares (discover names its key
 * and the `pulumi config set --secret` line); any other value the service never returns is written when the workspace
 * shows it (a connection's type), else left out, which the object keeps (the summary's notes say so). A YAML program,
 * which has no SDK to say which plugin it needs, names the plugin's version and where it is released in the options of
 * its first resource, as docs/yaml.md does.
 */
import type { GmsClient } from "../client";
import { NotFoundError } from "../client";
import { fieldNames } from "../provider/field-names";
import type { InputField } from "../provider/fields";
import { COMMON_INPUTS } from "../provider/kind";
import { type KindName, kinds } from "../resources";
import { nameOfNativeToken, nativeToken } from "../provider/tokens";
import { sameValue } from "../provider/values";
import type { ConfigKey, ImportEntry, LiveInputs } from "./plan";
import { exportKey, SHARED_STACK_RESOURCE } from "./split";

const kindOfToken = (type: string): KindName => nameOfNativeToken(type) as KindName;

const inputFields = (kind: KindName): [string, InputField][] =>
  Object.entries(kinds[kind].inputs as Record<string, InputField>).filter(([name]) => !(COMMON_INPUTS as readonly string[]).includes(name));

/** Reads every object of the import document, a few at a time; an object gone since the listing is an error naming it. */
export async function readLiveInputs(client: GmsClient, resources: readonly ImportEntry[]): Promise<LiveInputs> {
  const live: LiveInputs = new Map();
  const queue = [...resources];
  const worker = async () => {
    for (let entry = queue.shift(); entry; entry = queue.shift()) {
      const kind = kindOfToken(entry.type);
      let record: Record<string, unknown>;
      try {
        record = await kinds[kind].read(client, entry.id, {});
      } catch (error) {
        if (error instanceof NotFoundError)
          throw new Error(`${kind} ${entry.id} (${entry.name}) was deleted while discover ran: run discover again`);
        throw error;
      }
      const inputs: Record<string, unknown> = {};
      const { writeOnly } = fieldNames(kinds[kind]);
      for (const [name] of inputFields(kind)) if (!writeOnly.includes(name) && record[name] !== undefined) inputs[name] = record[name];
      live.set(entry.id, inputs);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return live;
}

/** Pulumi YAML reads `${` as the start of an interpolation and `$$` as one `$`: every literal `$` is written `$$`. */
const literal = (text: string) => text.replaceAll("$", () => "$$");

/** Is `value` the field's default, which the plugin's check fills in when the program leaves the field out? */
const isDefault = (field: InputField, value: unknown) => Object.hasOwn(field, "default") && sameValue(field.default, value);

/** An object of the workspace that a program does not adopt, and why: a value naming it is written as its GUID. */
export interface Elsewhere {
  /** What it is, for the warning: `App "Billing"`. */
  label: string;
  why: string;
}

/** A value written as a plain GUID because the object it names is not adopted by the program: each is a warning. */
export interface PlainReference {
  /** The resource, and its property, whose value it is. */
  resource: string;
  type: string;
  property: string;
  guid: string;
  /** The object it names, and why the program does not adopt it. */
  target: string;
  why: string;
}

/** What one program adopts, and what it knows of the rest of the workspace. */
export interface ProgramPlan {
  projectName: string;
  description: string;
  resources: readonly ImportEntry[];
  configKeys: readonly ConfigKey[];
  /** The objects it does not adopt, by GUID (left out, or adopted by another project). */
  elsewhere: ReadonlyMap<string, Elsewhere>;
  /**
   * `--split-by app`: the shared project whose outputs this program reads (an App's project), with what it adopts by
   * GUID; and the project's per-kind exports of resource name to GUID (see ./split.ts).
   */
  split?: { shared?: { project: string; entries: ReadonlyMap<string, ImportEntry> }; exports: readonly KindName[] };
  /** Pulumi YAML: the plugin's version and where it is released, on the first resource, for the engine to fetch it. */
  plugin?: { version: string; pluginDownloadURL: string };
}

export interface AdoptionProgram {
  /** The Pulumi.yaml's content. */
  program: Record<string, unknown>;
  plain: PlainReference[];
  /** The properties (`<resource>.<property>`) whose value reads the shared stack's outputs. */
  sharedReads: string[];
}

/** A reference from a program to an object that the shared stack exports. */
const sharedOutput = (entry: ImportEntry) =>
  `\${${SHARED_STACK_RESOURCE}.outputs["${exportKey(kindOfToken(entry.type))}"]["${entry.name}"]}`;

/**
 * The YAML program (Pulumi.yaml) that adopts `plan.resources`: its project `name`, `runtime: yaml`, a secret config value
 * for each key, and each resource with `options.import`, in the plan's order. A GUID that names another of its objects
 * is a reference to it; one that names an object of the shared project reads the shared stack's output; one that names
 * any other object of the workspace stays the GUID, and is returned among `plain`.
 */
export function adoptionProgram(plan: ProgramPlan, live: LiveInputs): AdoptionProgram {
  const local = new Map(plan.resources.map((entry) => [entry.id, entry.name]));
  const plain: PlainReference[] = [];
  const sharedReads: string[] = [];
  const value = (input: unknown, entry: ImportEntry, property: string): unknown => {
    if (typeof input === "string") {
      if (local.has(input)) return `\${${local.get(input)}.id}`;
      const shared = plan.split?.shared?.entries.get(input);
      if (shared) {
        sharedReads.push(`${entry.name}.${property}`);
        return sharedOutput(shared);
      }
      const elsewhere = plan.elsewhere.get(input);
      if (elsewhere)
        plain.push({ resource: entry.name, type: entry.type, property, guid: input, target: elsewhere.label, why: elsewhere.why });
      return literal(input);
    }
    if (Array.isArray(input)) return input.map((inner) => value(inner, entry, property));
    if (input !== null && typeof input === "object")
      return Object.fromEntries(Object.entries(input).map(([key, inner]) => [key, value(inner, entry, property)]));
    return input;
  };
  const keyOf = new Map(plan.configKeys.map((key) => [`${key.resource}.${key.property}`, key.configKey]));
  const resources: Record<string, unknown> = {};
  if (plan.split?.shared)
    resources[SHARED_STACK_RESOURCE] = {
      type: "pulumi:pulumi:StackReference",
      properties: { name: `\${pulumi.organization}/${plan.split.shared.project}/\${pulumi.stack}` },
    };
  for (const [index, entry] of plan.resources.entries()) {
    const kind = kindOfToken(entry.type);
    const shown = { ...live.get(entry.id), ...entry.inputs };
    const properties: Record<string, unknown> = {};
    for (const [name, field] of inputFields(kind)) {
      const configKey = keyOf.get(`${entry.name}.${name}`);
      if (configKey !== undefined) properties[name] = `\${${configKey}}`;
      else if (shown[name] !== undefined && !isDefault(field, shown[name])) properties[name] = value(shown[name], entry, name);
    }
    const plugin = index === 0 && plan.plugin ? plan.plugin : {};
    resources[entry.name] = { type: entry.type, properties, options: { ...plugin, import: entry.id } };
  }
  const exported = plan.split?.exports.map((kind) => [
    exportKey(kind),
    Object.fromEntries(
      plan.resources.filter((entry) => entry.type === nativeToken(kind)).map((entry) => [entry.name, `\${${entry.name}.id}`]),
    ),
  ]);
  const program = {
    name: plan.projectName,
    description: literal(plan.description),
    runtime: "yaml",
    ...(plan.configKeys.length > 0
      ? { config: Object.fromEntries(plan.configKeys.map((key) => [key.configKey, { type: "string", secret: true }])) }
      : {}),
    resources,
    ...(exported ? { outputs: Object.fromEntries(exported) } : {}),
  };
  return { program, plain, sharedReads };
}
