/**
 * Deprecation before removal (docs/upgrading.md). What a kind declares as on its way out (`Kind.deprecated`,
 * `InputField.deprecated`) becomes a warning to a program that uses it; the names a renamed kind had
 * (`Kind.formerNames`) stay aliases of its type tokens. schema.json carries both (src/schema/package-schema.ts), and so
 * every SDK generated from it; the reference pages show them (src/docs/kind-pages.ts).
 *
 * Where the warnings are told: the plugin's check sends them to the engine with the resource's URN
 * (src/plugin/server.ts), so a program in any language on the plugin sees them in `preview` and `up`; the dynamic
 * resources warn from their class as the program declares them (src/provider/resource.ts), since their provider host
 * has no way to the engine's log.
 */
import type { Kind } from "./kind";
import { dynamicToken, nativeToken } from "./tokens";

/** A warning for the kind when it is deprecated, and for each deprecated input the program sets (given, not null). */
export function deprecationWarnings(kind: Kind, inputs: Readonly<Record<string, unknown>>): string[] {
  const warnings = kind.deprecated ? [`${kind.name} is deprecated: ${kind.deprecated}`] : [];
  for (const [name, field] of Object.entries(kind.inputs))
    if (field.deprecated && inputs[name] !== undefined && inputs[name] !== null)
      warnings.push(`${kind.name}'s input ${name} is deprecated: ${field.deprecated}`);
  return warnings;
}

/** The type tokens of a renamed kind's former names: on the plugin (`gms:index:<name>`) and of the dynamic resources. */
export const formerTokens = (kind: Kind, form: "native" | "dynamic"): string[] =>
  (kind.formerNames ?? []).map((name) => (form === "native" ? nativeToken(name) : dynamicToken(name)));
