/**
 * Property values as the engine holds them: the SDK's wire form, where a secret is the object
 * `{[SIG]: SECRET_SIG, value}` at any depth and an unknown (preview only) is the string `UNKNOWN`.
 * The dynamic-provider host accepts neither secrets nor resource references, so the engine reveals
 * values before every provider call and re-marks secrets on what comes back, as Pulumi's engine does.
 */
import { isSecret, makeSecret, SIG_KEY, sameValue, UNKNOWN } from "../provider/values";

export { isSecret, makeSecret, UNKNOWN };
export type Props = Record<string, unknown>;

const RESOURCE_REFERENCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e";

const isObject = (value: unknown): value is Props => typeof value === "object" && value !== null && !Array.isArray(value);

export function containsSecret(value: unknown): boolean {
  if (isSecret(value)) return true;
  if (Array.isArray(value)) return value.some(containsSecret);
  if (isObject(value)) return Object.values(value).some(containsSecret);
  return false;
}

/**
 * What the host receives: secrets unwrapped, and a resource reference downgraded to its ID (its URN
 * for a component), as the engine marshals for a provider that accepts neither.
 */
export function toHostValue(value: unknown): unknown {
  if (isSecret(value)) return toHostValue(value.value);
  if (Array.isArray(value)) return value.map(toHostValue);
  if (isObject(value)) {
    if (value[SIG_KEY] === RESOURCE_REFERENCE_SIG) return value.id === "" ? UNKNOWN : (value.id ?? value.urn);
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toHostValue(item)]));
  }
  return value;
}

export const toHostProps = (props: Props): Props => toHostValue(props) as Props;

/**
 * Copies secretness from inputs to outputs of the same name (the engine's `annotateSecrets`): both
 * objects -> recurse; otherwise an input that contains a secret makes the whole output a secret.
 */
export function annotateSecrets(outs: Props, ins: Props): Props {
  const result: Props = { ...outs };
  for (const [key, input] of Object.entries(ins)) {
    if (!(key in result)) continue;
    const output = result[key];
    if (isObject(output) && !isSecret(output) && isObject(input) && !isSecret(input)) result[key] = annotateSecrets(output, input);
    else if (!isSecret(output) && containsSecret(input)) result[key] = makeSecret(output);
  }
  return result;
}

/** After every step: `additionalSecretOutputs` and secret inputs of the same name make outputs secret. */
export function markSecretOutputs(outs: Props, ins: Props, additionalSecretOutputs: readonly string[]): Props {
  const result = annotateSecrets(outs, ins);
  for (const key of additionalSecretOutputs) if (key in result) result[key] = makeSecret(result[key]);
  return result;
}

/** Top-level property names whose revealed values differ (`null` and absent are the same). */
export function changedKeys(olds: Props, news: Props): string[] {
  const keys = [...new Set([...Object.keys(olds), ...Object.keys(news)])];
  return keys.filter((key) => !sameValue(toHostValue(olds[key]), toHostValue(news[key])));
}

/** Replaces every secret (however deep) with `replace(secret)`; used to encrypt and decrypt state. */
export function mapSecrets(value: unknown, replace: (secret: Props) => unknown): unknown {
  if (isSecret(value)) return replace(value);
  if (Array.isArray(value)) return value.map((item) => mapSecrets(item, replace));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapSecrets(item, replace)]));
  return value;
}
