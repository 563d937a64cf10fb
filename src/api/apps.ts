/** The App endpoints, and the Action list under an App. */
import { z } from "zod";
import type { GmsClient } from "../client";
import { AuditFields, type FindCreated, Guid } from "./common";
import { call, createWith, endpoint, listAll } from "./endpoint";
import { wire } from "./wire";

export const App = wire(
  z.object({
    guid: Guid,
    name: z.string(),
    description: z.string().nullable(),
    slug: z.string(),
    ...AuditFields,
  }),
);
/** An App as the code uses it. */
export type AppRecord = z.output<typeof App>;

export const AppCreate = wire(
  z.object({
    name: z.string().min(1),
    description: z.string().nullable().optional(),
  }),
);
export type AppCreate = z.output<typeof AppCreate>;

/** PUT takes `name`, `description`, either or both. */
export const AppUpdate = wire(
  z
    .object({
      name: z.string().min(1).optional(),
      description: z.string().nullable().optional(),
    })
    // The spec: `name`, `description`, either or both; an empty body changes nothing and is refused.
    .refine((body) => Object.values(body).some((value) => value !== undefined), {
      error: "name or description is required",
    }),
);
export type AppUpdate = z.output<typeof AppUpdate>;

/** An Action as listed under its App: guid, name, action_type, model, audit fields. */
export const ActionSummary = wire(
  z.object({
    guid: Guid,
    name: z.string(),
    action_type: z.string(),
    model: z.string().nullable(),
    ...AuditFields,
  }),
);
/** An Action of an App as the code uses it. */
export type ActionRecord = z.output<typeof ActionSummary>;

export const appEndpoints = {
  list: endpoint({ method: "GET", path: "/apps", response: App, list: "envelope" }),
  create: endpoint({ method: "POST", path: "/apps", body: AppCreate, response: App }),
  get: endpoint({ method: "GET", path: "/apps/{guid}", response: App }),
  update: endpoint({ method: "PUT", path: "/apps/{guid}", body: AppUpdate, response: App, shown: false }),
  /** Answers the App once more (a soft delete). */
  delete: endpoint({ method: "DELETE", path: "/apps/{guid}", response: App }),
  actions: endpoint({ method: "GET", path: "/apps/{guid}/actions", response: ActionSummary, list: "bare" }),
};

export const appsApi = {
  list: (client: GmsClient) => listAll(client, appEndpoints.list),
  create: (client: GmsClient, body: AppCreate, findCreated: FindCreated) => createWith(client, appEndpoints.create, { body, findCreated }),
  get: (client: GmsClient, guid: string) => call(client, appEndpoints.get, { params: { guid } }),
  /** A bare array that honours skip/limit: paged until a short page. */
  actions: (client: GmsClient, guid: string) => listAll(client, appEndpoints.actions, { params: { guid } }),
};
