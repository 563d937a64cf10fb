/**
 * The Helpdesk App's stack: the App, its Workflow, and the Model it answers with, linked to the shared stack's OpenAI
 * connection by that connection's GUID, read by StackReference from the shared stack (../../lib/shared-stack.ts).
 *
 * Stack config: gms:baseUrl, gms:apiKey (secret), openaiKey (secret); optional: sharedStack (the shared stack's full
 * name), organization (on Pulumi Cloud).
 */
import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";
import { sharedStackName } from "../../lib/shared-stack.ts";

const config = new pulumi.Config();
const shared = new pulumi.StackReference("shared", {
  name: config.get("sharedStack") ?? sharedStackName(pulumi.getStack(), config.get("organization")),
});
const connections = shared.requireOutput("connections") as pulumi.Output<Record<string, string>>;

const app = new gms.App("helpdesk", { name: "Helpdesk", description: "Answers customer questions" });
new gms.Workflow("triage", { name: "Triage", app: app.id });
const llm = new gms.Model("helpdesk-llm", {
  llm: "gpt-4o",
  provider: connections.apply((each) => each.openai!),
  key: config.requireSecret("openaiKey"),
});

export const appGuid = app.id;
export const modelGuid = llm.id;
