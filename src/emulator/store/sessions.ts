import { type RawRow, integer, nullable, table, text } from "./columns";
import type { Database, SqlValue } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, newGuid } from "./records";
import type { ActionStore } from "./actions";

/** A Session: groups the Data of related Action runs (multi-turn use) under one Action. */
export interface SessionRecord extends Audited {
  id: number;
  guid: string;
  name: string | null;
  actionGuid: string;
  extUserId: string | null;
}

export const SESSIONS = table("sessions", {
  id: integer,
  guid: text,
  workspace_id: integer,
  action_id: integer,
  name: nullable(text),
  ext_user_id: nullable(text),
  ...RECORD_COLUMNS,
});

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
  list(caller: Caller, filter: { extUserId?: string | undefined }, page: Page): Paged<SessionRecord> {
    const conditions = ["s.workspace_id = ?", "s.deleted_at IS NULL"];
    const args: SqlValue[] = [caller.workspaceId];
    if (filter.extUserId !== undefined) {
      conditions.push("s.ext_user_id = ?");
      args.push(filter.extUserId);
    }
    // Spec: the order of Sessions is not shown; the emulator lists them as created, like the other kinds.
    const { rows, total } = this.db.paged(`${FROM} WHERE ${conditions.join(" AND ")}`, args, page, { select: COLUMNS, order: "s.id" });
    return { items: rows.map(toRecord), total };
  }

  /** 404 `Action not found` when the Action does not resolve. */
  create(
    caller: Caller,
    input: { actionGuid: string; name?: string | null | undefined; extUserId?: string | null | undefined },
  ): SessionRecord {
    const action = this.store.actions.get(caller, input.actionGuid);
    const stamp = this.db.clock.iso();
    const id = this.db.run(
      `INSERT INTO sessions (guid, workspace_id, action_id, name, ext_user_id, created_at, updated_at, created_by_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      newGuid(),
      caller.workspaceId,
      action.id,
      input.name ?? null,
      input.extUserId ?? null,
      stamp,
      stamp,
      caller.userId,
    );
    return toRecord(this.db.get(`${SELECT} WHERE s.id = ?`, id)!);
  }

  /** A non-deleted Session of the caller's workspace; otherwise 404 `Session not found`. */
  get(caller: Caller, guid: string): SessionRecord {
    const row = this.db.get(`${SELECT} WHERE s.guid = ? AND s.workspace_id = ? AND s.deleted_at IS NULL`, guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Session not found");
    return toRecord(row);
  }

  /** Renames the Session; `extUserId` changes when supplied (null clears it) and is kept when left out. */
  update(caller: Caller, guid: string, input: { name: string; extUserId?: string | null | undefined }): SessionRecord {
    const session = this.get(caller, guid);
    this.db.run(
      "UPDATE sessions SET name = ?, ext_user_id = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      input.name,
      input.extUserId === undefined ? session.extUserId : input.extUserId,
      this.db.clock.iso(),
      caller.userId,
      session.id,
    );
    return this.get(caller, guid);
  }

  /** Soft delete: the Session answers 404 afterwards; its Data records stay. */
  softDelete(caller: Caller, guid: string): SessionRecord {
    const session = this.get(caller, guid);
    this.db.run("UPDATE sessions SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), session.id);
    return session;
  }
}

const COLUMNS = "s.*, a.guid AS action_guid";
const FROM = "FROM sessions s JOIN actions a ON a.id = s.action_id";
const SELECT = `SELECT ${COLUMNS} ${FROM}`;

const ROW = SESSIONS.extend({ action_guid: text });

function toRecord(raw: RawRow): SessionRecord {
  const row = ROW.decode(raw);
  return { id: row.id, guid: row.guid, name: row.name, actionGuid: row.action_guid, extUserId: row.ext_user_id, ...audited(row) };
}
