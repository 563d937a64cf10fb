/**
 * `pulumi-gms discover`: every object of every kind in a workspace, made into the document `pulumi import --file`
 * reads, or into the programs that adopt them (src/cli/discover.ts is the command, ./command the run). Listing
 * (./list), naming (./names), what is left out (./plan; the stack's own objects, ./stack; what the flags pick,
 * ./select) and what the import cannot know (./write-only), the project's language (./program); the programs
 * (./adopt, converted by ./convert), one per App with `--split-by app` (./split), and the commands printed to bring
 * each to its first `up` (./steps, the state backend's from ./backend).
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
