import { RecordTable, type StoredRecord, integer, nullable, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Caller, createdBy, newGuid } from "./records";

/** Contexts have no last_updated_by_id (nothing updates them). */
export const CONTEXTS = table("contexts", {
  id: integer,
  guid: text,
  workspace_id: integer,
  name: text,
  created_at: text,
  updated_at: text,
  created_by_id: text,
  deleted_at: nullable(text),
});

const RECORDS = new RecordTable(CONTEXTS);

/**
 * Contexts are the libraries that hold Documents. The public interface cannot create them, so they come
 * from fixtures; Documents and Context Sources resolve their parent here.
 */
export type ContextRecord = StoredRecord<typeof RECORDS>;

export class ContextStore {
  constructor(private readonly db: Database) {}

  /** Fixture loading only. */
  create(caller: Caller, input: { name: string; guid?: string | undefined }): ContextRecord {
    const id = RECORDS.insert(this.db, { ...createdBy(caller, this.db.clock.iso()), guid: input.guid ?? newGuid(), name: input.name });
    return RECORDS.find(this.db, { id })!;
  }

  /** The workspace's Contexts, oldest first. */
  list(caller: Caller): ContextRecord[] {
    return RECORDS.list(this.db, { workspaceId: caller.workspaceId, deletedAt: null });
  }

  /** A Context of the caller's workspace; otherwise 404 `Context not found`. */
  get(caller: Caller, guid: string): ContextRecord {
    const context = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
    if (!context) throw new RecordNotFoundError("Context not found");
    return context;
  }
}
