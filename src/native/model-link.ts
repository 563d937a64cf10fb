/**
 * The Model's derived `__linkTo` for the native class, derived as the dynamic `Model` derives it (see
 * src/resources/model.ts): the GUID of the one ProviderConnection of the Model's provider type among its
 * `dependsOn`. The native provider needs it as much as the dynamic one: the service links a Model on create
 * only, so the create must name the connection meant, and a Model linked elsewhere must be replaced.
 */
import type * as pulumi from "@pulumi/pulumi";
import { LINK_TO, meantConnection } from "../resources/model";
import type { DeriveInputs } from "./resource";

/** The Model's derived inputs: `__linkTo` when a connection is meant. */
export const modelLink: DeriveInputs = (args, opts) => ({
  [LINK_TO]: meantConnection(args.provider as pulumi.Input<string> | undefined, opts.dependsOn),
});
