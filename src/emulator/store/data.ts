import { z } from "zod";
import type { DataCreate, DataUpdate, DataValue } from "../../api/data";
import { type Column, RecordTable, type StoredRecord, integer, json, nullable, real, table, text } from "./columns";
import type { Database } from "./database";
import { BadRequestError, RecordNotFoundError } from "./errors";
import { type Caller, type Page, type Paged, RECORD_COLUMNS, createdBy, newGuid, updatedBy } from "./records";
import type { ActionStore } from "./actions";
import type { AppStore, StoredApp } from "./apps";
import type { SessionStore, StoredSession } from "./sessions";

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

const RECORDS = new RecordTable(DATA, {
  joins: `JOIN actions a ON a.id = data.action_id JOIN apps p ON p.id = data.app_id
    LEFT JOIN data_sessions s ON s.data_id = data.id`,
  derived: { action: ["a.guid", text], app: ["p.guid", text], session_id: ["s.session_id", nullable(integer)] },
});

/** One logged generation, its Action's and App's GUIDs as `action` and `app` (the Action's App unless another was given). */
export type StoredData = StoredRecord<typeof RECORDS>;

/** The fields a create or an update may give, in the request's names (relationship GUIDs given as null count as not supplied). */
type DataFields = Omit<DataUpdate, "versionId" | "input" | "output">;

/** Newest first (spec). */
const NEWEST: [{ desc: "id" }] = [{ desc: "id" }];

export class DataStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly actions: ActionStore; readonly apps: AppStore; readonly sessions: SessionStore },
  ) {}

  /** Non-deleted Data of the workspace, newest first (spec). */
  list(caller: Caller, page: Page): Paged<StoredData> {
    return RECORDS.page(this.db, { workspaceId: caller.workspaceId, deletedAt: null }, page, NEWEST);
  }

  /** The App's Data, newest first (404 when the App is missing or deleted). */
  listByApp(caller: Caller, appGuid: string, page: Page): Paged<StoredData> {
    // Spec: not shown in which order an App's Data is listed; the emulator uses the newest first of GET /data.
    return RECORDS.page(this.db, { appId: this.store.apps.get(caller, appGuid).id, deletedAt: null }, page, NEWEST);
  }

  /** The Session's Data, newest first (404 `Session not found` when it is missing or deleted). */
  listBySession(caller: Caller, sessionGuid: string, page: Page): Paged<StoredData> {
    // Spec: not shown in which order a Session's Data is listed; the emulator uses the newest first of GET /data.
    const session = this.store.sessions.get(caller, sessionGuid);
    return RECORDS.page(this.db, { sessionId: session.id, deletedAt: null }, page, NEWEST);
  }

  /**
   * Logs a generation. The Action and every supplied relationship must resolve (404 otherwise); without
   * `app` the record belongs to the Action's App. A `guid` chosen by the caller must not be taken.
   */
  create(caller: Caller, input: Omit<DataCreate, "guid"> & { guid?: string | undefined }): StoredData {
    return this.db.transaction(() => {
      const action = this.store.actions.get(caller, input.action);
      const { app, session } = this.resolveLinks(caller, input, input.version);
      const guid = input.guid ?? newGuid();
      if (RECORDS.find(this.db, { guid })) throw new BadRequestError(`Data ${guid} already exists`);
      const id = RECORDS.insert(this.db, {
        ...withMetadata(input),
        ...createdBy(caller, this.db.clock.iso()),
        guid,
        actionId: action.id,
        appId: app?.id ?? action.appId,
      });
      if (session) this.linkSession(id, session);
      return RECORDS.find(this.db, { id })!;
    });
  }

  /** A non-deleted Data record of the caller's workspace; anything else is 404 `Data not found`. */
  get(caller: Caller, guid: string): StoredData {
    const data = this.find(caller, guid);
    if (!data) throw new RecordNotFoundError("Data not found");
    return data;
  }

  find(caller: Caller, guid: string): StoredData | undefined {
    return RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
  }

  /** A non-deleted Data record of the caller's workspace by its internal numeric id (what fine-tune create takes). */
  findById(caller: Caller, id: number): StoredData | undefined {
    return RECORDS.find(this.db, { id, workspaceId: caller.workspaceId, deletedAt: null });
  }

  /** Replaces the supplied fields; supplied relationships must resolve as on create. */
  update(caller: Caller, guid: string, input: DataUpdate): StoredData {
    return this.db.transaction(() => {
      const data = this.get(caller, guid);
      const action = input.action ? this.store.actions.get(caller, input.action) : undefined;
      const { app, session } = this.resolveLinks(caller, input, input.versionId);
      // Spec: not shown whether a new Action moves the record to its App; the emulator keeps the App unless `app` is given.
      RECORDS.update(this.db, data.id, {
        ...withMetadata(input),
        actionId: action?.id,
        appId: app?.id,
        ...updatedBy(caller, this.db.clock.iso()),
      });
      if (session) this.linkSession(data.id, session);
      return RECORDS.find(this.db, { id: data.id })!;
    });
  }

  /** Soft delete: the record answers 404 afterwards and leaves every list. */
  softDelete(caller: Caller, guid: string): StoredData {
    const data = this.get(caller, guid);
    RECORDS.update(this.db, data.id, { deletedAt: this.db.clock.iso() });
    return data;
  }

  /** Resolves the supplied App, Session and version GUIDs (after the Action); returns the App and Session given. */
  private resolveLinks(
    caller: Caller,
    input: DataFields,
    version: string | null | undefined,
  ): { app: StoredApp | undefined; session: StoredSession | undefined } {
    const app = input.app ? this.store.apps.get(caller, input.app) : undefined;
    const session = input.session ? this.store.sessions.get(caller, input.session) : undefined;
    // Spec choice: the emulator has no Action versions, so no supplied version can resolve.
    if (version) throw new RecordNotFoundError("Version not found");
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
}

/** The fields with `metaData` (the legacy name) standing in for a missing `metadata`. */
const withMetadata = <F extends DataFields>({ metaData, ...fields }: F) => ({
  ...fields,
  metadata: fields.metadata === undefined ? metaData : fields.metadata,
});
