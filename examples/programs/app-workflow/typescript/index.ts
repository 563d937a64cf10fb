import * as pulumi from "@pulumi/pulumi";
import { native as gms } from "pulumi-gms";

const helpdesk = new gms.App("helpdesk", {
    name: "Helpdesk",
    description: "Answers customer questions",
});
const triage = new gms.Workflow("triage", {
    name: "Triage",
    app: helpdesk.id,
});
export const appGuid = helpdesk.guid;
export const appSlug = helpdesk.slug;
export const workflowSlug = triage.slug;
