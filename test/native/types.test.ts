/**
 * The native SDK's types as a user's editor sees them: a program type-checked (strict, nodenext) against the
 * built declarations (dist/native, what the package ships), with `@ts-expect-error` on every misuse the types
 * must refuse. tsc fails on an expected error that does not occur, so args that went `any` fail this test too.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { typeCheckScript } from "../examples/type-check";

const ROOT = join(__dirname, "..", "..");
const NATIVE = join(ROOT, "dist", "native", "index.js");

const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import * as native from ${JSON.stringify(NATIVE)};

const config = new pulumi.Config();
const provider = new native.Provider("acme", { baseUrl: "https://acme.example/v1", apiKey: config.requireSecret("apiKey"), maxRetries: 5 });
const app: native.App = new native.App("support", { name: "Support", description: null }, { provider });
const slug: pulumi.Output<string> = app.slug;
const openai = new native.ProviderConnection("openai", { provider: "openai", key: config.requireSecret("openaiKey") }, { provider });
const model = new native.Model("gpt-4o", { llm: "gpt-4o", provider: "openai", key: config.requireSecret("openaiKey") }, { provider, dependsOn: [openai] });
const linkedId: pulumi.Output<number> = model.workspaceModelProviderId;
const workflow = new native.Workflow("triage", { name: "Triage", app: app.guid }, { provider });
const dataset = new native.Dataset("golden", { name: "Golden", app: app.guid, data: [] }, { provider });
const args: native.FineTuneArgs = {
  name: "ft",
  app: app.guid,
  dataset: dataset.guid,
  dataIds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  baseModel: "gpt-4o-mini",
  providerConnection: model.workspaceModelProviderId,
};
new native.FineTune("ft", args, { provider });
const existing: native.App = native.App.get("existing", "2c1f0000-0000-4000-8000-0000000000aa", { provider });
const isApp: boolean = native.App.isInstance(existing) && native.Provider.isInstance(provider);

// @ts-expect-error a required field (name) is missing
new native.App("no-name", {});
// @ts-expect-error a field the kind does not declare
new native.App("typo", { name: "x", nmae: "y" });
// @ts-expect-error a field of the wrong type
new native.Model("wrong-type", { llm: 4, provider: "openai", key: "k" });
// @ts-expect-error the derived link is not a field of the program's
new native.Model("link", { llm: "gpt-4o", provider: "openai", key: "k", __linkTo: "guid" });
// @ts-expect-error maxRetries is a number
new native.Provider("wrong-retries", { maxRetries: "5" });
// @ts-expect-error the provider takes no per-resource connection field
new native.Provider("wrong-field", { connection: { baseUrl: "https://x/v1", apiKey: "k" } });
// @ts-expect-error an output the kind does not have
workflow.providerGuid;
// @ts-expect-error a native App is not a Workflow
const notWorkflow: native.Workflow = app;

export { slug, linkedId, isApp, notWorkflow };
`;

describe("the native SDK's types", () => {
  const dir = mkdtempSync(join(tmpdir(), "gms-native-types-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("accept a program that uses them as documented and refuse every misuse", () => {
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(join(ROOT, "node_modules", "@pulumi"), join(dir, "node_modules", "@pulumi"), "dir");
    const file = join(dir, "index.ts");
    writeFileSync(file, PROGRAM);
    const { output, status } = typeCheckScript(file);
    expect(output).toBe("");
    expect(status).toBe(0);
  });
});
