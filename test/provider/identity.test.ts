/**
 * Two resources of one program that look alike to the service (same kind, same identifying fields, same workspace)
 * are declared, and warned about once each, naming both (src/provider/identity.ts says why a warning and not an
 * error: the service keeps both and the provider keeps them apart). Other workspaces, other providers and values
 * not yet known are not twins, unless they are the same Output.
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import * as gms from "../../src";
import { warnTwin } from "../../src/provider/identity";
import { kinds } from "../../src/resources";

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    { newResource: async (args) => ({ id: `${args.name}-id`, state: args.inputs }), call: async () => ({}) },
    "gms-identity-test",
    "dev",
    false,
  );
});

describe("twins in one program", () => {
  it("warns of a second App of one name in one workspace, naming both, and declares it", () => {
    expect(warnTwin(kinds.App, "support", { name: "Support" })).toBeUndefined();
    expect(warnTwin(kinds.App, "support-again", { name: "Support" })).toMatch(
      /^App "support-again" has the name "Support" of App "support" in the same workspace: the service keeps both, but a lookup by name finds only one/,
    );
    expect(() => new gms.App("declared-twice-a", { name: "Declared twice" })).not.toThrow();
    expect(() => new gms.native.App("declared-twice-b", { name: "Declared twice" })).not.toThrow();
  });

  it("compares each identity of a kind", () => {
    expect(warnTwin(kinds.ProviderConnection, "openai", { provider: "openai", nickname: "Main" })).toBeUndefined();
    expect(warnTwin(kinds.ProviderConnection, "openai-2", { provider: "openai", nickname: "Main" })).toMatch(
      /nickname "Main" of ProviderConnection "openai"/,
    );
    const app = "0b6f3c2e-5d4a-4e1f-9a8b-7c6d5e4f3a2b";
    expect(warnTwin(kinds.Workflow, "triage", { name: "Triage", app })).toBeUndefined();
    expect(warnTwin(kinds.Workflow, "triage-2", { name: "Triage", app })).toMatch(/app "0b6f3c2e.*" and name "Triage"/);
  });

  it("sees no twin in another workspace, under another provider, in another App, or in a value not yet known", () => {
    expect(warnTwin(kinds.App, "billing", { name: "Billing" })).toBeUndefined();
    const elsewhere = { connection: { baseUrl: "https://other.example/v1", apiKey: "gms_other_key_1234" } };
    expect(warnTwin(kinds.App, "billing-elsewhere", { name: "Billing", ...elsewhere })).toBeUndefined();
    const provider = new gms.native.Provider("second", { baseUrl: "https://second.example/v1", apiKey: "gms_second_key_12" });
    expect(warnTwin(kinds.App, "billing-second", { name: "Billing" }, provider)).toBeUndefined();
    expect(warnTwin(kinds.Workflow, "flow-a", { name: "Flow", app: "1b6f3c2e-5d4a-4e1f-9a8b-7c6d5e4f3a2b" })).toBeUndefined();
    expect(warnTwin(kinds.Workflow, "flow-b", { name: "Flow", app: "2b6f3c2e-5d4a-4e1f-9a8b-7c6d5e4f3a2b" })).toBeUndefined();
    expect(warnTwin(kinds.App, "billing-later", { name: pulumi.output("Billing") })).toBeUndefined();
    expect(warnTwin(kinds.App, "billing-later-too", { name: pulumi.output("Billing") })).toBeUndefined();
  });

  it("compares an Output as itself: the same Output given twice (an App's id) is one value, named by its field", () => {
    const app = new gms.App("outputs", { name: "Outputs" });
    expect(warnTwin(kinds.Workflow, "intake", { name: "Intake", app: app.id })).toBeUndefined();
    expect(warnTwin(kinds.Workflow, "intake-2", { name: "Intake", app: app.id })).toBe(
      'Workflow "intake-2" has the app and name "Intake" of Workflow "intake" in the same workspace: the service keeps both, ' +
        "but a lookup by app and name finds only one of them. Give one another app or name if that matters.",
    );
    expect(warnTwin(kinds.Workflow, "intake-3", { name: "Intake", app: app.id.apply((id) => id) })).toBeUndefined();
  });
});
