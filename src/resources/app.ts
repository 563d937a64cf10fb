/**
 * App: groups Actions, Workflows, Data records and fine-tunes. Name and description update in place. Its
 * operations are derived from its endpoint entries (src/api/apps.ts): nothing here is App-specific code.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { appEndpoints } from "../api/apps";
import { computed, updatable } from "../provider/fields";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { restKind } from "../provider/rest";
import * as shim from "../shims/app";

export const appKind = restKind(
  {
    name: "App",
    description: "An App of the workspace: it groups Actions, Workflows, Data records and fine-tunes.",
    quirks: [
      "Creating an App fails with 429 once the workspace's App allowance is used up; `pulumi-gms` reports it as the allowance, not as a rate " +
        "limit to wait out.",
      "An App's Actions are configured outside the public interface: deleting the App (a destroy, a replacement) takes them and its Data records " +
        "out of reach, and no program can make them again.",
    ],
    lostOnDelete:
      "an App's Actions are configured outside the public interface, and its Data records log what ran: once a program " +
      "deletes the App (pulumi destroy, a replacement), they are out of reach, and no program can make the Actions again",
    workspaceSection: "Apps, by logical name.",
    identity: [["name"]],
    inputs: {
      name: updatable(z.string().min(1, "must not be empty"), "The App's name; its slug is generated from it on create.", {
        required: true,
      }),
      description: updatable(z.string().nullable(), "What the App is for.", { default: null }),
    },
    outputs: {
      guid: computed(z.string(), "The App's GUID."),
      slug: computed(z.string(), "The slug the service generated from the name at creation."),
      createdAt: computed(z.string(), "Creation time (ISO 8601)."),
      updatedAt: computed(z.string(), "Last update time (ISO 8601)."),
    },
  },
  appEndpoints,
  // A failed create names the App: `Cannot create App "Support"` (429 once the workspace's App allowance is used up).
  { label: (inputs) => `App "${inputs.name}"` },
);

export type AppArgs = KindArgs<typeof appKind>;
export interface App extends KindOutputs<typeof appKind> {}
export class App extends GmsResource {
  constructor(name: string, args: AppArgs, opts?: pulumi.CustomResourceOptions) {
    super(appKind, shim, name, args, opts);
  }
}
