import * as pulumi from "@pulumi/pulumi";
import { native as gms } from "pulumi-gms";

const draftReply = gms.getAction({
    app: "Support",
    name: "Draft reply",
});
const exactMatch = gms.getEvalType({
    name: "Exact match",
});
const helpfulness = gms.getEvalType({
    name: "Helpfulness",
});
const records = gms.getDataRecords({
    app: "Support",
    limit: 2,
});
const regressions = new gms.Dataset("regressions", {
    name: "Reply regressions",
    app: draftReply.then(draftReply => draftReply.app),
    data: [
        records.then(records => records[0].guid),
        records.then(records => records[1].guid),
    ],
});
const replyQuality = new gms.Eval("replyQuality", {
    name: "Reply quality",
    action: draftReply.then(draftReply => draftReply.guid),
    dataset: regressions.id,
    evalTypes: [
        {
            guid: exactMatch.then(exactMatch => exactMatch.guid),
        },
        {
            guid: helpfulness.then(helpfulness => helpfulness.guid),
        },
    ],
});
export const evalGuid = replyQuality.guid;
export const evalDataType = replyQuality.dataType;
