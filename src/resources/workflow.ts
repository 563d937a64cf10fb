/**
 * Workflow: a named record of an App. Its blocks are configured outside the public interface, so the
 * resource manages the record only: the name updates in place, another App replaces it. Its operations are
 * derived from its endpoint entries (src/api/workflows.ts); its quirks: a lost create is looked up among its
 * App's Workflows, every PUT requires the name, and a missing App is named as such.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { Guid } from "../api/common";
import { WorkflowSummary, workflowEndpoints } from "../api/workflows";
import { NotFoundError } from "../client";
import { failure, notInWorkspace } from "../provider/errors";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { restKind } from "../provider/rest";
import { AppRef } from "../provider/workspace-form";
import * as shim from "../shims/workflow";

export const workflowKind = restKind(
  {
    name: "Workflow",
    description:
      "A Workflow of an App: it runs ordered blocks, each an Action. Blocks are configured outside " +
      "the public interface, so this resource manages the Workflow record (its name and App) only.",
    quirks: [
      "Blocks are configured outside the public interface: the resource manages the Workflow record only, and a Workflow without blocks cannot be " +
        "triggered (404 `Workflow has no blocks`).",
    ],
    lostOnDelete:
      "a Workflow's blocks are configured outside the public interface: the resource manages its name and App, and a " +
      "Workflow a program deletes (pulumi destroy, a replacement) cannot be made again with its blocks",
    workspaceSection: "Workflow records, by logical name (their blocks are configured outside the public interface).",
    identity: [["app", "name"]],
    inputs: {
      name: updatable(
        z.string().min(1, "must not be empty"),
        "The Workflow's name; its slug is generated from it on create and kept when it is renamed.",
        { required: true },
      ),
      app: replaceOnly(Guid, "The GUID of the App the Workflow belongs to; another App replaces the Workflow.", { required: true }),
    },
    outputs: {
      guid: computed(z.string(), "The Workflow's GUID."),
      slug: computed(z.string(), "The slug the service generated from the name at creation."),
      createdAt: computed(z.string().optional(), "Creation time (ISO 8601), when the service reports it."),
      updatedAt: computed(z.string().optional(), "Last update time (ISO 8601), when the service reports it."),
    },
    workspace: {
      form: () => ({ app: AppRef.describe(`${AppRef.description} Another App replaces the Workflow.`) }),
      toArgs: (_key, entry, context) => ({ args: { ...entry, app: context.appGuid(entry.app) } }),
    },
  },
  // The App's list shows no element fields in the spec: it is read as summaries.
  { ...workflowEndpoints, list: { ...workflowEndpoints.ofApp, response: WorkflowSummary } },
  {
    label: (inputs) => `Workflow "${inputs.name}"`,
    listBy: { guid: "app" },
    // The only field PUT accepts, and it requires it.
    alwaysSent: ["name"],
    async explain(_client, error, operation, inputs) {
      if (operation === "update") return error;
      const what = `Cannot create Workflow "${inputs.name}"`;
      if (error instanceof NotFoundError) return notInWorkspace(what, `App ${inputs.app}`, "set app to the GUID of an existing App", error);
      return failure(what, error);
    },
  },
);

export type WorkflowArgs = KindArgs<typeof workflowKind>;
export interface Workflow extends KindOutputs<typeof workflowKind> {}
export class Workflow extends GmsResource {
  constructor(name: string, args: WorkflowArgs, opts?: pulumi.CustomResourceOptions) {
    super(workflowKind, shim, name, args, opts);
  }
}
