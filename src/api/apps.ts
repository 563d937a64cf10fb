import { z } from "zod";
import { AuditFields, Guid } from "./common";

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
