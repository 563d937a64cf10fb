/**
 * Workflow: a named record of an App. Its blocks are configured outside the public interface, so the
 * resource manages the record only: the name updates in place, another App replaces it.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { Guid } from "../api/common";
import { workflowsApi } from "../api/workflows";
import { type CreatedCandidate, type GmsClient, NotFoundError } from "../client";
import { failure, notInWorkspace } from "../provider/errors";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { defineKind } from "../provider/kind";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import * as shim from "../shims/workflow";

export const workflowKind = defineKind({
  name: "Workflow",
  description:
    "A Workflow of an App: it runs ordered blocks, each an Action. Blocks are configured outside " +
    "the public interface, so this resource manages the Workflow record (its name and App) only.",
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
  async create(client, inputs) {
    try {
      const body = { name: inputs.name!, app: inputs.app! };
      return await workflowsApi.create(client, body, () => findWorkflows(client, inputs));
    } catch (error) {
      const what = `Cannot create Workflow "${inputs.name}"`;
      if (error instanceof NotFoundError) throw notInWorkspace(what, `App ${inputs.app}`, "set app to the GUID of an existing App", error);
      throw failure(what, error);
    }
  },
  findCreated: findWorkflows,
  async read(client, guid) {
    return workflowsApi.get(client, guid);
  },
  async update(client, guid, news) {
    // The only field PUT accepts, and it requires it.
    return workflowsApi.update(client, guid, { name: news.name! });
  },
  async delete(client, guid) {
    await workflowsApi.delete(client, guid);
  },
});

/** The Workflows that match what a create sends (see Kind.findCreated). */
async function findWorkflows(
  client: GmsClient,
  inputs: { name?: string | undefined; app?: string | undefined },
): Promise<CreatedCandidate[]> {
  const workflows = await workflowsApi.listOfApp(client, inputs.app!);
  return workflows
    .filter((workflow) => workflow.name === inputs.name)
    .map((workflow) => ({ guid: workflow.guid, createdAt: workflow.createdAt }));
}

export type WorkflowArgs = KindArgs<typeof workflowKind>;
export interface Workflow extends KindOutputs<typeof workflowKind> {}
export class Workflow extends GmsResource {
  constructor(name: string, args: WorkflowArgs, opts?: pulumi.CustomResourceOptions) {
    super(workflowKind, shim, name, args, opts);
  }
}
