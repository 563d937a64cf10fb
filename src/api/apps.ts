import { z } from "zod";
import { collect, type GmsClient, paginateEnvelope, paginateUntilShort, path } from "../client";
import { AuditFields, type FindCreated, Guid } from "./common";

export const App = z.object({
  guid: Guid,
  name: z.string(),
  description: z.string().nullable(),
  slug: z.string(),
  ...AuditFields,
});
export type App = z.infer<typeof App>;

export const AppCreate = z.object({
  name: z.string().min(1),
  description: z.string().nullable().optional(),
});
export type AppCreate = z.infer<typeof AppCreate>;

/** PUT takes `name`, `description`, either or both. */
export const AppUpdate = z
  .object({
    name: z.string().min(1).optional(),
    description: z.string().nullable().optional(),
  })
  .refine((body) => body.name !== undefined || body.description !== undefined, {
    error: "name or description is required",
  });
export type AppUpdate = z.infer<typeof AppUpdate>;

/** An Action as listed under its App: guid, name, action_type, model, audit fields. */
export const ActionSummary = z.object({
  guid: Guid,
  name: z.string(),
  action_type: z.string(),
  model: z.string().nullable(),
  ...AuditFields,
});
export type ActionSummary = z.infer<typeof ActionSummary>;

/** An App as the code uses it. */
export type AppRecord = {
  guid: string;
  name: string;
  description: string | null;
  slug: string;
  createdAt: string;
  updatedAt: string;
};

export const toAppRecord = (app: App): AppRecord => ({
  guid: app.guid,
  name: app.name,
  description: app.description,
  slug: app.slug,
  createdAt: app.created_at,
  updatedAt: app.updated_at,
});

/** An Action of an App as the code uses it. */
export type ActionRecord = {
  guid: string;
  name: string;
  actionType: string;
  model: string | null;
};

const toActionRecord = (action: ActionSummary): ActionRecord => ({
  guid: action.guid,
  name: action.name,
  actionType: action.action_type,
  model: action.model,
});

export const appsApi = {
  async list(client: GmsClient): Promise<AppRecord[]> {
    return (await collect(paginateEnvelope(client, { path: path`/apps`, item: App }))).map(toAppRecord);
  },
  async create(client: GmsClient, body: AppCreate, findCreated: FindCreated): Promise<AppRecord> {
    return toAppRecord(await client.create({ path: path`/apps`, body, schema: App, findCreated }));
  },
  async get(client: GmsClient, guid: string): Promise<AppRecord> {
    return toAppRecord(await client.request({ method: "GET", path: path`/apps/${guid}`, schema: App }));
  },
  /** The response is not used: callers read the App back. */
  async update(client: GmsClient, guid: string, body: AppUpdate): Promise<void> {
    await client.request({ method: "PUT", path: path`/apps/${guid}`, body, schema: z.unknown() });
  },
  async delete(client: GmsClient, guid: string): Promise<void> {
    await client.request({ method: "DELETE", path: path`/apps/${guid}`, schema: z.unknown() });
  },
  /** A bare array that honours skip/limit: paged until a short page. */
  async actions(client: GmsClient, guid: string): Promise<ActionRecord[]> {
    return (await collect(paginateUntilShort(client, { path: path`/apps/${guid}/actions`, item: ActionSummary }))).map(toActionRecord);
  },
};
