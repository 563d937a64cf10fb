import { z } from "zod";
import { FeedbackType, FeedbackValue } from "../../api/feedback";
import { type RawRow, integer, json, nullable, oneOf, table, text } from "./columns";
import type { Database } from "./database";
import type { DataStore } from "./data";
import { RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, newGuid, toJson } from "./records";

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

const StoredMetadata = z.record(z.string(), z.unknown());

export const FEEDBACK = table("feedback", {
  id: integer,
  guid: text,
  workspace_id: integer,
  data_id: integer,
  type: oneOf(FeedbackType.options),
  /** JSON: a rating's number or a text. */
  value: json((value) => FeedbackValue.safeParse(value)),
  source: text,
  metadata: nullable(json((value) => StoredMetadata.safeParse(value))),
  ...RECORD_COLUMNS,
});

/**
 * Feedback on Data records; a record may carry any number of labels. A label outlives the deletion of its
 * Data record (it still names the record's GUID).
 */
export class FeedbackStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly data: DataStore },
  ) {}

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

const ROW = FEEDBACK.extend({ data_guid: text });

function toRecord(raw: RawRow): FeedbackRecord {
  const row = ROW.decode(raw);
  return {
    id: row.id,
    guid: row.guid,
    dataGuid: row.data_guid,
    type: row.type,
    value: row.value,
    source: row.source,
    metadata: row.metadata,
    ...audited(row),
  };
}
