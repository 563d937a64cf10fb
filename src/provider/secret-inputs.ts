/**
 * Values the engine holds as secret besides the fields a kind declares secret: a program may wrap any
 * input in `pulumi.secret`. The engine strips secrets before a dynamic provider sees them (the provider
 * does not accept secrets), so without help the provider cannot tell that a `url` holds a token. The
 * resource class therefore sends, beside the inputs, the names of those the program passed as secrets
 * (`__secretInputs`: derived from the inputs' secretness, not from their values, and not secret itself),
 * and the provider blanks every value of them, with those of the declared secret fields and the
 * connection's API key, from each message it passes on: errors, the init errors that state keeps as text,
 * check failures.
 */
import * as pulumi from "@pulumi/pulumi";
import { containsUnknown } from "./values";

/** The input (and output) that lists the secret inputs of a resource. */
export const SECRET_INPUTS = "__secretInputs";

/**
 * The names among `args` whose value is secret to the engine (or holds a secret somewhere inside), sorted,
 * or undefined when there are none: a program without secrets registers exactly what it did before.
 */
export async function secretInputNames(args: Record<string, unknown>): Promise<string[] | undefined> {
  const names: string[] = [];
  for (const [name, value] of Object.entries(args)) {
    // `pulumi.output` lifts a secret nested in a plain object or array to the whole value.
    if (value !== undefined && value !== null && (await pulumi.isSecret(pulumi.output(value)))) names.push(name);
  }
  return names.length > 0 ? names.sort() : undefined;
}

/** The names of the secret inputs that `props` list (the dynamic resources' inputs and state). */
export function listedSecretInputs(...props: Record<string, unknown>[]): ReadonlySet<string> {
  return new Set(props.flatMap((each) => (Array.isArray(each[SECRET_INPUTS]) ? (each[SECRET_INPUTS] as unknown[]).map(String) : [])));
}

/**
 * Every string a message must not show for this resource: inside the secret fields `secretNames` lists (the declared
 * ones and those the program passed as secrets), and the connection's API key.
 */
export function secretStrings(props: Record<string, unknown>, secretNames: Iterable<string>): string[] {
  const strings = [...new Set(secretNames)].flatMap((name) => stringsIn(props[name]));
  const connection = props.connection as { apiKey?: unknown } | undefined;
  return [...strings, ...stringsIn(connection?.apiKey)];
}

function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return value === "" || containsUnknown(value) ? [] : [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value && typeof value === "object") return Object.values(value).flatMap(stringsIn);
  return [];
}
