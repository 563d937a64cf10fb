/** The Context Source endpoints: sources under their Context, and their processing. */
import { z } from "zod";
import { type GmsClient, NotFoundError } from "../client";
import { DeleteMessage, Guid, HttpUrl, JsonObject, Timestamp } from "./common";
import { call, endpoint, pathOf } from "./endpoint";
import { wire } from "./wire";
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

/** Chunk size and overlap in characters, as the wire names them (the emulator's shape; the spec does not show it). */
const SplitterFields = z.object({
  chunk_size: z.number().int(),
  chunk_overlap: z.number().int(),
});
/** The splitter configuration, the one declaration of it: the answer's `splitter_config`, and what PUT's `splitterConfig` is encoded from. */
export const SplitterConfig = wire(SplitterFields);
/** Chunk size and overlap in characters. */
export type Splitting = z.output<typeof SplitterConfig>;

export const IndexingStatus = z.enum(["pending", "processing", "indexed", "failed"]);
export type IndexingStatus = z.infer<typeof IndexingStatus>;

/**
 * What the last processing run recorded: `{ documents, characters, content_type }` once indexed, `{ error }` once
 * failed; null before the first run ends.
 */
const IndexingMetadata = z.union([
  z.strictObject({ documents: z.number().int(), characters: z.number().int(), content_type: z.string() }),
  z.strictObject({ error: z.string() }),
]);

const ContextSourceFields = z.object({
  guid: Guid,
  name: z.string(),
  url: z.string(),
  loader_id: Guid,
  loader_config: z.array(LoaderConfigItem),
  splitter_config: SplitterFields,
  indexing_status: IndexingStatus,
  indexed_at: Timestamp.nullable(),
  indexing_metadata: IndexingMetadata.nullable(),
  // Spec: "creator, timestamps" without their names; the emulator answers them as for Apps.
  created_by_id: z.string().optional(),
  created_at: Timestamp.optional(),
  updated_at: Timestamp.optional(),
});
export const ContextSource = wire(ContextSourceFields);

/** A Context Source as the code uses it. */
export type ContextSourceRecord = z.output<typeof ContextSource>;

/** Only `url` is read: the loader is always the Files loader with an empty configuration. */
export const ContextSourceCreate = wire(
  z.object({
    url: HttpUrl,
  }),
);

/**
 * PUT replaces `name`, `splitterConfig` and `loaderConfig` (all required, camelCase on the wire).
 * `splitterConfig` is taken as any object (SplitterConfig encoded): its keys are checked by the store (400
 * `invalid splitter configuration`).
 */
export const ContextSourceUpdate = wire(
  z.object({
    name: z.string().min(1),
    splitterConfig: JsonObject,
    loaderConfig: z.array(LoaderConfigItem),
  }),
);
export type ContextSourceUpdate = z.output<typeof ContextSourceUpdate>;

export const ContextSourceProcess = wire(z.object({ contextGuid: Guid }));
export type ContextSourceProcess = z.output<typeof ContextSourceProcess>;

/** Batch processing: GUIDs that match no Context Source of the workspace are ignored. */
export const ContextSourceProcessBatch = wire(z.object({ sources: z.array(z.string()) }));
export type ContextSourceProcessBatch = z.output<typeof ContextSourceProcessBatch>;

export const ProcessDispatched = wire(z.object({ msg: z.literal("success") }));
export type ProcessDispatched = z.output<typeof ProcessDispatched>;

/** What PUT replaces: all three are required. */
export type ContextSourceConfig = Omit<ContextSourceUpdate, "splitterConfig"> & { splitterConfig: Splitting };

const SOURCES = "/contexts/{contextGuid}/context_sources";

export const contextSourceEndpoints = {
  /** The sources of a Context: a bare array with no paging (spec). */
  list: endpoint({ method: "GET", path: SOURCES, response: wire(z.array(ContextSourceFields)) }),
  create: endpoint({ method: "POST", path: SOURCES, body: ContextSourceCreate, response: ContextSource }),
  get: endpoint({ method: "GET", path: `${SOURCES}/{guid}`, response: ContextSource }),
  update: endpoint({ method: "PUT", path: `${SOURCES}/{guid}`, body: ContextSourceUpdate, response: ContextSource }),
  /** Spec: the response body is not shown; the emulator answers `{ message: "Context Source <guid> deleted" }`. */
  delete: endpoint({ method: "DELETE", path: `${SOURCES}/{guid}`, response: DeleteMessage, shown: false }),
  /** Spec: the body's `contextGuid` is required; the emulator answers 404 unless the source belongs to that Context. */
  process: endpoint({ method: "POST", path: "/context_sources/{guid}/process", body: ContextSourceProcess, response: ProcessDispatched }),
  processBatch: endpoint({
    method: "POST",
    path: "/context_sources/process_batch",
    body: ContextSourceProcessBatch,
    response: ProcessDispatched,
  }),
};

/** Context Sources live under their Context: every route but processing names it. */
export const contextSourcesApi = {
  async list(client: GmsClient, context: string): Promise<ContextSourceRecord[]> {
    return await call(client, contextSourceEndpoints.list, { params: { contextGuid: context } });
  },
  async get(client: GmsClient, context: string, guid: string): Promise<ContextSourceRecord> {
    return await call(client, contextSourceEndpoints.get, { params: { contextGuid: context, guid } });
  },
  async update(client: GmsClient, context: string, guid: string, config: ContextSourceConfig): Promise<ContextSourceRecord> {
    const body = { ...config, splitterConfig: z.encode(SplitterConfig, config.splitterConfig) };
    return await call(client, contextSourceEndpoints.update, { params: { contextGuid: context, guid }, body });
  },
  /** Dispatches processing and returns at once. Dispatching twice only processes twice, so the POST is retried like a GET. */
  async process(client: GmsClient, context: string, guid: string): Promise<void> {
    const entry = contextSourceEndpoints.process;
    await client.request({
      method: entry.method,
      path: pathOf(entry, { guid }),
      body: z.encode(ContextSourceProcess, { contextGuid: context }),
      schema: entry.response,
      replayable: true,
    });
  },
  /**
   * The Context a source belongs to: the service has no route from a source GUID to its Context, so
   * this looks through every Context of the workspace. A NotFoundError when none has it.
   */
  async contextOf(client: GmsClient, guid: string): Promise<string> {
    for (const context of await workspacesApi.currentContexts(client)) {
      const sources = await contextSourcesApi.list(client, context.guid);
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
