/**
 * The id `pulumi import` passes to the native provider's Read: the object's GUID, the dynamic resource's id as it is,
 * for every kind, so that no kind declares one. The plugin reads an imported object by its GUID alone (src/plugin/
 * router.ts), and a Context Source, which the API reaches only under its Context, finds that Context by its
 * GUID (`contextSourcesApi.contextOf`), so no kind needs a composite id such as `<contextGuid>/<sourceGuid>`.
 * Keeping the GUID also keeps the resource's `id` what it was, so nothing that refers to it sees a change.
 */
import type { StateResource } from "./stack-export";

/** The id `pulumi import` passes for a dynamic resource of any kind: its GUID, the resource's id. */
export const importIdOf = (resource: StateResource): string => resource.id!;
