/**
 * The resource classes' argument types come from the field declarations: a required field is mandatory
 * for the compiler too. The `@ts-expect-error` lines fail `npm test`'s type check if that ever breaks.
 */
import { describe, expect, it } from "vitest";
import * as gms from "../../src";
import { KIND_NAMES } from "../../src/resources";
import { kinds } from "../../src/resources";

/** Never called: it only has to type-check. */
export function typeChecks(): void {
  // @ts-expect-error name is required
  new gms.App("no-name", { description: "x" });
  // @ts-expect-error provider and key are required
  new gms.ProviderConnection("no-key", { nickname: "x" });
  // @ts-expect-error llm is required
  new gms.Model("no-llm", { provider: "openai", key: "k" });
  // @ts-expect-error context is required
  new gms.ContextSource("no-context", { url: "https://example.com/a.md" });
  // @ts-expect-error dataIds, baseModel and providerConnection are required
  new gms.FineTune("no-ids", { name: "Tone", app: "a", dataset: "d" });
  new gms.App("ok", { name: "Support" });
  new gms.Model("ok", { llm: "gpt-4o", provider: "openai", key: "k" });
}

describe("resource argument types", () => {
  it("declare required fields literally, as the classes' args types read them", () => {
    const required = Object.fromEntries(
      KIND_NAMES.map((name) => [
        name,
        Object.entries(kinds[name].inputs)
          .filter(([, field]) => field.required)
          .map(([field]) => field),
      ]),
    );
    expect(required.App).toEqual(["name"]);
    expect(required.ProviderConnection).toEqual(["provider", "key"]);
    expect(required.Model).toEqual(["llm", "provider", "key"]);
    expect(required.ContextSource).toEqual(["context"]);
    expect(required.FineTune).toEqual(["name", "app", "dataset", "dataIds", "baseModel", "providerConnection"]);
  });
});
