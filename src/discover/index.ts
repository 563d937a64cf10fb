/**
 * `pulumi-gms discover`: every object of every kind in a workspace, made into the document `pulumi import --file`
 * reads (src/cli/discover.ts is the command). Listing (./list), naming (./names), what is left out and what the
 * import cannot know (./plan, ./write-only), the stack's own objects (./stack), the project's language (./program).
 */
import { currentWorkspace } from "../api/workspaces";
import type { GmsClient } from "../client";
import { listWorkspace } from "./list";
import { type Discovery, type DiscoveryOptions, planDiscovery } from "./plan";

/** Lists the workspace the client's key selects (its key checked first, by asking which workspace it selects) and plans its import. */
export async function discover(client: GmsClient, options: Omit<DiscoveryOptions, "workspace">): Promise<Discovery> {
  const workspace = await currentWorkspace(client);
  const objects = await listWorkspace(client);
  return planDiscovery(objects, { ...options, workspace: { guid: workspace.guid, name: workspace.name } });
}
