/** The Workspace endpoints: the workspaces of the key's user, the one the key selects, and their related resources. */
import { z } from "zod";
import type { GmsClient } from "../client";
import { DeleteMessage, Guid, Timestamp } from "./common";
import { call, endpoint } from "./endpoint";
import { wire } from "./wire";

/**
 * A Workspace as every Workspace route returns it. Spec: the names of its deleted, timestamp and creator fields are
 * not shown; the emulator answers these (`deleted` always false, as deleted workspaces are never returned), and the
 * client relies on none of them.
 */
export const Workspace = wire(
  z.object({
    guid: Guid,
    slug: z.string(),
    name: z.string(),
    deleted: z.boolean().optional(),
    created_at: Timestamp.optional(),
    updated_at: Timestamp.optional(),
    created_by_id: z.string().optional(),
  }),
);
/** The workspace as the code uses it. */
export type WorkspaceRecord = z.output<typeof Workspace>;

export const WorkspaceCreate = wire(
  z.object({
    name: z.string().min(1),
    slug: z.string().min(1),
  }),
);
export type WorkspaceCreate = z.output<typeof WorkspaceCreate>;

export const WorkspaceUpdate = wire(z.object({ name: z.string().min(1) }));
export type WorkspaceUpdate = z.output<typeof WorkspaceUpdate>;

/** Spec: the element fields of the related-resource arrays are not shown; the emulator keeps them compact. */
export const WorkspaceApp = wire(z.object({ guid: Guid, name: z.string(), slug: z.string() }));
export type WorkspaceApp = z.output<typeof WorkspaceApp>;

export const WorkspaceContext = wire(z.object({ guid: Guid, name: z.string() }));
export type WorkspaceContext = z.output<typeof WorkspaceContext>;

export const WorkspaceProvider = wire(z.object({ guid: Guid, name: z.string().nullable(), nickname: z.string() }));
export type WorkspaceProvider = z.output<typeof WorkspaceProvider>;

export const UsageEntry = wire(z.object({ feature: z.string(), used: z.number().int(), limit: z.number().int() }));
export type UsageEntry = z.output<typeof UsageEntry>;

export const workspaceEndpoints = {
  list: endpoint({ method: "GET", path: "/workspaces", response: Workspace, list: "envelope" }),
  /** The Workspace the API key selects. */
  current: endpoint({ method: "GET", path: "/workspaces/current", response: Workspace }),
  create: endpoint({ method: "POST", path: "/workspaces", body: WorkspaceCreate, response: Workspace }),
  get: endpoint({ method: "GET", path: "/workspaces/{guid}", response: Workspace }),
  update: endpoint({ method: "PUT", path: "/workspaces/{guid}", body: WorkspaceUpdate, response: Workspace }),
  /** Spec: response not shown; the emulator answers `{ message: "Workspace <guid> deleted" }`. */
  delete: endpoint({ method: "DELETE", path: "/workspaces/{guid}", response: DeleteMessage, shown: false }),
  // The related-resource lists: bare arrays with no paging (one request answers every element).
  apps: endpoint({ method: "GET", path: "/workspaces/{guid}/apps", response: z.array(WorkspaceApp) }),
  contexts: endpoint({ method: "GET", path: "/workspaces/{guid}/context", response: z.array(WorkspaceContext) }),
  providers: endpoint({ method: "GET", path: "/workspaces/{guid}/providers", response: z.array(WorkspaceProvider) }),
  usage: endpoint({ method: "GET", path: "/workspaces/{guid}/usage", response: z.array(UsageEntry) }),
};

/** The workspace the API key selects. */
export const currentWorkspace = (client: GmsClient): Promise<WorkspaceRecord> => call(client, workspaceEndpoints.current);

export const workspacesApi = {
  current: currentWorkspace,
  apps: (client: GmsClient, workspace: string): Promise<WorkspaceApp[]> =>
    call(client, workspaceEndpoints.apps, { params: { guid: workspace } }),
  /** The Contexts of the workspace the key selects (two requests: the workspace, then its list). */
  async currentContexts(client: GmsClient): Promise<WorkspaceContext[]> {
    const workspace = await currentWorkspace(client);
    return call(client, workspaceEndpoints.contexts, { params: { guid: workspace.guid } });
  },
  /** The usage of the workspace the key selects, one entry per feature. */
  async currentUsage(client: GmsClient): Promise<UsageEntry[]> {
    const workspace = await currentWorkspace(client);
    return call(client, workspaceEndpoints.usage, { params: { guid: workspace.guid } });
  },
};
