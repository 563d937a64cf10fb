import type { StoredApp } from "./apps";
import { z } from "zod";
import { type Column, type RawRow, integer, json, nullable, real, table, text } from "./columns";
import type { Database, SqlValue } from "./database";
import { BadRequestError, RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, newGuid, toJson } from "./records";
import type { ActionStore } from "./actions";
import type { AppStore } from "./apps";
import type { StoredSession, SessionStore } from "./sessions";

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

const StoredValue = z.union([z.string(), z.array(z.unknown()), z.record(z.string(), z.unknown())]);
const StoredMetadata = z.record(z.string(), z.unknown());

/** A JSON column holding a Data input or output (also copied into Dataset Items). */
export const dataValue = (): Column<DataValue> => json((value) => StoredValue.safeParse(value));

export const DATA = table("data", {
  id: integer,
  guid: text,
  workspace_id: integer,
  action_id: integer,
  app_id: integer,
  run_id: nullable(text),
  input: dataValue(),
  output: dataValue(),
  full_prompt_sent: nullable(text),
  system_message: nullable(text),
  prompt_template: nullable(text),
  model: nullable(text),
  model_provider: nullable(text),
  num_input_tokens: nullable(integer),
  num_output_tokens: nullable(integer),
  latency: nullable(real),
  metadata: nullable(json((value) => StoredMetadata.safeParse(value))),
  ...RECORD_COLUMNS,
});

/** A record's Session (a table of its own, so that databases written before Sessions existed keep their data table). */
export const DATA_SESSIONS = table("data_sessions", { data_id: integer, session_id: integer });

export class DataStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly actions: ActionStore; readonly apps: AppStore; readonly sessions: SessionStore },
  ) {}

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
  private resolveLinks(caller: Caller, input: DataFields): { app: StoredApp | undefined; session: StoredSession | undefined } {
    const app = input.appGuid ? this.store.apps.get(caller, input.appGuid) : undefined;
    const session = input.sessionGuid ? this.store.sessions.get(caller, input.sessionGuid) : undefined;
    // Spec choice: the emulator has no Action versions, so no supplied version can resolve.
    if (input.versionGuid) throw new RecordNotFoundError("Version not found");
    return { app, session };
  }

  /** Links a record to a Session, replacing the Session it had. */
  private linkSession(dataId: number, session: StoredSession): void {
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

const ROW = DATA.extend({ action_guid: text, app_guid: text });

function toRecord(raw: RawRow): DataRecord {
  const row = ROW.decode(raw);
  return {
    id: row.id,
    guid: row.guid,
    actionGuid: row.action_guid,
    appGuid: row.app_guid,
    runId: row.run_id,
    input: row.input,
    output: row.output,
    fullPromptSent: row.full_prompt_sent,
    systemMessage: row.system_message,
    promptTemplate: row.prompt_template,
    model: row.model,
    modelProvider: row.model_provider,
    numInputTokens: row.num_input_tokens,
    numOutputTokens: row.num_output_tokens,
    latency: row.latency,
    metadata: row.metadata,
    ...audited(row),
  };
}
