/**
 * Two resources of one program that would look alike to the service: the same kind, the same identifying fields
 * (an App's name, a Workflow's App and name, a ProviderConnection's name or nickname, ...) and the same workspace.
 * The service allows such twins (a second App of a name gets the slug `name-2`), and the provider keeps them apart
 * (creates of one identity are sent one at a time, and a lost create never takes an object the stack holds: the
 * chaos suites declare twins and converge), so a program may declare them; but a lookup by name finds only one of
 * them, and the YAML form, which refers to objects by name, refuses them. A program in code is warned once per
 * twin, naming both. Values that are Outputs (known later) are not compared.
 */
import * as pulumi from "@pulumi/pulumi";
import type { KindName } from "./kind";

/** The identifying fields of each kind, as the YAML form's `crossCheck` compares them. */
const IDENTITIES: Partial<Record<KindName, string[][]>> = {
  App: [["name"]],
  ProviderConnection: [["name"], ["nickname"]],
  Model: [["provider", "llm"]],
  Workflow: [["app", "name"]],
  Dataset: [["name"]],
  Eval: [["name"]],
  Experiment: [["name"]],
  Skill: [["name"]],
  ContextSource: [["context", "url"]],
  FineTune: [["app", "name"]],
};

/** Where a resource's calls go, as far as the program says: its `connection`, or its explicit provider object. */
const providerIds = new WeakMap<object, number>();
let providers = 0;
const whereOf = (args: Record<string, unknown>, provider: unknown): string | undefined => {
  if (provider && typeof provider === "object") {
    if (!providerIds.has(provider)) providerIds.set(provider, ++providers);
    return `provider ${providerIds.get(provider)}`;
  }
  const connection = args.connection;
  if (connection === undefined) return "default";
  return pulumi.Output.isInstance(connection) ? undefined : JSON.stringify(connection);
};

/** The first logical name declared with each identity, per kind, fields, workspace and values. */
const seen = new Map<string, string>();

/**
 * Warns (pulumi.log.warn) when an earlier resource of this program already declared this one's identity (see the
 * top of this file); returns the warning, or undefined.
 */
export function warnTwin(kind: KindName, name: string, args: Record<string, unknown>, provider?: unknown): string | undefined {
  const where = whereOf(args, provider);
  if (where === undefined) return undefined;
  for (const fields of IDENTITIES[kind] ?? []) {
    const values = fields.map((field) => args[field]);
    if (values.some((value) => typeof value !== "string" || value === "")) continue;
    const key = JSON.stringify([kind, fields, where, values]);
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, name);
      continue;
    }
    const described = fields.map((field, index) => `${field} ${JSON.stringify(values[index])}`).join(" and ");
    const warning =
      `${kind} "${name}" has the ${described} of ${kind} "${first}" in the same workspace: the service keeps both, but a ` +
      `lookup by ${fields.join(" and ")} finds only one, and the YAML form refuses such twins. Give one another ${fields.join(" or ")} if that matters.`;
    void pulumi.log.warn(warning);
    return warning;
  }
  return undefined;
}
