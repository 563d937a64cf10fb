import { z } from "zod";
import { Guid, HttpUrl, JsonObject, Timestamp } from "./common";

/**
 * The Files loader's id as `loader_id` reports it: the only loader, which create always fixes. The spec
 * does not show the real service's value; this is the emulator's.
 */
export const FILES_LOADER_ID = "f11e5000-10ad-4e00-8000-000000000001";

/** One loader configuration item: `name` and `value` required, `required` optional. */
// Spec: the value's type is not shown; the emulator accepts a string, a number or a boolean.
export const LoaderConfigItem = z.object({
  name: z.string(),
  value: z.union([z.string(), z.number(), z.boolean()]),
  required: z.boolean().optional(),
});
export type LoaderConfigItem = z.infer<typeof LoaderConfigItem>;

/** Chunk size and overlap in characters (the emulator's shape; the spec does not show it). */
export const SplitterConfig = z.object({
  chunk_size: z.number().int(),
  chunk_overlap: z.number().int(),
});
export type SplitterConfig = z.infer<typeof SplitterConfig>;

export const IndexingStatus = z.enum(["pending", "processing", "indexed", "failed"]);
export type IndexingStatus = z.infer<typeof IndexingStatus>;

/**
 * What the last processing run recorded: `{ documents, characters, content_type }` once indexed,
 * `{ error }` once failed; null before the first run ends.
 */
export const IndexingMetadata = z.union([
  z.object({ documents: z.number().int(), characters: z.number().int(), content_type: z.string() }),
  z.object({ error: z.string() }),
]);
export type IndexingMetadata = z.infer<typeof IndexingMetadata>;

export const ContextSource = z.object({
  guid: Guid,
  name: z.string(),
  url: z.string(),
  loader_id: Guid,
  loader_config: z.array(LoaderConfigItem),
  splitter_config: SplitterConfig,
  indexing_status: IndexingStatus,
  indexed_at: Timestamp.nullable(),
  indexing_metadata: IndexingMetadata.nullable(),
  // Spec: "creator, timestamps" without their names; the emulator answers them as for Apps.
  created_by_id: z.string().optional(),
  created_at: Timestamp.optional(),
  updated_at: Timestamp.optional(),
});
export type ContextSource = z.infer<typeof ContextSource>;

/** Only `url` is read: the loader is always the Files loader with an empty configuration. */
export const ContextSourceCreate = z.object({
  url: HttpUrl,
});
export type ContextSourceCreate = z.infer<typeof ContextSourceCreate>;

/**
 * PUT replaces `name`, `splitterConfig` and `loaderConfig` (all required, camelCase on the wire). The
 * splitter configuration's keys are checked by the store (400 `invalid splitter configuration`).
 */
export const ContextSourceUpdate = z.object({
  name: z.string().min(1),
  splitterConfig: JsonObject,
  loaderConfig: z.array(LoaderConfigItem),
});
export type ContextSourceUpdate = z.infer<typeof ContextSourceUpdate>;

export const ContextSourceProcess = z.object({ contextGuid: Guid });
export type ContextSourceProcess = z.infer<typeof ContextSourceProcess>;

/** Batch processing: GUIDs that match no Context Source of the workspace are ignored. */
export const ContextSourceProcessBatch = z.object({ sources: z.array(z.string()) });
export type ContextSourceProcessBatch = z.infer<typeof ContextSourceProcessBatch>;

export const ProcessDispatched = z.object({ msg: z.literal("success") });
export type ProcessDispatched = z.infer<typeof ProcessDispatched>;
