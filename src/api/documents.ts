import { z } from "zod";
import { Guid, JsonObject, PageQuery, Timestamp } from "./common";

/** A Document: one indexed unit of a Context. */
export const Document = z.object({
  guid: Guid,
  content: z.string(),
  filter: z.string().nullable(),
  metadata: JsonObject,
  embedding: z.array(z.number()).nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Document = z.infer<typeof Document>;

/** `query` narrows the list to Documents whose content contains it (case-insensitive). */
export const DocumentListQuery = PageQuery.extend({ query: z.string().optional() });
export type DocumentListQuery = z.infer<typeof DocumentListQuery>;

/**
 * The fields create and update take: `content`, or `text` for compatible clients (content wins when both
 * are sent); `meta_data` is the older clients' name of `metadata`.
 */
const DocumentFields = z.object({
  content: z.string().optional(),
  text: z.string().optional(),
  filter: z.string().nullable().optional(),
  metadata: JsonObject.optional(),
  meta_data: JsonObject.optional(),
});

export const DocumentCreate = DocumentFields.refine((body) => body.content !== undefined || body.text !== undefined, {
  error: "content or text is required",
  path: ["content"],
});
export type DocumentCreate = z.infer<typeof DocumentCreate>;

export const DocumentCreated = z.object({
  docs: z.array(Guid),
  status: z.literal("success"),
});
export type DocumentCreated = z.infer<typeof DocumentCreated>;

/** PUT takes the Document fields; the ones sent replace the stored ones, at least one is required. */
export const DocumentUpdate = DocumentFields.refine((body) => Object.values(body).some((value) => value !== undefined), {
  error: "content, filter or metadata is required",
});
export type DocumentUpdate = z.infer<typeof DocumentUpdate>;

/** Bulk delete's optional `filter`, read from the JSON body or the query string. */
export const DocumentBulkDelete = z.object({ filter: z.string().nullable().optional() });
export type DocumentBulkDelete = z.infer<typeof DocumentBulkDelete>;

/** The answer of embed and bulk delete. */
export const DocumentStatus = z.object({ status: z.literal("success") });
export type DocumentStatus = z.infer<typeof DocumentStatus>;
