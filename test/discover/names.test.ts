/** The resource names discover gives objects: slugs of their names, unique, valid identifiers, the same every run. */
import { describe, expect, it } from "vitest";
import { assignNames, baseName, kindSlug, slugOf } from "../../src/discover/names";
import type { KindName } from "../../src/resources";

const guid = (digit: string, rest = "0000") => `${digit.repeat(8)}-${rest}-4000-8000-000000000000`;
const object = (kind: KindName, name: string, id: string) => ({ kind, name, guid: id });

describe("slugs", () => {
  it.each([
    ["Customer Support", "customer_support"],
    ["  Café — Crème brûlée! ", "cafe_creme_brulee"],
    ["handbook.md", "handbook_md"],
    ["gpt-4o", "gpt_4o"],
    ["Ünïcödé/ø", "unicode"],
    ["日本語", ""],
    ["x".repeat(60), "x".repeat(48)],
    [`${"a".repeat(47)} b`, "a".repeat(47)],
  ])("%j → %j", (name, slug) => expect(slugOf(name)).toBe(slug));

  it("start with a letter: the kind's slug stands before a name that would not, and for a name with no letter or digit", () => {
    expect(baseName("Eval", "2024 review")).toBe("eval_2024_review");
    expect(baseName("ContextSource", "")).toBe("context_source");
    expect(baseName("FineTune", "!!!")).toBe("fine_tune");
    expect(kindSlug("ProviderConnection")).toBe("provider_connection");
  });
});

describe("assignNames", () => {
  it("keeps a name that is the only one of its slug", () => {
    const names = assignNames([object("App", "Support", guid("1")), object("Workflow", "Triage", guid("2"))]);
    expect([...names.values()]).toEqual(["support", "triage"]);
  });

  it("tells twins of one kind apart by their GUID's first 8 digits, twins of several kinds by kind, and both when needed", () => {
    const objects = [
      object("App", "Billing", guid("a")),
      object("App", "billing", guid("b")),
      object("Dataset", "Support", guid("c")),
      object("App", "Support", guid("d")),
      object("App", "Golden", guid("e")),
      object("Dataset", "Golden", guid("f")),
      object("Dataset", "Golden", guid("1")),
    ];
    expect(Object.fromEntries(assignNames(objects))).toEqual({
      [guid("a")]: "billing_aaaaaaaa",
      [guid("b")]: "billing_bbbbbbbb",
      [guid("c")]: "support_dataset",
      [guid("d")]: "support_app",
      [guid("e")]: "golden_app",
      [guid("f")]: "golden_dataset_ffffffff",
      [guid("1")]: "golden_dataset_11111111",
    });
  });

  it("is a function of the objects alone, whatever order they are listed in", () => {
    const objects = [
      object("App", "Billing", guid("a")),
      object("App", "Billing", guid("b")),
      object("Model", "gpt-4o", guid("c")),
      object("Skill", "web-search", guid("d")),
    ];
    expect(assignNames([...objects].reverse())).toEqual(assignNames(objects));
  });

  it("keeps off the names a stack uses for something else, and keeps the one it uses for the same object", () => {
    const taken = new Map<string, string | undefined>([
      ["onboarding", undefined],
      ["support", guid("2")],
    ]);
    const names = assignNames([object("App", "Onboarding", guid("1")), object("App", "Support", guid("2"))], taken);
    expect(names.get(guid("1"))).toBe("onboarding_11111111");
    expect(names.get(guid("2"))).toBe("support");
  });

  it("falls back to the kind and the whole GUID where names still meet", () => {
    // An App literally named like the disambiguated twins, and twins whose GUIDs share their first 8 digits.
    const objects = [
      object("App", "Billing", guid("a", "1111")),
      object("App", "Billing", guid("a", "2222")),
      object("App", "billing aaaaaaaa", guid("3")),
    ];
    const names = assignNames(objects);
    expect(new Set(names.values()).size).toBe(3);
    const hex = (id: string) => id.replace(/-/g, "");
    expect(names.get(guid("a", "1111"))).toBe(`billing_app_${hex(guid("a", "1111"))}`);
    expect(names.get(guid("a", "2222"))).toBe(`billing_app_${hex(guid("a", "2222"))}`);
    expect(names.get(guid("3"))).toBe(`billing_aaaaaaaa_app_${hex(guid("3"))}`);
  });
});
