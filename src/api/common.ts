/**
 * Wire building blocks shared by every kind: identifiers, timestamps, pagination. The wire keeps the
 * service's own casing (mostly snake_case); camelCase names live inside the code only.
 */
import { z } from "zod";
// From the module itself, not the client index: the index reaches pagination, which imports this module.
import type { CreatedCandidate } from "../client/create";

export const Guid = z.uuid({ error: "must be a UUID" });
export const Timestamp = z.string();

/** An http(s) URL; anything else is the spec's "malformed URL" (400). */
export const HttpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

/** Any JSON object (metadata, nested input values). */
export const JsonObject = z.record(z.string(), z.unknown());

/** The audit fields most records carry, to spread into their shapes. */
export const AuditFields = {
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by_id: z.string(),
  last_updated_by_id: z.string().nullable(),
};

/**
 * The same audit fields for the kinds whose field names the spec does not show (Workflow, Experiment,
 * Model, Provider, Skill, Eval, Context Source): the emulator answers them as for Apps, and a client
 * reading a real service must not depend on them.
 */
export const UnnamedAuditFields = {
  created_at: Timestamp.optional(),
  updated_at: Timestamp.optional(),
  created_by_id: z.string().optional(),
  last_updated_by_id: z.string().nullable().optional(),
};

/** What a delete answers, `{ message: "<Kind> <guid> deleted" }` (the shape the spec shows for Providers). */
export const DeleteMessage = z.object({ message: z.string() });
export type DeleteMessage = z.infer<typeof DeleteMessage>;

/** `skip`/`limit` query numbers, defaults 0/100 (spec, Conventions). */
export const PageQuery = z.object({
  skip: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(0).default(100),
});
export type PageQuery = z.infer<typeof PageQuery>;

/** The standard pagination envelope `{data, total_count, has_next_page}`. */
export function Envelope<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    total_count: z.number().int(),
    has_next_page: z.boolean(),
  });
}

/** A path parameter that must be a UUID (a malformed one answers 400). */
export const GuidParams = z.object({ guid: Guid });

/** How a create whose answer was lost finds what it made (see `GmsClient.create`). */
export type FindCreated = () => Promise<CreatedCandidate[]>;
