/**
 * The program that adopts what discover found (`pulumi-gms discover --language`): every resource of the import
 * document declared with the `import` resource option and the inputs the service shows, so that the first `up`
 * imports each object and changes nothing, and a preview after it finds no change.
 *
 * The program is written once as Pulumi YAML, like the project's examples, and converted into TypeScript, Python or
 * Go by the examples' own converter (./convert.ts). Its inputs are what the plugin's read answers when `pulumi import`
 * reads the object (the fields the service returns), values equal to a field's default left out. A GUID that names
 * another adopted object becomes a reference to it (`${name.id}`), so that the program keeps the link and the order.
 * A key the service never returns is read from a secret config value the program declares (discover names its key
 * and the `pulumi config set --secret` line); any other value the service never returns is written when the workspace
 * shows it (a connection's type), else left out, which the object keeps (the summary's notes say so).
 */
import type { GmsClient } from "../client";
import { NotFoundError } from "../client";
import type { InputField } from "../provider/fields";
import { COMMON_INPUTS, type KindName } from "../provider/kind";
import { nameOfNativeToken } from "../provider/tokens";
import { sameValue } from "../provider/values";
import { kinds } from "../resources";
import type { Discovery, ImportEntry } from "./plan";

/** The inputs the service shows of each object to adopt, by GUID: the fields the plugin's read of an import returns. */
export type LiveInputs = Map<string, Record<string, unknown>>;

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
      for (const [name, field] of inputFields(kind)) if (!field.writeOnly && record[name] !== undefined) inputs[name] = record[name];
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

/**
 * The YAML program (Pulumi.yaml) that adopts the discovery's resources: its project `name`, `runtime: yaml`, a secret
 * config value for each key, and each resource with `options.import`. Its order is the import document's.
 */
export function adoptionProgram(discovery: Discovery, live: LiveInputs, projectName: string): Record<string, unknown> {
  const nameOf = new Map(discovery.document.resources.map((entry) => [entry.id, entry.name]));
  const value = (input: unknown): unknown => {
    if (typeof input === "string") return nameOf.has(input) ? `\${${nameOf.get(input)}.id}` : literal(input);
    if (Array.isArray(input)) return input.map(value);
    if (input !== null && typeof input === "object")
      return Object.fromEntries(Object.entries(input).map(([key, inner]) => [key, value(inner)]));
    return input;
  };
  const keyOf = new Map(discovery.configKeys.map((key) => [`${key.resource}.${key.property}`, key.configKey]));
  const resources = Object.fromEntries(
    discovery.document.resources.map((entry) => {
      const kind = kindOfToken(entry.type);
      const shown = { ...live.get(entry.id), ...entry.inputs };
      const properties: Record<string, unknown> = {};
      for (const [name, field] of inputFields(kind)) {
        const configKey = keyOf.get(`${entry.name}.${name}`);
        if (configKey !== undefined) properties[name] = `\${${configKey}}`;
        else if (shown[name] !== undefined && !isDefault(field, shown[name])) properties[name] = value(shown[name]);
      }
      return [entry.name, { type: entry.type, properties, options: { import: entry.id } }];
    }),
  );
  return {
    name: projectName,
    description: `Adopts the objects of the workspace "${literal(discovery.workspace.name)}" (${discovery.workspace.guid})`,
    runtime: "yaml",
    ...(discovery.configKeys.length > 0
      ? { config: Object.fromEntries(discovery.configKeys.map((key) => [key.configKey, { type: "string", secret: true }])) }
      : {}),
    resources,
  };
}
