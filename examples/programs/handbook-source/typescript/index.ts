import * as pulumi from "@pulumi/pulumi";
import { native as gms } from "pulumi-gms";

const handbook = gms.getContext({
    name: "Handbook",
});
const handbookSource = new gms.ContextSource("handbookSource", {
    context: handbook.then(handbook => handbook.guid),
    file: new pulumi.asset.FileAsset("handbook.md"),
    splitterConfig: {
        chunkSize: 400,
        chunkOverlap: 40,
    },
    process: true,
    waitForIndexing: true,
});
export const sourceGuid = handbookSource.guid;
export const indexingStatus = handbookSource.indexingStatus;
export const indexingMetadata = handbookSource.indexingMetadata;
