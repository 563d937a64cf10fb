/** App: groups Actions, Workflows, Data records and fine-tunes. Name and description update in place. */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { type AppUpdate, appsApi } from "../api/apps";
import type { CreatedCandidate, GmsClient } from "../client";
import { failure } from "../provider/errors";
import { computed, updatable } from "../provider/fields";
import { defineKind } from "../provider/kind";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import * as shim from "../shims/app";

export const appKind = defineKind({
  name: "App",
  description: "An App of the workspace: it groups Actions, Workflows, Data records and fine-tunes.",
  inputs: {
    name: updatable(z.string().min(1, "must not be empty"), "The App's name; its slug is generated from it on create.", { required: true }),
    description: updatable(z.string().nullable(), "What the App is for.", { default: null }),
  },
  outputs: {
    guid: computed(z.string(), "The App's GUID."),
    slug: computed(z.string(), "The slug the service generated from the name at creation."),
    createdAt: computed(z.string(), "Creation time (ISO 8601)."),
    updatedAt: computed(z.string(), "Last update time (ISO 8601)."),
  },
  async create(client, inputs) {
    try {
      const body = { name: inputs.name!, description: inputs.description };
      return await appsApi.create(client, body, () => findApps(client, inputs));
    } catch (error) {
      // For example 429 once the workspace App allowance is used up.
      throw failure(`Cannot create App "${inputs.name}"`, error);
    }
  },
  findCreated: findApps,
  async read(client, guid) {
    return appsApi.get(client, guid);
  },
  async update(client, guid, news, changed) {
    const body: AppUpdate = {};
    if (changed.has("name")) body.name = news.name;
    if (changed.has("description")) body.description = news.description;
    await appsApi.update(client, guid, body);
    return this.read(client, guid, {});
  },
  async delete(client, guid) {
    await appsApi.delete(client, guid);
  },
});

/** The Apps that match what a create sends (see Kind.findCreated). */
async function findApps(
  client: GmsClient,
  inputs: { name?: string | undefined; description?: string | null | undefined },
): Promise<CreatedCandidate[]> {
  const apps = await appsApi.list(client);
  return apps
    .filter((app) => app.name === inputs.name && app.description === inputs.description)
    .map((app) => ({ guid: app.guid, createdAt: app.createdAt }));
}

export type AppArgs = KindArgs<typeof appKind>;
export interface App extends KindOutputs<typeof appKind> {}
export class App extends GmsResource {
  constructor(name: string, args: AppArgs, opts?: pulumi.CustomResourceOptions) {
    super(appKind, shim, name, args, opts);
  }
}
