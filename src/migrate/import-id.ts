/**
 * The id `pulumi import` passes to the native provider's Read for each kind: the object's GUID, the dynamic
 * resource's id as it is, for every kind. The plugin reads an imported object by its GUID alone (src/plugin/
 * router.ts), and a Context Source, which the API reaches only under its Context, finds that Context by its
 * GUID (`contextSourcesApi.contextOf`), so no kind needs a composite id such as `<contextGuid>/<sourceGuid>`.
 * Keeping the GUID also keeps the resource's `id` what it was, so nothing that refers to it sees a change.
 */
import type { KindName } from "../provider/kind";
import type { StateResource } from "./stack-export";

const byGuid = (resource: StateResource): string => resource.id!;

export const importIds = {
  App: byGuid,
  ProviderConnection: byGuid,
  Model: byGuid,
  Workflow: byGuid,
  Dataset: byGuid,
  Eval: byGuid,
  Experiment: byGuid,
  Skill: byGuid,
  ContextSource: byGuid,
  FineTune: byGuid,
} satisfies Record<KindName, (resource: StateResource) => string>;
