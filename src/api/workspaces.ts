import { z } from "zod";
import { type GmsClient, listBare, path } from "../client";
import { Guid, Timestamp } from "./common";

/** Spec: not shown how the deleted state is named; the emulator answers `deleted` (always false, as deleted workspaces are never returned). */
export const Workspace = z.object({
  guid: Guid,
  slug: z.string(),
  name: z.string(),
  deleted: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by_id: z.string(),
});
export type Workspace = z.infer<typeof Workspace>;

export const WorkspaceCreate = z.object({
  name: z.string().min(1),
  slug: z.string().min(1),
});
export type WorkspaceCreate = z.infer<typeof WorkspaceCreate>;

export const WorkspaceUpdate = z.object({ name: z.string().min(1) });
export type WorkspaceUpdate = z.infer<typeof WorkspaceUpdate>;

/** Spec: the element fields of the related-resource arrays are not shown; the emulator keeps them compact. */
export const WorkspaceApp = z.object({ guid: Guid, name: z.string(), slug: z.string() });
export type WorkspaceApp = z.infer<typeof WorkspaceApp>;

export const WorkspaceContext = z.object({ guid: Guid, name: z.string() });
export type WorkspaceContext = z.infer<typeof WorkspaceContext>;

export const WorkspaceProvider = z.object({ guid: Guid, name: z.string().nullable(), nickname: z.string() });
export type WorkspaceProvider = z.infer<typeof WorkspaceProvider>;

export const UsageEntry = z.object({ feature: z.string(), used: z.number().int(), limit: z.number().int() });
export type UsageEntry = z.infer<typeof UsageEntry>;

/** The workspace as the code uses it. */
export type WorkspaceRecord = {
  guid: string;
  slug: string;
  name: string;
};

/** The workspace the API key selects. */
export async function currentWorkspace(client: GmsClient): Promise<WorkspaceRecord> {
  const workspace = await client.request({ method: "GET", path: path`/workspaces/current`, schema: Workspace });
  return { guid: workspace.guid, slug: workspace.slug, name: workspace.name };
}

/** The related-resource lists under a workspace: bare arrays with no paging. */
export const workspacesApi = {
  current: currentWorkspace,
  apps: (client: GmsClient, workspace: string): Promise<WorkspaceApp[]> =>
    listBare(client, { path: path`/workspaces/${workspace}/apps`, item: WorkspaceApp }),
  /** The Contexts of the workspace the key selects (two requests: the workspace, then its list). */
  async currentContexts(client: GmsClient): Promise<WorkspaceContext[]> {
    const workspace = await currentWorkspace(client);
    return listBare(client, { path: path`/workspaces/${workspace.guid}/context`, item: WorkspaceContext });
  },
  /** The usage of the workspace the key selects, one entry per feature. */
  async currentUsage(client: GmsClient): Promise<UsageEntry[]> {
    const workspace = await currentWorkspace(client);
    return listBare(client, { path: path`/workspaces/${workspace.guid}/usage`, item: UsageEntry });
  },
};
