import { z } from "zod";
import { type EncodedPath, type GmsClient, listBare, NotFoundError, path } from "../client";
import { type FindCreated, Guid, HttpUrl, JsonObject, Timestamp } from "./common";
import { workspacesApi } from "./workspaces";

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

/** What the last processing run recorded, as the code uses it. */
export type IndexingOutcome = { documents: number; characters: number; contentType: string } | { error: string };

/** Chunk size and overlap in characters. */
export interface Splitting {
  chunkSize: number;
  chunkOverlap: number;
}

/** A Context Source as the code uses it. */
export type ContextSourceRecord = {
  guid: string;
  name: string;
  /** The address the service loads from. */
  url: string;
  loaderId: string;
  loaderConfig: LoaderConfigItem[];
  splitterConfig: Splitting;
  indexingStatus: IndexingStatus;
  indexedAt: string | null;
  indexingMetadata: IndexingOutcome | null;
  createdAt: string | undefined;
  updatedAt: string | undefined;
};

const toIndexingOutcome = (metadata: IndexingMetadata | null): IndexingOutcome | null =>
  metadata === null
    ? null
    : "error" in metadata
      ? { error: metadata.error }
      : { documents: metadata.documents, characters: metadata.characters, contentType: metadata.content_type };

export const toContextSourceRecord = (source: ContextSource): ContextSourceRecord => ({
  guid: source.guid,
  name: source.name,
  url: source.url,
  loaderId: source.loader_id,
  loaderConfig: source.loader_config,
  splitterConfig: { chunkSize: source.splitter_config.chunk_size, chunkOverlap: source.splitter_config.chunk_overlap },
  indexingStatus: source.indexing_status,
  indexedAt: source.indexed_at,
  indexingMetadata: toIndexingOutcome(source.indexing_metadata),
  createdAt: source.created_at,
  updatedAt: source.updated_at,
});

/** What PUT replaces: all three are required. */
export interface ContextSourceConfig {
  name: string;
  loaderConfig: LoaderConfigItem[];
  splitterConfig: Splitting;
}

const collectionPath = (context: string): EncodedPath => path`/contexts/${context}/context_sources`;
const recordPath = (context: string, guid: string): EncodedPath => path`/contexts/${context}/context_sources/${guid}`;

/** Context Sources live under their Context: every route but processing names it. */
export const contextSourcesApi = {
  /** The source's own path (to delete an abandoned create). */
  recordPath,
  /** The sources of a Context: a bare array with no paging. */
  async list(client: GmsClient, context: string): Promise<ContextSourceRecord[]> {
    return (await listBare(client, { path: collectionPath(context), item: ContextSource })).map(toContextSourceRecord);
  },
  /** Create reads `url` only: the loader is always the Files loader with an empty configuration. */
  async create(client: GmsClient, context: string, body: ContextSourceCreate, findCreated: FindCreated): Promise<ContextSourceRecord> {
    return toContextSourceRecord(await client.create({ path: collectionPath(context), body, schema: ContextSource, findCreated }));
  },
  async get(client: GmsClient, context: string, guid: string): Promise<ContextSourceRecord> {
    return toContextSourceRecord(await client.request({ method: "GET", path: recordPath(context, guid), schema: ContextSource }));
  },
  async update(client: GmsClient, context: string, guid: string, config: ContextSourceConfig): Promise<ContextSourceRecord> {
    const body = {
      name: config.name,
      loaderConfig: config.loaderConfig,
      splitterConfig: { chunk_size: config.splitterConfig.chunkSize, chunk_overlap: config.splitterConfig.chunkOverlap },
    } satisfies ContextSourceUpdate;
    return toContextSourceRecord(await client.request({ method: "PUT", path: recordPath(context, guid), body, schema: ContextSource }));
  },
  async delete(client: GmsClient, context: string, guid: string): Promise<void> {
    await client.request({ method: "DELETE", path: recordPath(context, guid), schema: z.unknown() });
  },
  /** Dispatches processing and returns at once. Dispatching twice only processes twice, so the POST is retried like a GET. */
  async process(client: GmsClient, context: string, guid: string): Promise<void> {
    const body: ContextSourceProcess = { contextGuid: context };
    await client.request({
      method: "POST",
      path: path`/context_sources/${guid}/process`,
      body,
      schema: ProcessDispatched,
      replayable: true,
    });
  },
  /**
   * The Context a source belongs to: the service has no route from a source GUID to its Context, so
   * this looks through every Context of the workspace. A NotFoundError when none has it.
   */
  async contextOf(client: GmsClient, guid: string): Promise<string> {
    for (const context of await workspacesApi.currentContexts(client)) {
      const sources = await listBare(client, { path: collectionPath(context.guid), item: z.looseObject({ guid: z.string() }) });
      if (sources.some((source) => source.guid === guid)) return context.guid;
    }
    throw new NotFoundError({
      method: "GET",
      path: "/contexts/*/context_sources",
      status: 404,
      detail: `no Context of the workspace has a Context Source ${guid}`,
    });
  },
};
