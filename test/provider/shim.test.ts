import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KIND_NAMES } from "../../src/resources";
import { type Registration, captureRegistrations, makeProgramDir } from "./testbed";
import { rmSync } from "node:fs";

const KEY = "sk-shim-test-0123456789abcdefghij";
const GUID = "11111111-1111-4111-8111-111111111111";

/** One resource of every kind, as a user's program declares them (with a key in plain text, not a secret). */
const PROGRAM = `
  const key = "${KEY}";
  new gms.App("app", { name: "App" });
  new gms.ProviderConnection("connection", { provider: "openai", key });
  new gms.Model("model", { llm: "gpt-4o", provider: "openai", key });
  new gms.Workflow("workflow", { name: "Flow", app: "${GUID}" });
  new gms.Dataset("dataset", { name: "Set" });
  new gms.Eval("eval", { name: "Eval", action: "${GUID}", evalTypes: [{ guid: "${GUID}" }] });
  new gms.Experiment("experiment", { name: "AB", app: "${GUID}", primaryAction: "${GUID}", secondaryAction: "${GUID}" });
  new gms.Skill("skill", { name: "web-search", type: "web" });
  new gms.ContextSource("source", { context: "${GUID}", url: "https://example.com/handbook.md" });
  const dataIds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  new gms.FineTune("tune", { name: "Tone", app: "${GUID}", dataset: "${GUID}", dataIds, baseModel: "gpt-4o-mini", providerConnection: 1 });
`;

describe("the serialized __provider", () => {
  let dir: string;
  let registrations: Registration[];
  beforeAll(() => {
    dir = makeProgramDir();
    registrations = captureRegistrations(dir, PROGRAM);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is a require of the installed package's shim for every kind, under 2 KB, with no credential", () => {
    expect(registrations.map((registration) => registration.type).sort()).toEqual(
      KIND_NAMES.map((kind) => `pulumi-nodejs:dynamic/gms:${kind}`).sort(),
    );
    for (const registration of registrations) {
      const text = registration.inputs.__provider as string;
      const bytes = Buffer.byteLength(text);
      expect(bytes, `${registration.type} __provider is ${bytes} bytes`).toBeLessThanOrEqual(2048);
      expect(text).toMatch(/require\("pulumi-gms\/dist\/shims\/[a-z-]+\.js"\)/);
      expect(text).not.toContain(KEY);
    }
  });

  it("marks keys secret whether or not the program passed a secret", () => {
    const secretsOf = (name: string) => registrations.find((registration) => registration.name === name)!.secrets;
    expect(secretsOf("connection")).toContain("key");
    expect(secretsOf("model")).toContain("key");
    expect(secretsOf("app")).toEqual([]);
  });
});
