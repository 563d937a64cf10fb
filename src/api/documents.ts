/** The Documents of a Context, under `/contexts/{contextGuid}/documents`. */
import { z } from "zod";
import { DeleteMessage, Guid, JsonObject, PageQuery, Timestamp } from "./common";
import { endpoint } from "./endpoint";
import { wire } from "./wire";

/** A Document: one indexed unit of a Context. */
export const Document = wire(
  z.object({
    guid: Guid,
    content: z.string(),
    filter: z.string().nullable(),
    metadata: JsonObject,
    embedding: z.array(z.number()).nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);
/** A Document as the code uses it. */
export type Document = z.output<typeof Document>;

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

export const DocumentCreate = wire(
  DocumentFields.refine((body) => body.content !== undefined || body.text !== undefined, {
    error: "content or text is required",
    path: ["content"],
  }),
);
export type DocumentCreate = z.output<typeof DocumentCreate>;

export const DocumentCreated = wire(
  z.object({
    docs: z.array(Guid),
    status: z.literal("success"),
  }),
);
export type DocumentCreated = z.output<typeof DocumentCreated>;

/** PUT takes the Document fields; the ones sent replace the stored ones, at least one is required. */
export const DocumentUpdate = wire(
  DocumentFields.refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: "content, filter or metadata is required",
  }),
);
export type DocumentUpdate = z.output<typeof DocumentUpdate>;

/** Bulk delete's optional `filter`, read from the JSON body or the query string. */
export const DocumentBulkDelete = z.object({ filter: z.string().nullable().optional() });
export type DocumentBulkDelete = z.infer<typeof DocumentBulkDelete>;

/** The answer of embed and bulk delete. */
export const DocumentStatus = wire(z.object({ status: z.literal("success") }));
export type DocumentStatus = z.output<typeof DocumentStatus>;

const BASE = "/contexts/{contextGuid}/documents";

export const documentEndpoints = {
  /** Also takes the `query` filter, which the emulator's route reads itself. */
  list: endpoint({ method: "GET", path: BASE, response: Document, list: "envelope", query: DocumentListQuery }),
  /** Creation may split the content into several Documents, hence `docs`. */
  create: endpoint({ method: "POST", path: BASE, body: DocumentCreate, response: DocumentCreated }),
  get: endpoint({ method: "GET", path: `${BASE}/{guid}`, response: Document }),
  /** Spec: the response is not shown; the emulator answers the updated Document. */
  update: endpoint({ method: "PUT", path: `${BASE}/{guid}`, body: DocumentUpdate, response: Document, shown: false }),
  /** Spec: the response is not shown; the emulator embeds at once and answers `{ status: "success" }`. */
  embed: endpoint({ method: "POST", path: `${BASE}/{guid}/embed`, response: DocumentStatus, shown: false }),
  /** Spec: the response is not shown; the emulator answers `{ message: "Document <guid> deleted" }`. */
  delete: endpoint({ method: "DELETE", path: `${BASE}/{guid}`, response: DeleteMessage, shown: false }),
  /**
   * Spec: whether `filter` travels in the body or the query is not shown; the emulator reads both (the body
   * wins), so the body is optional here.
   */
  deleteMany: endpoint({
    method: "DELETE",
    path: BASE,
    body: wire(DocumentBulkDelete.nullish()),
    response: DocumentStatus,
    query: DocumentBulkDelete,
  }),
};
