/** The workspace the API key selects, and the related-resource lists the service keeps under it. */
import type { z } from "zod";
import { Workspace } from "../api/workspaces";
import { type GmsClient, listBare, path } from "../client";

export const currentWorkspace = (client: GmsClient): Promise<Workspace> =>
  client.request({ method: "GET", path: path`/workspaces/current`, schema: Workspace });

/** `/workspaces/{guid}/<related>` of the workspace the key selects: a bare array with no paging. */
export async function currentWorkspaceList<T extends z.ZodType>(
  client: GmsClient,
  related: "apps" | "context" | "providers" | "usage",
  item: T,
): Promise<Array<z.output<T>>> {
  const workspace = await currentWorkspace(client);
  return listBare(client, { path: path`/workspaces/${workspace.guid}/${related}`, item });
}
