import { type RawRow, integer, nullable, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Caller, newGuid } from "./records";

/**
 * Contexts are the libraries that hold Documents. The public interface cannot create them, so they come
 * from fixtures; Documents and Context Sources resolve their parent here.
 */
export interface ContextRecord {
  id: number;
  guid: string;
  name: string;
  createdAt: string;
  updatedAt: string;
  createdById: string;
}

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

export class ContextStore {
  constructor(private readonly db: Database) {}

  /** Fixture loading only. */
  create(caller: Caller, input: { name: string; guid?: string | undefined }): ContextRecord {
    const stamp = this.db.clock.iso();
    const id = this.db.run(
      "INSERT INTO contexts (guid, workspace_id, name, created_at, updated_at, created_by_id) VALUES (?, ?, ?, ?, ?, ?)",
      input.guid ?? newGuid(),
      caller.workspaceId,
      input.name,
      stamp,
      stamp,
      caller.userId,
    );
    return toRecord(this.db.get("SELECT * FROM contexts WHERE id = ?", id)!);
  }

  /** The workspace's Contexts, oldest first. */
  list(caller: Caller): ContextRecord[] {
    return this.db
      .all("SELECT * FROM contexts WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY id", caller.workspaceId)
      .map(toRecord);
  }

  /** A Context of the caller's workspace; otherwise 404 `Context not found`. */
  get(caller: Caller, guid: string): ContextRecord {
    const row = this.db.get("SELECT * FROM contexts WHERE guid = ? AND workspace_id = ? AND deleted_at IS NULL", guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Context not found");
    return toRecord(row);
  }
}

function toRecord(raw: RawRow): ContextRecord {
  const row = CONTEXTS.decode(raw);
  return {
    id: row.id,
    guid: row.guid,
    name: row.name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdById: row.created_by_id,
  };
}
