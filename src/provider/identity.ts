/**
 * Two resources of one program that would be the same object: the same kind, the same identifying fields (an
 * App's name, a Workflow's App and name, a ProviderConnection's name or nickname, ...) and the same workspace. The
 * service itself allows most such twins (a second App of a name gets the slug `name-2`), but a program cannot
 * manage them apart: a create whose answer was lost, and an `adopt`, find their object by those fields in the
 * service's lists, so one could take the other's object and leave its own behind. The YAML form refuses such
 * twins (src/workspace/spec.ts, `crossCheck`), and a program in code is refused the same way, when its second
 * twin is declared, naming both. Values that are Outputs (known later) are not compared.
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

/** Refuses a resource whose identity an earlier one of this program already declared (see the top of this file). */
export function refuseTwin(kind: KindName, name: string, args: Record<string, unknown>, provider?: unknown): void {
  const where = whereOf(args, provider);
  if (where === undefined) return;
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
    throw new pulumi.RunError(
      `${kind} "${name}" has the ${described} of ${kind} "${first}" in the same workspace: the two would be the same object ` +
        "(a lost create or an adopt finds its object by these fields), so they cannot be managed apart. Give one another " +
        `${fields.join(" or ")}, or declare it once.`,
    );
  }
}
