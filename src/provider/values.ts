/** Value rules the engine imposes on every kind: the preview-time unknown marker and structural equality. */
import { isDeepStrictEqual } from "node:util";

/** What the engine passes for a value it does not know yet (preview, or an output of a pending resource). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** The key that tags a special value (secret, asset, archive, resource reference) on the wire and in state. */
export const SIG_KEY = "4dabf18193072939515e22adb298388d";
/** The tag of a secret: `{ [SIG_KEY]: SECRET_SIG, value }` on the wire, with `ciphertext` or `plaintext` in a checkpoint. */
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** A secret: its value (`value` on the wire; `ciphertext` or `plaintext` in a checkpoint) beside the tag. */
export interface SecretValue extends Record<string, unknown> {
  [SIG_KEY]: typeof SECRET_SIG;
}

export const isSecret = (value: unknown): value is SecretValue =>
  typeof value === "object" && value !== null && !Array.isArray(value) && (value as Record<string, unknown>)[SIG_KEY] === SECRET_SIG;

/** `value` as a secret on the wire (as it is, when it is one already). */
export const makeSecret = (value: unknown): SecretValue => (isSecret(value) ? value : { [SIG_KEY]: SECRET_SIG, value });

export function containsUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value && typeof value === "object") return Object.values(value).some(containsUnknown);
  return false;
}

/** Equality as a diff sees it: `null` and absent are the same, and object key order does not matter. */
export function sameValue(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(normalize(a), normalize(b));
}

function normalize(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, item]) => item !== undefined && item !== null)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, item]) => [key, normalize(item)]),
    );
  }
  return value;
}
