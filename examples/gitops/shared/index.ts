/**
 * The shared stack: what every App of the workspace uses. Its outputs, one map per kind from the resource's name to
 * the object's GUID, are what the App stacks read by StackReference (../lib/shared-stack.ts names it).
 *
 * Stack config: gms:baseUrl, gms:apiKey (secret), openaiKey (secret); optional: context (the Context the handbook
 * fills, default "Handbook").
 */
import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";

const config = new pulumi.Config();
const openaiKey = config.requireSecret("openaiKey");

const openai = new gms.ProviderConnection("openai", { provider: "openai", key: openaiKey, nickname: "OpenAI", default: true });
const mini = new gms.Model(
  "gpt-4o-mini",
  { llm: "gpt-4o-mini", provider: "openai", key: openaiKey, default: true },
  { dependsOn: [openai] },
);
const search = new gms.Skill("web-search", { name: "web-search", type: "web" });
const handbook = new gms.ContextSource("handbook", {
  context: gms.getContextOutput({ name: config.get("context") ?? "Handbook" }).guid,
  file: new pulumi.asset.FileAsset("handbook.md"),
  process: true,
});

// `.id` is the GUID, known while an update is only previewed: a change in place does not unsettle the App stacks.
export const connections = { openai: openai.id };
export const models = { "gpt-4o-mini": mini.id };
export const skills = { "web-search": search.id };
export const contextSources = { handbook: handbook.id };
