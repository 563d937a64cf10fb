import * as pulumi from "@pulumi/pulumi";
import { native as gms } from "pulumi-gms";

const config = new pulumi.Config();
const openaiKey = config.requireSecret("openaiKey");
const draftReply = gms.getAction({
    app: "Support",
    name: "Draft reply",
});
const conciseReply = gms.getAction({
    app: "Support",
    name: "Draft reply (concise)",
});
const records = gms.getDataRecords({
    app: "Support",
    limit: 3,
});
const exactMatch = gms.getEvalType({
    name: "Exact match",
});
const handbook = gms.getContext({
    name: "Handbook",
});
const assistant = new gms.App("assistant", {
    name: "Support assistant",
    description: "Drafts replies for the support team",
});
const escalation = new gms.Workflow("escalation", {
    name: "Escalation",
    app: assistant.id,
});
const openai = new gms.ProviderConnection("openai", {
    provider: "openai",
    key: openaiKey,
    nickname: "OpenAI (support)",
    "default": true,
});
const replyModel = new gms.Model("replyModel", {
    llm: "gpt-4o-mini",
    provider: "openai",
    key: openaiKey,
}, {
    dependsOn: [openai],
});
const reviewed = new gms.Dataset("reviewed", {
    name: "Reviewed replies",
    app: draftReply.then(draftReply => draftReply.app),
    data: [
        records.then(records => records[0].guid),
        records.then(records => records[1].guid),
        records.then(records => records[2].guid),
    ],
});
const replyQuality = new gms.Eval("replyQuality", {
    name: "Reply quality",
    action: draftReply.then(draftReply => draftReply.guid),
    dataset: reviewed.id,
    evalTypes: [{
        guid: exactMatch.then(exactMatch => exactMatch.guid),
    }],
});
const conciseReplies = new gms.Experiment("conciseReplies", {
    name: "Concise replies",
    app: draftReply.then(draftReply => draftReply.app),
    primaryAction: draftReply.then(draftReply => draftReply.guid),
    secondaryAction: conciseReply.then(conciseReply => conciseReply.guid),
});
const handbookSource = new gms.ContextSource("handbookSource", {
    context: handbook.then(handbook => handbook.guid),
    file: new pulumi.asset.FileAsset("handbook.md"),
    process: true,
    waitForIndexing: true,
});
export const appSlug = assistant.slug;
export const workflowSlug = escalation.slug;
export const modelConnection = replyModel.providerGuid;
export const evalDataType = replyQuality.dataType;
export const experimentStatus = conciseReplies.status;
export const handbookStatus = handbookSource.indexingStatus;
