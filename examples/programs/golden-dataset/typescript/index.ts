import * as pulumi from "@pulumi/pulumi";
import { native as gms } from "pulumi-gms";

const draftReply = gms.getAction({
    app: "Support",
    name: "Draft reply",
});
const records = gms.getDataRecords({
    app: "Support",
    limit: 3,
});
const golden = new gms.Dataset("golden", {
    name: "Golden answers",
    description: "Replies a support lead reviewed",
    app: draftReply.then(draftReply => draftReply.app),
    data: [
        records.then(records => records[0].guid),
        records.then(records => records[1].guid),
        records.then(records => records[2].guid),
    ],
});
export const datasetGuid = golden.guid;
export const datasetRecords = golden.data;
