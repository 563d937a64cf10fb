import * as pulumi from "@pulumi/pulumi";
import { native as gms } from "pulumi-gms";

const webSearch = new gms.Skill("webSearch", {
    name: "web-search",
    type: "web",
});
export const skillGuid = webSearch.guid;
