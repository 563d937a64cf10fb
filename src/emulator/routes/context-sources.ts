import type { ContextSource, ProcessDispatched } from "../../api/context-sources";
import { ContextSourceCreate, ContextSourceProcess, ContextSourceProcessBatch, ContextSourceUpdate } from "../../api/context-sources";
import type { ContextSourceRecord, IndexingOutcome } from "../store/context-sources";
import { type RouteModule, deleted, guidParam, params, parseBody } from "./wire";

export const presentContextSource = (source: ContextSourceRecord): ContextSource => ({
  guid: source.guid,
  name: source.name,
  url: source.url,
  loader_id: source.loaderId,
  loader_config: source.loaderConfig,
  splitter_config: { chunk_size: source.splitterConfig.chunkSize, chunk_overlap: source.splitterConfig.chunkOverlap },
  indexing_status: source.indexingStatus,
  indexed_at: source.indexedAt,
  indexing_metadata: source.indexingMetadata && presentOutcome(source.indexingMetadata),
  created_by_id: source.createdById,
  created_at: source.createdAt,
  updated_at: source.updatedAt,
});

const presentOutcome = (outcome: IndexingOutcome): NonNullable<ContextSource["indexing_metadata"]> =>
  "error" in outcome
    ? { error: outcome.error }
    : { documents: outcome.documents, characters: outcome.characters, content_type: outcome.contentType };

const BASE = "/contexts/:contextGuid/context_sources";

/** Context Sources under their Context, and the processing routes under `/context_sources`. */
export const contextSourceRoutes: RouteModule = (app, store) => {
  // Closing the server waits for background processing, so the store is not closed under a running job.
  app.addHook("onClose", () => store.contextSources.idle());

  // Spec: a bare array with no paging parameters; the emulator returns every source of the Context.
  app.get(BASE, async (request) => {
    const { contextGuid } = params(request, "contextGuid");
    return store.contextSources.list(request.caller, contextGuid).map(presentContextSource);
  });

  app.post(BASE, async (request) => {
    const { contextGuid } = params(request, "contextGuid");
    return presentContextSource(store.contextSources.create(request.caller, contextGuid, parseBody(ContextSourceCreate, request)));
  });

  app.get(`${BASE}/:guid`, async (request) => {
    const { contextGuid, guid } = params(request, "contextGuid", "guid");
    return presentContextSource(store.contextSources.get(request.caller, contextGuid, guid));
  });

  app.put(`${BASE}/:guid`, async (request) => {
    const { contextGuid, guid } = params(request, "contextGuid", "guid");
    return presentContextSource(store.contextSources.update(request.caller, contextGuid, guid, parseBody(ContextSourceUpdate, request)));
  });

  app.delete(`${BASE}/:guid`, async (request) => {
    const { contextGuid, guid } = params(request, "contextGuid", "guid");
    store.contextSources.softDelete(request.caller, contextGuid, guid);
    return deleted("Context Source", guid);
  });

  // Spec: the body's `contextGuid` is required; the emulator answers 404 unless the source belongs to that Context.
  app.post("/context_sources/:guid/process", async (request): Promise<ProcessDispatched> => {
    const guid = guidParam(request);
    store.contextSources.process(request.caller, guid, parseBody(ContextSourceProcess, request).contextGuid);
    return { msg: "success" };
  });

  app.post("/context_sources/process_batch", async (request): Promise<ProcessDispatched> => {
    store.contextSources.processBatch(request.caller, parseBody(ContextSourceProcessBatch, request).sources);
    return { msg: "success" };
  });
};
