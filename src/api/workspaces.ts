import { z } from "zod";
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
