import { z } from "zod";
import { type RawRow, integer, json, nullable, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Caller, type Page, type Paged, RECORD_COLUMNS, newGuid, toJson } from "./records";
import { DEFAULT_SPLITTER, splitText } from "./splitter";
import type { ContextStore } from "./contexts";

/** Documents are the indexed units of a Context, written by hand or by Context Source processing. */
export interface DocumentRecord {
  id: number;
  guid: string;
  contextId: number;
  /** The Context Source whose processing wrote it, or null for a Document created through the routes. */
  contextSourceId: number | null;
  content: string;
  filter: string | null;
  metadata: Record<string, unknown>;
  embedding: number[] | null;
  createdAt: string;
  updatedAt: string;
  createdById: string;
}

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
    return { items: rows.map(toRecord), total };
  }

  /**
   * Creates the Documents for `content`: one, or one per chunk when it is longer than the default chunk
   * size, all with the same filter and metadata.
   */
  create(caller: Caller, contextGuid: string, input: DocumentInput): DocumentRecord[] {
    const context = this.store.contexts.get(caller, contextGuid);
    const chunks = splitText(input.content, DEFAULT_SPLITTER);
    // The answer always names a Document, so empty content still makes one.
    if (chunks.length === 0) chunks.push(input.content);
    return this.db.transaction(() =>
      chunks.map((chunk) => this.insert(caller, context.id, null, { content: chunk, filter: input.filter, metadata: input.metadata })),
    );
  }

  /** A non-deleted Document of the Context; a missing Context is 404 `Context not found`, a missing Document `Document not found`. */
  get(caller: Caller, contextGuid: string, guid: string): DocumentRecord {
    const context = this.store.contexts.get(caller, contextGuid);
    const row = this.db.get(
      "SELECT * FROM documents WHERE guid = ? AND context_id = ? AND workspace_id = ? AND deleted_at IS NULL",
      guid,
      context.id,
      caller.workspaceId,
    );
    if (!row) throw new RecordNotFoundError("Document not found");
    return toRecord(row);
  }

  /** Replaces the fields sent; new content drops the embedding, which described the old one. */
  update(caller: Caller, contextGuid: string, guid: string, input: Partial<DocumentInput>): DocumentRecord {
    // Spec: PUT takes "Document fields"; the emulator makes each optional (at least one) and never re-splits.
    const document = this.get(caller, contextGuid, guid);
    const content = input.content ?? document.content;
    this.db.run(
      "UPDATE documents SET content = ?, filter = ?, metadata = ?, embedding = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      content,
      input.filter === undefined ? document.filter : input.filter,
      toJson(input.metadata ?? document.metadata),
      content === document.content ? toJson(document.embedding) : null,
      this.db.clock.iso(),
      caller.userId,
      document.id,
    );
    return this.get(caller, contextGuid, guid);
  }

  /** Computes and stores the Document's embedding (synchronously: it is cheap and deterministic). */
  embed(caller: Caller, contextGuid: string, guid: string): DocumentRecord {
    const document = this.get(caller, contextGuid, guid);
    this.db.run(
      "UPDATE documents SET embedding = ?, updated_at = ? WHERE id = ?",
      toJson(embedText(document.content)),
      this.db.clock.iso(),
      document.id,
    );
    return this.get(caller, contextGuid, guid);
  }

  softDelete(caller: Caller, contextGuid: string, guid: string): DocumentRecord {
    const document = this.get(caller, contextGuid, guid);
    this.db.run("UPDATE documents SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), document.id);
    return document;
  }

  /** Soft-deletes the Context's Documents whose filter equals `filter`, or all of them without one. */
  deleteMany(caller: Caller, contextGuid: string, filter?: string | null): void {
    const context = this.store.contexts.get(caller, contextGuid);
    this.db.run(
      `UPDATE documents SET deleted_at = ? WHERE context_id = ? AND workspace_id = ? AND deleted_at IS NULL${filter == null ? "" : " AND filter = ?"}`,
      this.db.clock.iso(),
      context.id,
      caller.workspaceId,
      ...(filter == null ? [] : [filter]),
    );
  }

  /**
   * Replaces the Documents an earlier processing of the same Context Source wrote with new ones (Context
   * Source processing only; the caller is whoever dispatched it). Joins the caller's transaction.
   */
  replaceSourceDocuments(caller: Caller, source: SourceChunks): void {
    this.db.transaction(() => {
      this.db.run(
        "UPDATE documents SET deleted_at = ? WHERE context_source_id = ? AND workspace_id = ? AND deleted_at IS NULL",
        this.db.clock.iso(),
        source.contextSourceId,
        caller.workspaceId,
      );
      source.chunks.forEach((content, index) =>
        this.insert(caller, source.contextId, source.contextSourceId, { content, metadata: source.metadata(index) }),
      );
    });
  }

  private insert(caller: Caller, contextId: number, contextSourceId: number | null, input: DocumentInput): DocumentRecord {
    const stamp = this.db.clock.iso();
    const id = this.db.run(
      `INSERT INTO documents (guid, workspace_id, context_id, context_source_id, content, filter, metadata, created_at, updated_at, created_by_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      newGuid(),
      caller.workspaceId,
      contextId,
      contextSourceId,
      input.content,
      input.filter ?? null,
      toJson(input.metadata ?? {}),
      stamp,
      stamp,
      caller.userId,
    );
    return toRecord(this.db.get("SELECT * FROM documents WHERE id = ?", id)!);
  }
}

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

function toRecord(raw: RawRow): DocumentRecord {
  const row = DOCUMENTS.decode(raw);
  return {
    id: row.id,
    guid: row.guid,
    contextId: row.context_id,
    contextSourceId: row.context_source_id,
    content: row.content,
    filter: row.filter,
    metadata: row.metadata,
    embedding: row.embedding,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdById: row.created_by_id,
  };
}
