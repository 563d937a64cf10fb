/**
 * Two resources of one program that would look alike to the service: the same kind, the same identifying fields
 * (an App's name, a Workflow's App and name, a ProviderConnection's name or nickname, ...) and the same workspace.
 * The service allows such twins (no route refuses a name in use: a second App of a name gets the slug `name-2`, and a
 * Skill's create even takes the name of an existing Skill), and the provider keeps them apart (creates of one identity
 * are sent one at a time, and a lost create never takes an object the stack holds: the chaos suites declare twins and
 * converge), so a program may declare them, in code as in the YAML form (whose children are these same resources);
 * but a lookup by name finds only one of them. Each twin is warned about once, naming both. A value that is an Output
 * (known later) is compared as the Output itself: the same Output (an App's `id` given to two Workflows) is the same
 * value, and two Outputs are never known to be.
 */
import * as pulumi from "@pulumi/pulumi";
import type { Kind } from "./kind";

/** A number for each provider object and each Output compared, the same for the same object. */
const objectIds = new WeakMap<object, number>();
let objects = 0;
const idOf = (object: object): number => {
  if (!objectIds.has(object)) objectIds.set(object, ++objects);
  return objectIds.get(object)!;
};

/** Where a resource's calls go, as far as the program says: its `connection`, or its explicit provider object. */
const whereOf = (args: Record<string, unknown>, provider: unknown): string | undefined => {
  if (provider && typeof provider === "object") return `provider ${idOf(provider)}`;
  const connection = args.connection;
  if (connection === undefined) return "default";
  return pulumi.Output.isInstance(connection) ? undefined : JSON.stringify(connection);
};

/** The first logical name declared with each identity, per kind, fields, workspace and values. */
const seen = new Map<string, string>();

/**
 * Warns (pulumi.log.warn, under `resource`: the CLI shows the warning with it) when an earlier resource of this program
 * already declared this one's identity (see the top of this file); returns the warning, or undefined.
 */
export function warnTwin(
  kind: Pick<Kind, "name" | "identity">,
  name: string,
  args: Record<string, unknown>,
  provider?: unknown,
  resource?: pulumi.Resource,
): string | undefined {
  const where = whereOf(args, provider);
  if (where === undefined) return undefined;
  for (const fields of kind.identity) {
    const values = fields.map((field) => args[field]);
    if (!values.every((value) => (typeof value === "string" && value !== "") || pulumi.Output.isInstance(value))) continue;
    const compared = values.map((value) => (typeof value === "string" ? value : { output: idOf(value as object) }));
    const key = JSON.stringify([kind.name, fields, where, compared]);
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, name);
      continue;
    }
    const described = fields.map((field, index) =>
      typeof values[index] === "string" ? `${field} ${JSON.stringify(values[index])}` : field,
    );
    const warning =
      `${kind.name} "${name}" has the ${described.join(" and ")} of ${kind.name} "${first}" in the same workspace: the service keeps both, ` +
      `but a lookup by ${fields.join(" and ")} finds only one of them. Give one another ${fields.join(" or ")} if that matters.`;
    void pulumi.log.warn(warning, resource);
    return warning;
  }
  return undefined;
}
