import type { AppRecord } from "./apps";
import type { Database, SqlValue } from "./database";
import { BadRequestError, RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, fromJson, newGuid, toJson } from "./records";
import type { ActionStore } from "./actions";
import type { AppStore } from "./apps";
import type { SessionRecord, SessionStore } from "./sessions";

/** A Data record's input or output: a string, an array or an object. */
export type DataValue = string | unknown[] | Record<string, unknown>;

/** One logged generation. `appGuid` is the Action's App unless another App was given. */
export interface DataRecord extends Audited {
  id: number;
  guid: string;
  actionGuid: string;
  appGuid: string | null;
  runId: string | null;
  input: DataValue;
  output: DataValue;
  fullPromptSent: string | null;
  systemMessage: string | null;
  promptTemplate: string | null;
  model: string | null;
  modelProvider: string | null;
  numInputTokens: number | null;
  numOutputTokens: number | null;
  latency: number | null;
  metadata: Record<string, unknown> | null;
}

/** Fields create and update share; relationship GUIDs given as null count as not supplied. */
interface DataFields {
  appGuid?: string | null | undefined;
  sessionGuid?: string | null | undefined;
  versionGuid?: string | null | undefined;
  fullPromptSent?: string | null | undefined;
  systemMessage?: string | null | undefined;
  promptTemplate?: string | null | undefined;
  model?: string | null | undefined;
  modelProvider?: string | null | undefined;
  numInputTokens?: number | null | undefined;
  numOutputTokens?: number | null | undefined;
  latency?: number | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
}

export interface DataCreateInput extends DataFields {
  actionGuid: string;
  input: DataValue;
  output: DataValue;
  runId?: string | null | undefined;
  /** A GUID chosen by the caller; it must not be taken. */
  guid?: string | undefined;
}

/** Only supplied (non-undefined) fields change. */
export interface DataUpdateInput extends DataFields {
  actionGuid?: string | null | undefined;
  input?: DataValue | undefined;
  output?: DataValue | undefined;
}

export class DataStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly actions: ActionStore; readonly apps: AppStore; readonly sessions: SessionStore },
  ) {
    db.sql.exec(`
      CREATE TABLE IF NOT EXISTS data (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        action_id INTEGER NOT NULL REFERENCES actions(id),
        app_id INTEGER NOT NULL REFERENCES apps(id),
        run_id TEXT,
        input TEXT NOT NULL,
        output TEXT NOT NULL,
        full_prompt_sent TEXT,
        system_message TEXT,
        prompt_template TEXT,
        model TEXT,
        model_provider TEXT,
        num_input_tokens INTEGER,
        num_output_tokens INTEGER,
        latency REAL,
        metadata TEXT,
        ${RECORD_COLUMNS}
      );
      CREATE INDEX IF NOT EXISTS data_workspace ON data (workspace_id, deleted_at);
      CREATE INDEX IF NOT EXISTS data_app ON data (app_id, deleted_at);
      -- A record's Session: a table of its own, so that databases written before Sessions existed keep their data table.
      CREATE TABLE IF NOT EXISTS data_sessions (
        data_id INTEGER PRIMARY KEY REFERENCES data(id),
        session_id INTEGER NOT NULL REFERENCES sessions(id)
      );
      CREATE INDEX IF NOT EXISTS data_sessions_session ON data_sessions (session_id);
    `);
  }

  /** Non-deleted Data of the workspace, newest first (spec). */
  list(caller: Caller, page: Page): Paged<DataRecord> {
    return this.page("d.workspace_id = ?", [caller.workspaceId], page);
  }

  /** The App's Data, newest first (404 when the App is missing or deleted). */
  listByApp(caller: Caller, appGuid: string, page: Page): Paged<DataRecord> {
    // Spec: not shown in which order an App's Data is listed; the emulator uses the newest first of GET /data.
    return this.page("d.app_id = ?", [this.store.apps.get(caller, appGuid).id], page);
  }

  /** The Session's Data, newest first (404 `Session not found` when it is missing or deleted). */
  listBySession(caller: Caller, sessionGuid: string, page: Page): Paged<DataRecord> {
    // Spec: not shown in which order a Session's Data is listed; the emulator uses the newest first of GET /data.
    const session = this.store.sessions.get(caller, sessionGuid);
    return this.page("d.id IN (SELECT data_id FROM data_sessions WHERE session_id = ?)", [session.id], page);
  }

  /**
   * Logs a generation. The Action and every supplied relationship must resolve (404 otherwise); without
   * `appGuid` the record belongs to the Action's App.
   */
  create(caller: Caller, input: DataCreateInput): DataRecord {
    return this.db.transaction(() => {
      const action = this.store.actions.get(caller, input.actionGuid);
      const { app, session } = this.resolveLinks(caller, input);
      const guid = input.guid ?? newGuid();
      if (this.db.get("SELECT 1 FROM data WHERE guid = ?", guid)) throw new BadRequestError(`Data ${guid} already exists`);
      const stamp = this.db.clock.iso();
      const values: Record<string, SqlValue> = {
        guid,
        workspace_id: caller.workspaceId,
        action_id: action.id,
        app_id: app?.id ?? action.appId,
        run_id: input.runId ?? null,
        ...definedColumns(input),
        created_at: stamp,
        updated_at: stamp,
        created_by_id: caller.userId,
      };
      const names = Object.keys(values);
      const id = this.db.run(
        `INSERT INTO data (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`,
        ...names.map((name) => values[name]!),
      );
      if (session) this.linkSession(id, session);
      return this.byId(id);
    });
  }

  /** A non-deleted Data record of the caller's workspace; anything else is 404 `Data not found`. */
  get(caller: Caller, guid: string): DataRecord {
    const data = this.find(caller, guid);
    if (!data) throw new RecordNotFoundError("Data not found");
    return data;
  }

  find(caller: Caller, guid: string): DataRecord | undefined {
    const row = this.db.get(`${SELECT} WHERE d.guid = ? AND d.workspace_id = ? AND d.deleted_at IS NULL`, guid, caller.workspaceId);
    return row && toRecord(row);
  }

  /** A non-deleted Data record of the caller's workspace by its internal numeric id (what fine-tune create takes). */
  findById(caller: Caller, id: number): DataRecord | undefined {
    const row = this.db.get(`${SELECT} WHERE d.id = ? AND d.workspace_id = ? AND d.deleted_at IS NULL`, id, caller.workspaceId);
    return row && toRecord(row);
  }

  /** Replaces the supplied fields; supplied relationships must resolve as on create. */
  update(caller: Caller, guid: string, input: DataUpdateInput): DataRecord {
    return this.db.transaction(() => {
      const data = this.get(caller, guid);
      const action = input.actionGuid ? this.store.actions.get(caller, input.actionGuid) : undefined;
      const { app, session } = this.resolveLinks(caller, input);
      // Spec: not shown whether a new Action moves the record to its App; the emulator keeps the App unless `app` is given.
      const values: Record<string, SqlValue> = {
        ...definedColumns(input),
        ...(action && { action_id: action.id }),
        ...(app && { app_id: app.id }),
        updated_at: this.db.clock.iso(),
        last_updated_by_id: caller.userId,
      };
      const names = Object.keys(values);
      this.db.run(
        `UPDATE data SET ${names.map((name) => `${name} = ?`).join(", ")} WHERE id = ?`,
        ...names.map((name) => values[name]!),
        data.id,
      );
      if (session) this.linkSession(data.id, session);
      return this.byId(data.id);
    });
  }

  /** Soft delete: the record answers 404 afterwards and leaves every list. */
  softDelete(caller: Caller, guid: string): DataRecord {
    const data = this.get(caller, guid);
    this.db.run("UPDATE data SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), data.id);
    return data;
  }

  /** Resolves the supplied App, Session and version GUIDs (after the Action); returns the App and Session given. */
  private resolveLinks(caller: Caller, input: DataFields): { app: AppRecord | undefined; session: SessionRecord | undefined } {
    const app = input.appGuid ? this.store.apps.get(caller, input.appGuid) : undefined;
    const session = input.sessionGuid ? this.store.sessions.get(caller, input.sessionGuid) : undefined;
    // Spec choice: the emulator has no Action versions, so no supplied version can resolve.
    if (input.versionGuid) throw new RecordNotFoundError("Version not found");
    return { app, session };
  }

  /** Links a record to a Session, replacing the Session it had. */
  private linkSession(dataId: number, session: SessionRecord): void {
    this.db.run(
      "INSERT INTO data_sessions (data_id, session_id) VALUES (?, ?) ON CONFLICT (data_id) DO UPDATE SET session_id = excluded.session_id",
      dataId,
      session.id,
    );
  }

  private page(where: string, args: SqlValue[], page: Page): Paged<DataRecord> {
    const { rows, total } = this.db.paged(`${FROM} WHERE ${where} AND d.deleted_at IS NULL`, args, page, {
      select: COLUMNS,
      order: "d.id DESC",
    });
    return { items: rows.map(toRecord), total };
  }

  private byId(id: number): DataRecord {
    return toRecord(this.db.get(`${SELECT} WHERE d.id = ?`, id)!);
  }
}

const COLUMNS = "d.*, a.guid AS action_guid, p.guid AS app_guid";
const FROM = "FROM data d JOIN actions a ON a.id = d.action_id JOIN apps p ON p.id = d.app_id";
const SELECT = `SELECT ${COLUMNS} ${FROM}`;

/** The value columns an input sets, skipping fields it leaves undefined; JSON columns are encoded. */
function definedColumns(input: DataFields & { input?: DataValue | undefined; output?: DataValue | undefined }): Record<string, SqlValue> {
  const columns: Record<string, SqlValue | undefined> = {
    input: input.input === undefined ? undefined : toJson(input.input),
    output: input.output === undefined ? undefined : toJson(input.output),
    full_prompt_sent: input.fullPromptSent,
    system_message: input.systemMessage,
    prompt_template: input.promptTemplate,
    model: input.model,
    model_provider: input.modelProvider,
    num_input_tokens: input.numInputTokens,
    num_output_tokens: input.numOutputTokens,
    latency: input.latency,
    metadata: input.metadata === undefined ? undefined : toJson(input.metadata),
  };
  return Object.fromEntries(Object.entries(columns).filter((entry): entry is [string, SqlValue] => entry[1] !== undefined));
}

function toRecord(row: Record<string, unknown>): DataRecord {
  return {
    id: row.id as number,
    guid: row.guid as string,
    actionGuid: row.action_guid as string,
    appGuid: (row.app_guid as string | null) ?? null,
    runId: (row.run_id as string | null) ?? null,
    input: fromJson<DataValue>(row.input)!,
    output: fromJson<DataValue>(row.output)!,
    fullPromptSent: (row.full_prompt_sent as string | null) ?? null,
    systemMessage: (row.system_message as string | null) ?? null,
    promptTemplate: (row.prompt_template as string | null) ?? null,
    model: (row.model as string | null) ?? null,
    modelProvider: (row.model_provider as string | null) ?? null,
    numInputTokens: (row.num_input_tokens as number | null) ?? null,
    numOutputTokens: (row.num_output_tokens as number | null) ?? null,
    latency: (row.latency as number | null) ?? null,
    metadata: fromJson<Record<string, unknown>>(row.metadata),
    ...audited(row),
  };
}
