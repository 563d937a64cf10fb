import * as pulumi from "@pulumi/pulumi";
import { native as gms } from "pulumi-gms";

const config = new pulumi.Config();
const openaiKey = config.requireSecret("openaiKey");
const draftReply = gms.getAction({
    app: "Support",
    name: "Draft reply",
});
const openai = new gms.ProviderConnection("openai", {
    provider: "openai",
    key: openaiKey,
    nickname: "OpenAI (fine-tuning)",
    "default": true,
});
const baseModel = new gms.Model("baseModel", {
    llm: "gpt-4o-mini",
    provider: "openai",
    key: openaiKey,
}, {
    dependsOn: [openai],
});
const trainingSet = new gms.Dataset("trainingSet", {
    name: "Support tone",
    description: "Replies in the house tone",
    app: draftReply.then(draftReply => draftReply.app),
});
const supportTone = new gms.FineTune("supportTone", {
    name: "Support tone",
    app: draftReply.then(draftReply => draftReply.app),
    dataset: trainingSet.id,
    dataIds: [
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        10,
    ],
    baseModel: "gpt-4o-mini",
    providerConnection: baseModel.workspaceModelProviderId,
    waitTimeoutSeconds: 600,
});
export const fineTuneGuid = supportTone.guid;
export const fineTuneStatus = supportTone.status;
export const vendorFinetuneName = supportTone.vendorFinetuneName;
