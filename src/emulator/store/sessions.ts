import { RecordTable, type StoredRecord, integer, nullable, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Caller, type Page, type Paged, RECORD_COLUMNS, createdBy, updatedBy, newGuid } from "./records";
import type { ActionStore } from "./actions";

export const SESSIONS = table("sessions", {
  id: integer,
  guid: text,
  workspace_id: integer,
  action_id: integer,
  name: nullable(text),
  ext_user_id: nullable(text),
  ...RECORD_COLUMNS,
});

const RECORDS = new RecordTable(SESSIONS, { joins: "JOIN actions a ON a.id = sessions.action_id", derived: { action: ["a.guid", text] } });

/** A Session: groups the Data of related Action runs (multi-turn use) under one Action (its GUID, `action`). */
export type StoredSession = StoredRecord<typeof RECORDS>;

/**
 * Sessions. Data records link to a Session (on their create or update, or through an Action run that
 * names it); the Data store keeps those links and lists a Session's Data.
 */
export class SessionStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly actions: ActionStore },
  ) {}

  /** Non-deleted Sessions of the workspace, oldest first; with `extUserId`, only that external user's. */
  list(caller: Caller, filter: { extUserId?: string | undefined }, page: Page): Paged<StoredSession> {
    // Spec: the order of Sessions is not shown; the emulator lists them as created, like the other kinds.
    return RECORDS.page(this.db, { workspaceId: caller.workspaceId, deletedAt: null, extUserId: filter.extUserId }, page);
  }

  /** 404 `Action not found` when the Action does not resolve. */
  create(
    caller: Caller,
    input: { action: string; name?: string | null | undefined; extUserId?: string | null | undefined },
  ): StoredSession {
    const action = this.store.actions.get(caller, input.action);
    const stamp = this.db.clock.iso();
    const id = RECORDS.insert(this.db, {
      ...createdBy(caller, stamp),
      ...input,
      guid: newGuid(),
      actionId: action.id,
    });
    return RECORDS.find(this.db, { id })!;
  }

  /** A non-deleted Session of the caller's workspace; otherwise 404 `Session not found`. */
  get(caller: Caller, guid: string): StoredSession {
    const session = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
    if (!session) throw new RecordNotFoundError("Session not found");
    return session;
  }

  /** Renames the Session; `extUserId` changes when supplied (null clears it) and is kept when left out. */
  update(caller: Caller, guid: string, input: { name: string; extUserId?: string | null | undefined }): StoredSession {
    const session = this.get(caller, guid);
    RECORDS.update(this.db, session.id, { ...input, ...updatedBy(caller, this.db.clock.iso()) });
    return this.get(caller, guid);
  }

  /** Soft delete: the Session answers 404 afterwards; its Data records stay. */
  softDelete(caller: Caller, guid: string): StoredSession {
    const session = this.get(caller, guid);
    RECORDS.update(this.db, session.id, { deletedAt: this.db.clock.iso() });
    return session;
  }
}
