import type { FeedbackType, FeedbackValue } from "../../api/feedback";
import type { Database } from "./database";
import type { DataStore } from "./data";
import { RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, fromJson, newGuid, toJson } from "./records";

/** One label on a Data record. */
export interface FeedbackRecord extends Audited {
  id: number;
  guid: string;
  dataGuid: string;
  type: FeedbackType;
  value: FeedbackValue;
  source: string;
  metadata: Record<string, unknown> | null;
}

/** What a label says; create sets it, PUT replaces all of it (the labelled Data record never changes). */
export interface FeedbackFields {
  type: FeedbackType;
  /** Already checked against the type (a rating is 1 or 2). */
  value: FeedbackValue;
  source: string;
  metadata?: Record<string, unknown> | null | undefined;
}

/**
 * Feedback on Data records; a record may carry any number of labels. A label outlives the deletion of its
 * Data record (it still names the record's GUID).
 */
export class FeedbackStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly data: DataStore },
  ) {
    db.sql.exec(`
      CREATE TABLE IF NOT EXISTS feedback (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        data_id INTEGER NOT NULL REFERENCES data(id),
        type TEXT NOT NULL,
        value TEXT NOT NULL,
        source TEXT NOT NULL,
        metadata TEXT,
        ${RECORD_COLUMNS}
      );
      CREATE INDEX IF NOT EXISTS feedback_workspace ON feedback (workspace_id, deleted_at);
    `);
  }

  /** Non-deleted Feedback of the workspace, oldest first. */
  list(caller: Caller, page: Page): Paged<FeedbackRecord> {
    const { rows, total } = this.db.paged(`${FROM} WHERE f.workspace_id = ? AND f.deleted_at IS NULL`, [caller.workspaceId], page, {
      select: COLUMNS,
      order: "f.id",
    });
    return { items: rows.map(toRecord), total };
  }

  /** Labels a live Data record of the workspace (404 `Data not found` otherwise). */
  create(caller: Caller, dataGuid: string, fields: FeedbackFields): FeedbackRecord {
    const data = this.store.data.get(caller, dataGuid);
    const stamp = this.db.clock.iso();
    const id = this.db.run(
      `INSERT INTO feedback (guid, workspace_id, data_id, type, value, source, metadata, created_at, updated_at, created_by_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      newGuid(),
      caller.workspaceId,
      data.id,
      fields.type,
      toJson(fields.value),
      fields.source,
      toJson(fields.metadata),
      stamp,
      stamp,
      caller.userId,
    );
    return this.byId(id);
  }

  /** A non-deleted Feedback of the caller's workspace; anything else is 404 `Feedback not found`. */
  get(caller: Caller, guid: string): FeedbackRecord {
    const row = this.db.get(`${SELECT} WHERE f.guid = ? AND f.workspace_id = ? AND f.deleted_at IS NULL`, guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Feedback not found");
    return toRecord(row);
  }

  /** Replaces type, value, source and metadata (an absent `metadata` clears it). */
  replace(caller: Caller, guid: string, fields: FeedbackFields): FeedbackRecord {
    const feedback = this.get(caller, guid);
    this.db.run(
      "UPDATE feedback SET type = ?, value = ?, source = ?, metadata = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      fields.type,
      toJson(fields.value),
      fields.source,
      toJson(fields.metadata),
      this.db.clock.iso(),
      caller.userId,
      feedback.id,
    );
    return this.byId(feedback.id);
  }

  softDelete(caller: Caller, guid: string): FeedbackRecord {
    const feedback = this.get(caller, guid);
    this.db.run("UPDATE feedback SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), feedback.id);
    return feedback;
  }

  private byId(id: number): FeedbackRecord {
    return toRecord(this.db.get(`${SELECT} WHERE f.id = ?`, id)!);
  }
}

const COLUMNS = "f.*, d.guid AS data_guid";
const FROM = "FROM feedback f JOIN data d ON d.id = f.data_id";
const SELECT = `SELECT ${COLUMNS} ${FROM}`;

function toRecord(row: Record<string, unknown>): FeedbackRecord {
  return {
    id: row.id as number,
    guid: row.guid as string,
    dataGuid: row.data_guid as string,
    type: row.type as FeedbackType,
    value: fromJson<FeedbackValue>(row.value)!,
    source: row.source as string,
    metadata: fromJson<Record<string, unknown>>(row.metadata),
    ...audited(row),
  };
}
