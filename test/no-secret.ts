/**
 * Whether an error leaks a secret when a person or a tool looks at it in full: `util.inspect` to any depth (hidden
 * properties too), every error of its `cause` chain and of its `errors` list with their own properties, and its JSON.
 * The failure suites pass every error they meet through `expectNoSecretIn`, with their keys and secret values.
 */
import { inspect } from "node:util";
import { expect } from "vitest";

/** Every view of `error` a user could print or send: inspected, each cause's and each listed error's own properties, JSON. */
export function viewsOf(error: unknown): string[] {
  const views = [
    inspect(error, { depth: Number.POSITIVE_INFINITY }),
    inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
  ];
  const seen = new Set<unknown>();
  const visit = (value: unknown): void => {
    if (!(value instanceof Error) || seen.has(value)) return;
    seen.add(value);
    for (const name of Object.getOwnPropertyNames(value)) {
      const property = (value as unknown as Record<string, unknown>)[name];
      views.push(`${name}: ${inspect(property, { depth: Number.POSITIVE_INFINITY })}`);
    }
    visit(value.cause);
    const listed = (value as unknown as { errors?: unknown }).errors;
    if (Array.isArray(listed)) for (const each of listed) visit(each);
  };
  visit(error);
  const seenInJson = new WeakSet<object>();
  views.push(
    JSON.stringify(error, (_key, value: unknown) => {
      if (typeof value === "bigint") return String(value);
      if (value !== null && typeof value === "object") {
        if (seenInJson.has(value)) return "[cycle]";
        seenInJson.add(value);
        if (value instanceof Error) return { ...value, name: value.name, message: value.message, cause: value.cause };
      }
      return value;
    }) ?? "",
  );
  return views;
}

/** Fails when any view of `error` (see viewsOf) holds one of `secrets`. */
export function expectNoSecretIn(error: unknown, secrets: readonly string[]): void {
  expect(error).toBeDefined();
  for (const view of viewsOf(error))
    for (const secret of secrets) expect(view.includes(secret), `a secret in: ${view.slice(0, 400)}`).toBe(false);
}
