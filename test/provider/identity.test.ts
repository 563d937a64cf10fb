/**
 * Two resources of one program that would be the same object (same kind, same identifying fields, same
 * workspace) are refused when the second is declared, naming both: in code as the YAML form refuses them
 * (src/provider/identity.ts says why). Other workspaces, other providers and values not yet known are not twins.
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import * as gms from "../../src";

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    { newResource: async (args) => ({ id: `${args.name}-id`, state: args.inputs }), call: async () => ({}) },
    "gms-identity-test",
    "dev",
    false,
  );
});

const refusal = (declare: () => unknown): unknown => {
  try {
    declare();
  } catch (error) {
    return error;
  }
  return undefined;
};

describe("twins in one program", () => {
  it("refuses a second App of one name in one workspace, naming both, as a RunError", () => {
    new gms.App("support", { name: "Support" });
    const error = refusal(() => new gms.App("support-again", { name: "Support" }));
    expect(pulumi.RunError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^App "support-again" has the name "Support" of App "support" in the same workspace/);
  });

  it("refuses twins across the dynamic and the native classes, by each identity of the kind", () => {
    new gms.ProviderConnection("openai", { provider: "openai", key: "sk-1", nickname: "Main" });
    expect(
      refusal(() => new gms.native.ProviderConnection("openai-native", { provider: "openai", key: "sk-2", nickname: "Main" })),
    ).toMatchObject({
      message: expect.stringMatching(/nickname "Main" of ProviderConnection "openai"/),
    });
    new gms.Workflow("triage", { name: "Triage", app: "0b6f3c2e-5d4a-4e1f-9a8b-7c6d5e4f3a2b" });
    expect(refusal(() => new gms.Workflow("triage-2", { name: "Triage", app: "0b6f3c2e-5d4a-4e1f-9a8b-7c6d5e4f3a2b" }))).toBeDefined();
  });

  it("allows the same name in another workspace, under another provider, or in another App, and names not yet known", () => {
    new gms.App("billing", { name: "Billing" });
    const elsewhere = { connection: { baseUrl: "https://other.example/v1", apiKey: "gms_other_key_1234" } };
    expect(refusal(() => new gms.App("billing-elsewhere", { name: "Billing", ...elsewhere }))).toBeUndefined();
    const provider = new gms.native.Provider("second", { baseUrl: "https://second.example/v1", apiKey: "gms_second_key_12" });
    expect(refusal(() => new gms.native.App("billing-second", { name: "Billing" }, { provider }))).toBeUndefined();
    new gms.Workflow("flow-a", { name: "Flow", app: "1b6f3c2e-5d4a-4e1f-9a8b-7c6d5e4f3a2b" });
    expect(refusal(() => new gms.Workflow("flow-b", { name: "Flow", app: "2b6f3c2e-5d4a-4e1f-9a8b-7c6d5e4f3a2b" }))).toBeUndefined();
    const later = pulumi.output("Billing");
    expect(refusal(() => new gms.App("billing-later", { name: later }))).toBeUndefined();
  });
});
