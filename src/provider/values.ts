/** Value rules the engine imposes on every kind: the preview-time unknown marker and structural equality. */
import { isDeepStrictEqual } from "node:util";

/** What the engine passes for a value it does not know yet (preview, or an output of a pending resource). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

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
