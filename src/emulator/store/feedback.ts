import { z } from "zod";
import { type FeedbackFields, FeedbackType, FeedbackValue } from "../../api/feedback";
import { RecordTable, type StoredRecord, flag, integer, json, nullable, oneOf, table, text } from "./columns";
import type { Database } from "./database";
import type { DataStore } from "./data";
import { RecordNotFoundError } from "./errors";
import { type Caller, type Page, type Paged, RECORD_COLUMNS, createdBy, updatedBy, newGuid } from "./records";

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

const RECORDS = new RecordTable(FEEDBACK, {
  joins: "JOIN data d ON d.id = feedback.data_id",
  derived: { data: ["d.guid", text], deleted: ["feedback.deleted_at IS NOT NULL", flag] },
});

/** One label on a Data record (the record's GUID as `data`). */
export type StoredFeedback = StoredRecord<typeof RECORDS>;

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
  list(caller: Caller, page: Page): Paged<StoredFeedback> {
    return RECORDS.page(this.db, { workspaceId: caller.workspaceId, deletedAt: null }, page);
  }

  /** Labels a live Data record of the workspace (404 `Data not found` otherwise). */
  create(caller: Caller, dataGuid: string, fields: FeedbackFields): StoredFeedback {
    const data = this.store.data.get(caller, dataGuid);
    const stamp = this.db.clock.iso();
    const id = RECORDS.insert(this.db, {
      ...createdBy(caller, stamp),
      ...fields,
      guid: newGuid(),
      dataId: data.id,
    });
    return this.byId(id);
  }

  /** A non-deleted Feedback of the caller's workspace; anything else is 404 `Feedback not found`. */
  get(caller: Caller, guid: string): StoredFeedback {
    const feedback = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
    if (!feedback) throw new RecordNotFoundError("Feedback not found");
    return feedback;
  }

  /** Replaces type, value, source and metadata (an absent `metadata` clears it). */
  replace(caller: Caller, guid: string, fields: FeedbackFields): StoredFeedback {
    const feedback = this.get(caller, guid);
    RECORDS.update(this.db, feedback.id, {
      ...fields,
      metadata: fields.metadata ?? null,
      ...updatedBy(caller, this.db.clock.iso()),
    });
    return this.byId(feedback.id);
  }

  softDelete(caller: Caller, guid: string): StoredFeedback {
    const feedback = this.get(caller, guid);
    RECORDS.update(this.db, feedback.id, { deletedAt: this.db.clock.iso() });
    return feedback;
  }

  private byId(id: number): StoredFeedback {
    return RECORDS.find(this.db, { id })!;
  }
}
