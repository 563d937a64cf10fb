import * as pulumi from "@pulumi/pulumi";
import { native as gms } from "pulumi-gms";

const draftReply = gms.getAction({
    app: "Support",
    name: "Draft reply",
});
const conciseReply = gms.getAction({
    app: "Support",
    name: "Draft reply (concise)",
});
const conciseReplies = new gms.Experiment("conciseReplies", {
    name: "Concise replies",
    app: draftReply.then(draftReply => draftReply.app),
    primaryAction: draftReply.then(draftReply => draftReply.guid),
    secondaryAction: conciseReply.then(conciseReply => conciseReply.guid),
});
export const experimentGuid = conciseReplies.guid;
export const experimentStatus = conciseReplies.status;
