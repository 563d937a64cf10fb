import { setImmediate as nextTurn } from "node:timers/promises";
import { TextDecoder } from "node:util";
import { FILES_LOADER_ID, IndexingStatus, type LoaderConfigItem } from "../../api/context-sources";
import { z } from "zod";
import { RecordTable, type StoredRecord, integer, json, nullable, oneOf, table, text } from "./columns";
import { storeModule } from "./module";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { STORED_MEDIA_TYPE_HEADER } from "./files";
import { type Caller, RECORD_COLUMNS, createdBy, newGuid, updatedBy } from "./records";
import { DEFAULT_SPLITTER, parseSplitterConfig, splitText } from "./splitter";
import type { ContextStore } from "./contexts";
import type { DocumentStore } from "./documents";
import type { WorkspaceStore } from "./workspaces";

// Spec: loader limits are not shown; the emulator's Files loader waits 30 s at most and reads 10 MiB at most.
/** How long the Files loader waits for the whole object. */
export const FETCH_TIMEOUT_MS = 30_000;
/** The largest object the Files loader reads. */
export const MAX_SOURCE_BYTES = 10 * 1024 * 1024;

const StoredLoaderConfig = z.array(
  z.looseObject({ name: z.string(), value: z.union([z.string(), z.number(), z.boolean()]), required: z.boolean().optional() }),
);
const StoredSplitter = z.object({ chunkSize: z.number(), chunkOverlap: z.number() });
const StoredOutcome = z.union([
  z.object({ documents: z.number(), characters: z.number(), contentType: z.string() }),
  z.object({ error: z.string() }),
]);

export const CONTEXT_SOURCES = table("context_sources", {
  id: integer,
  guid: text,
  workspace_id: integer,
  context_id: integer,
  name: text,
  url: text,
  loader_id: text,
  loader_config: json((value) => StoredLoaderConfig.safeParse(value)),
  splitter_config: json((value) => StoredSplitter.safeParse(value)),
  // Spec: the status values are not shown; the emulator moves pending -> processing -> indexed | failed.
  indexing_status: oneOf(IndexingStatus.options),
  indexed_at: nullable(text),
  indexing_metadata: nullable(json((value) => StoredOutcome.safeParse(value))),
  ...RECORD_COLUMNS,
});

const RECORDS = new RecordTable(CONTEXT_SOURCES);

/**
 * A Context Source is a loader plus splitter configuration that populates its Context. Processing runs
 * in the background after the dispatching request has been answered: the Files loader fetches the URL
 * over HTTP, the splitter cuts the text, and the chunks replace the Documents the source wrote before.
 * `indexingMetadata` is what the last finished run recorded; null before one finished.
 */
export type StoredContextSource = StoredRecord<typeof RECORDS>;

export class ContextSourceStore {
  /** Every processing run not finished yet (for `idle`). */
  private readonly running = new Set<Promise<void>>();
  /** The number of the latest dispatch per source with a run unfinished: only that run may record anything. */
  private readonly latest = new Map<number, number>();
  private dispatches = 0;

  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly contexts: ContextStore; readonly documents: DocumentStore; readonly workspaces: WorkspaceStore },
  ) {
    // A run cut short by a stop (database file kept) would otherwise stay `processing` for ever.
    RECORDS.updateAll(
      db,
      { indexingStatus: "processing" },
      { indexingStatus: "failed", indexingMetadata: { error: "interrupted: the emulator stopped while processing" } },
    );
  }

  /** The Context's non-deleted sources, oldest first. */
  list(caller: Caller, contextGuid: string): StoredContextSource[] {
    const context = this.store.contexts.get(caller, contextGuid);
    return RECORDS.list(this.db, { contextId: context.id, workspaceId: caller.workspaceId, deletedAt: null });
  }

  /**
   * Creates a pending source on the Files loader with an empty loader configuration and the default
   * splitter; counts against the `context_sources` allowance.
   */
  create(caller: Caller, contextGuid: string, input: { url: string }): StoredContextSource {
    const context = this.store.contexts.get(caller, contextGuid);
    return this.db.transaction(() => {
      this.store.workspaces.reserve(caller, "context_sources");
      const id = RECORDS.insert(this.db, {
        ...createdBy(caller, this.db.clock.iso()),
        guid: newGuid(),
        contextId: context.id,
        name: nameFromUrl(input.url),
        url: input.url,
        loaderId: FILES_LOADER_ID,
        loaderConfig: [],
        splitterConfig: DEFAULT_SPLITTER,
        indexingStatus: "pending",
      });
      return RECORDS.find(this.db, { id })!;
    });
  }

  /**
   * A non-deleted source of the Context. A missing Context is 404 `Context not found`; a missing source
   * is the generic 404 `Not Found` ("Some Context Source reads use a generic not-found response").
   */
  get(caller: Caller, contextGuid: string, guid: string): StoredContextSource {
    const context = this.store.contexts.get(caller, contextGuid);
    const source = RECORDS.find(this.db, { guid, contextId: context.id, workspaceId: caller.workspaceId, deletedAt: null });
    if (!source) throw new RecordNotFoundError("Not Found");
    return source;
  }

  /** Replaces name, splitter configuration and loader configuration (the loader itself stays the Files loader). */
  update(
    caller: Caller,
    contextGuid: string,
    guid: string,
    input: { name: string; splitterConfig: Record<string, unknown>; loaderConfig: LoaderConfigItem[] },
  ): StoredContextSource {
    const source = this.get(caller, contextGuid, guid);
    const splitter = parseSplitterConfig(input.splitterConfig);
    // Spec: what the Files loader does with loader configuration is not shown; the emulator stores it and ignores it.
    RECORDS.update(this.db, source.id, {
      name: input.name,
      splitterConfig: splitter,
      loaderConfig: input.loaderConfig,
      ...updatedBy(caller, this.db.clock.iso()),
    });
    return RECORDS.find(this.db, { id: source.id })!;
  }

  // Spec: deleting a source does not cascade (only Dataset deletion is said to); its Documents stay.
  softDelete(caller: Caller, contextGuid: string, guid: string): StoredContextSource {
    const source = this.get(caller, contextGuid, guid);
    RECORDS.update(this.db, source.id, { deletedAt: this.db.clock.iso() });
    return source;
  }

  /** Dispatches processing of a source of the given Context (404 `Context not found` / `Context Source not found`). */
  process(caller: Caller, guid: string, contextGuid: string): void {
    const context = this.store.contexts.get(caller, contextGuid);
    const source = RECORDS.find(this.db, { guid, contextId: context.id, workspaceId: caller.workspaceId, deletedAt: null });
    if (!source) throw new RecordNotFoundError("Context Source not found");
    this.dispatch(caller, source.id);
  }

  /** Dispatches processing of every listed source of the workspace; other GUIDs are ignored. */
  processBatch(caller: Caller, guids: string[]): void {
    for (const guid of new Set(guids)) {
      const source = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
      if (source) this.dispatch(caller, source.id);
    }
  }

  /** Resolves once every dispatched run has finished, including runs dispatched while waiting. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  /**
   * Marks the source `processing` at once (so nobody polling reads the previous run's outcome as this
   * one's) and starts a run after the current turn. A newer dispatch of the same source supersedes the
   * older run: the source stays `processing` until the newest run records its outcome.
   */
  private dispatch(caller: Caller, id: number): void {
    RECORDS.update(this.db, id, { indexingStatus: "processing" });
    const dispatch = ++this.dispatches;
    this.latest.set(id, dispatch);
    const run = nextTurn().then(() => this.run(caller, id, dispatch));
    this.running.add(run);
    void run.then(() => {
      this.running.delete(run);
      if (this.latest.get(id) === dispatch) this.latest.delete(id);
    });
  }

  /** One processing run. Never rejects: every failure ends in the source's `failed` state. */
  private async run(caller: Caller, id: number, dispatch: number): Promise<void> {
    try {
      const source = this.live(id, dispatch);
      if (!source) return;
      const file = await loadFile(source.url);
      const chunks = splitText(file.text, source.splitterConfig);
      // Spec: what a run records is not shown; the emulator tags each Document with its source and chunk
      // number and sums the run up in `indexing_metadata`.
      this.db.transaction(() => {
        if (!this.live(id, dispatch)) return;
        this.store.documents.replaceSourceDocuments(caller, {
          contextId: source.contextId,
          contextSourceId: id,
          chunks,
          metadata: (chunk) => ({ context_source: source.guid, chunk }),
        });
        RECORDS.update(this.db, id, {
          indexingStatus: "indexed",
          indexedAt: this.db.clock.iso(),
          indexingMetadata: { documents: chunks.length, characters: file.text.length, contentType: file.contentType },
        });
      });
    } catch (error) {
      this.recordFailure(id, dispatch, describe(error));
    }
  }

  private recordFailure(id: number, dispatch: number, message: string): void {
    try {
      if (!this.live(id, dispatch)) return;
      RECORDS.update(this.db, id, { indexingStatus: "failed", indexingMetadata: { error: message } });
    } catch {
      // The database itself failed: there is nowhere left to record the failure, and a background run must not crash the process.
    }
  }

  /**
   * The source, unless it was deleted, a newer dispatch superseded this run, or the store closed
   * meanwhile (the run then has nothing to do).
   */
  private live(id: number, dispatch: number): StoredContextSource | undefined {
    if (this.latest.get(id) !== dispatch || !this.db.sql.isOpen) return undefined;
    return RECORDS.find(this.db, { id, deletedAt: null });
  }
}

/** A loader failure whose message is fit for `indexing_metadata.error`. */
class LoaderError extends Error {
  override readonly name = "LoaderError";
}

/**
 * The Files loader: GETs the URL (redirects followed, {@link FETCH_TIMEOUT_MS} for the whole body, at
 * most {@link MAX_SOURCE_BYTES}) and decodes text (`text/*`, JSON) by the charset the response names.
 * The type is the uploader's for the emulator's own signed URLs, which serve most types as octet-stream.
 */
async function loadFile(url: string): Promise<{ text: string; contentType: string }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: "follow" });
  if (!response.ok) {
    await response.body?.cancel();
    throw new LoaderError(`the source answered HTTP ${response.status}`);
  }
  const header = response.headers.get(STORED_MEDIA_TYPE_HEADER) ?? response.headers.get("content-type") ?? "";
  const contentType = header.split(";")[0]!.trim().toLowerCase();
  if (!(contentType.startsWith("text/") || contentType === "application/json" || contentType.endsWith("+json"))) {
    await response.body?.cancel();
    throw new LoaderError(`unsupported content type ${contentType || "(none)"}`);
  }
  const charset = /;\s*charset="?([^";\s]+)/i.exec(header)?.[1] ?? "utf-8";
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    await response.body?.cancel();
    throw new LoaderError(`unsupported charset ${charset}`);
  }
  return { text: decoder.decode(await readCapped(response)), contentType };
}

async function readCapped(response: Response): Promise<Uint8Array> {
  const tooLarge = `the source is larger than ${MAX_SOURCE_BYTES} bytes`;
  if (Number(response.headers.get("content-length")) > MAX_SOURCE_BYTES) {
    await response.body?.cancel();
    throw new LoaderError(tooLarge);
  }
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of response.body ?? []) {
    size += part.byteLength;
    // Leaving the loop early cancels the body stream.
    if (size > MAX_SOURCE_BYTES) throw new LoaderError(tooLarge);
    parts.push(part);
  }
  return Buffer.concat(parts);
}

/** The text recorded for a failed run: never a stack, never the (signed) URL. */
function describe(error: unknown): string {
  if (error instanceof LoaderError) return error.message;
  if (error instanceof Error && error.name === "TimeoutError") return `fetching the source timed out after ${FETCH_TIMEOUT_MS / 1000} s`;
  if (error instanceof TypeError && error.message === "fetch failed" && error.cause instanceof Error) {
    const cause = error.cause as Error & { code?: string };
    return `fetch failed: ${cause.message || cause.code || cause.name}`;
  }
  return error instanceof Error ? error.message : String(error);
}

// Spec: the initial name is not shown; the emulator uses the URL's last path segment, else its host.
function nameFromUrl(url: string): string {
  const parsed = new URL(url);
  const segment = parsed.pathname.split("/").filter(Boolean).pop();
  if (!segment) return parsed.hostname;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Opened by the Store as `store.contextSources` (./module.ts). */
export const contextSourceStore = storeModule(ContextSourceStore, [CONTEXT_SOURCES]);
