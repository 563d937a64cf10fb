/**
 * Property values as the engine sends them to a provider that accepts secrets: a secret is an object
 * `{[SIG_KEY]: SECRET_SIG, value}`, an unknown (preview) is the string UNKNOWN, an asset or archive an object
 * with its own signature (left as it is: the kinds read assets in that form). The kinds work on plain values;
 * the plugin unwraps secrets on the way in, remembering which properties held one, and wraps them on the way out.
 */
import { isSecret, makeSecret } from "../provider/values";

export { UNKNOWN } from "../provider/values";

export type Props = Record<string, unknown>;

/** The value with every secret inside it unwrapped, and whether there was one. */
function unwrap(value: unknown): { value: unknown; secret: boolean } {
  if (isSecret(value)) return { value: unwrap(value.value).value, secret: true };
  if (Array.isArray(value)) {
    const items = value.map(unwrap);
    return { value: items.map((item) => item.value), secret: items.some((item) => item.secret) };
  }
  if (typeof value === "object" && value !== null) {
    let found = false;
    const plain: Props = {};
    for (const [key, item] of Object.entries(value)) {
      const unwrapped = unwrap(item);
      plain[key] = unwrapped.value;
      found ||= unwrapped.secret;
    }
    return { value: plain, secret: found };
  }
  return { value, secret: false };
}

/** Plain values, and the names of the top-level properties that held a secret anywhere inside. */
export function reveal(props: Props): { values: Props; secretNames: Set<string> } {
  const values: Props = {};
  const secretNames = new Set<string>();
  for (const [name, value] of Object.entries(props)) {
    const unwrapped = unwrap(value);
    values[name] = unwrapped.value;
    if (unwrapped.secret) secretNames.add(name);
  }
  return { values, secretNames };
}

/**
 * Values for the wire: the named properties wrapped as secrets, and nothing undefined (a protobuf Struct
 * cannot hold it; an absent property and an undefined one mean the same to the engine).
 */
export function conceal(props: Props, secretNames: ReadonlySet<string>): Props {
  const wire: Props = {};
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined) continue;
    const plain = withoutUndefined(value);
    wire[name] = secretNames.has(name) ? makeSecret(plain) : plain;
  }
  return wire;
}

function withoutUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : withoutUndefined(item)));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, item]) => item !== undefined)
        .map(([key, item]) => [key, withoutUndefined(item)]),
    );
  }
  return value;
}

/** The type token of a resource from its URN (`urn:pulumi:<stack>::<project>::<parent$...$type>::<name>`). */
export function typeOfUrn(urn: string): string {
  const qualified = urn.split("::")[2] ?? "";
  return qualified.slice(qualified.lastIndexOf("$") + 1);
}
