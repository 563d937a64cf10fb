import { z } from "zod";
import type { DocumentCreate, DocumentUpdate } from "../../api/documents";
import { RecordTable, type StoredRecord, integer, json, nullable, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Caller, type Page, type Paged, RECORD_COLUMNS, createdBy, newGuid, updatedBy } from "./records";
import { DEFAULT_SPLITTER, splitText } from "./splitter";
import type { ContextStore } from "./contexts";

export interface DocumentInput {
  content: string;
  filter?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** The chunks one Context Source processing run produced, with what to record about each. */
export interface SourceChunks {
  contextId: number;
  contextSourceId: number;
  chunks: string[];
  metadata: (index: number) => Record<string, unknown>;
}

// Spec: the embedding model is not shown; the emulator hashes lowercase words into a fixed number of
// signed buckets and normalizes (a deterministic bag-of-words vector, enough for similarity tests).
export const EMBEDDING_DIMENSIONS = 64;

const StoredMetadata = z.record(z.string(), z.unknown());
const StoredEmbedding = z.array(z.number());

export const DOCUMENTS = table("documents", {
  id: integer,
  guid: text,
  workspace_id: integer,
  context_id: integer,
  context_source_id: nullable(integer),
  content: text,
  filter: nullable(text),
  metadata: json((value) => StoredMetadata.safeParse(value)),
  embedding: nullable(json((value) => StoredEmbedding.safeParse(value))),
  ...RECORD_COLUMNS,
});

const RECORDS = new RecordTable(DOCUMENTS);

/**
 * Documents are the indexed units of a Context, written by hand or by Context Source processing (then
 * `contextSourceId` names the source; null for a Document created through the routes).
 */
export type DocumentRecord = StoredRecord<typeof RECORDS>;

export class DocumentStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly contexts: ContextStore },
  ) {
    // SQLite's lower() and LIKE fold ASCII only; the search folds every letter.
    db.sql.function("gms_contains", { deterministic: true }, (text, part) =>
      String(text).toLowerCase().includes(String(part).toLowerCase()) ? 1 : 0,
    );
  }

  /**
   * The Context's non-deleted Documents, oldest first; `query` keeps those whose content contains it,
   * ignoring case.
   */
  list(caller: Caller, contextGuid: string, page: Page, query?: string): Paged<DocumentRecord> {
    // Spec: the search behind `query` is not shown; the emulator matches a case-insensitive substring.
    const context = this.store.contexts.get(caller, contextGuid);
    const from = `FROM documents WHERE context_id = ? AND workspace_id = ? AND deleted_at IS NULL${query ? " AND gms_contains(content, ?)" : ""}`;
    const args = query ? [context.id, caller.workspaceId, query] : [context.id, caller.workspaceId];
    const { rows, total } = this.db.paged(from, args, page, { order: "id" });
    return { items: rows.map((row) => RECORDS.record(row)), total };
  }

  /**
   * Creates the Documents for `content`: one, or one per chunk when it is longer than the default chunk
   * size, all with the same filter and metadata.
   */
  create(caller: Caller, contextGuid: string, input: DocumentCreate): DocumentRecord[] {
    const context = this.store.contexts.get(caller, contextGuid);
    const { content, filter, metadata } = documentFields(input);
    // The entry's check makes sure `content` or `text` is there.
    const chunks = splitText(content!, DEFAULT_SPLITTER);
    // The answer always names a Document, so empty content still makes one.
    if (chunks.length === 0) chunks.push(content!);
    return this.db.transaction(() => chunks.map((chunk) => this.insert(caller, context.id, null, { content: chunk, filter, metadata })));
  }

  /** A non-deleted Document of the Context; a missing Context is 404 `Context not found`, a missing Document `Document not found`. */
  get(caller: Caller, contextGuid: string, guid: string): DocumentRecord {
    const context = this.store.contexts.get(caller, contextGuid);
    const document = RECORDS.find(this.db, { guid, contextId: context.id, workspaceId: caller.workspaceId, deletedAt: null });
    if (!document) throw new RecordNotFoundError("Document not found");
    return document;
  }

  /** Replaces the fields sent; new content drops the embedding, which described the old one. */
  update(caller: Caller, contextGuid: string, guid: string, input: DocumentUpdate): DocumentRecord {
    // Spec: PUT takes "Document fields"; the emulator makes each optional (at least one) and never re-splits.
    const document = this.get(caller, contextGuid, guid);
    const fields = documentFields(input);
    const changed = fields.content !== undefined && fields.content !== document.content;
    RECORDS.update(this.db, document.id, {
      ...fields,
      embedding: changed ? null : undefined,
      ...updatedBy(caller, this.db.clock.iso()),
    });
    return this.get(caller, contextGuid, guid);
  }

  /** Computes and stores the Document's embedding (synchronously: it is cheap and deterministic). */
  embed(caller: Caller, contextGuid: string, guid: string): DocumentRecord {
    const document = this.get(caller, contextGuid, guid);
    RECORDS.update(this.db, document.id, { embedding: embedText(document.content), updatedAt: this.db.clock.iso() });
    return this.get(caller, contextGuid, guid);
  }

  softDelete(caller: Caller, contextGuid: string, guid: string): DocumentRecord {
    const document = this.get(caller, contextGuid, guid);
    RECORDS.update(this.db, document.id, { deletedAt: this.db.clock.iso() });
    return document;
  }

  /** Soft-deletes the Context's Documents whose filter equals `filter`, or all of them without one. */
  deleteMany(caller: Caller, contextGuid: string, filter?: string | null): void {
    const context = this.store.contexts.get(caller, contextGuid);
    const where = { contextId: context.id, workspaceId: caller.workspaceId, deletedAt: null, filter: filter ?? undefined };
    RECORDS.updateAll(this.db, where, { deletedAt: this.db.clock.iso() });
  }

  /**
   * Replaces the Documents an earlier processing of the same Context Source wrote with new ones (Context
   * Source processing only; the caller is whoever dispatched it). Joins the caller's transaction.
   */
  replaceSourceDocuments(caller: Caller, source: SourceChunks): void {
    this.db.transaction(() => {
      const where = { contextSourceId: source.contextSourceId, workspaceId: caller.workspaceId, deletedAt: null };
      RECORDS.updateAll(this.db, where, { deletedAt: this.db.clock.iso() });
      source.chunks.forEach((content, index) =>
        this.insert(caller, source.contextId, source.contextSourceId, { content, metadata: source.metadata(index) }),
      );
    });
  }

  private insert(caller: Caller, contextId: number, contextSourceId: number | null, input: DocumentInput): DocumentRecord {
    const id = RECORDS.insert(this.db, {
      ...createdBy(caller, this.db.clock.iso()),
      guid: newGuid(),
      contextId,
      contextSourceId,
      content: input.content,
      filter: input.filter,
      metadata: input.metadata ?? {},
    });
    return RECORDS.find(this.db, { id })!;
  }
}

/** The fields of a create or an update: `content` else `text`, `metadata` else `meta_data` (the names older clients send). */
const documentFields = ({ text, metaData, ...fields }: DocumentUpdate) => ({
  ...fields,
  content: fields.content ?? text,
  metadata: fields.metadata ?? metaData,
});

/** A unit-length vector of signed word-hash counts (all zeros for text without words). */
export function embedText(text: string): number[] {
  const vector = new Array<number>(EMBEDDING_DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const hash = fnv1a(word);
    vector[hash % EMBEDDING_DIMENSIONS]! += hash & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...vector);
  return norm === 0 ? vector : vector.map((value) => value / norm);
}

/** 32-bit FNV-1a over UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}
