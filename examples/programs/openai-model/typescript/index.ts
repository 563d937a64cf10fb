import * as pulumi from "@pulumi/pulumi";
import { native as gms } from "pulumi-gms";

const config = new pulumi.Config();
const openaiKey = config.requireSecret("openaiKey");
const openai = new gms.ProviderConnection("openai", {
    provider: "openai",
    key: openaiKey,
    nickname: "OpenAI (production)",
    "default": true,
});
const gpt4oMini = new gms.Model("gpt4oMini", {
    llm: "gpt-4o-mini",
    provider: "openai",
    key: openaiKey,
    "default": true,
}, {
    dependsOn: [openai],
});
export const connectionGuid = openai.guid;
export const modelGuid = gpt4oMini.guid;
export const modelConnection = gpt4oMini.providerGuid;
