import type { DataRecord, DataValue } from "./data";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, fromJson, newGuid, toJson } from "./records";
import type { AppStore } from "./apps";
import type { DataStore } from "./data";
import type { WorkspaceStore } from "./workspaces";

export interface DatasetRecord extends Audited {
  id: number;
  guid: string;
  name: string;
  description: string | null;
  appId: number | null;
  appGuid: string | null;
}

/** A copy of a Data record's input and output, linked to that record by GUID. */
export interface DatasetItemRecord {
  id: number;
  guid: string;
  input: DataValue;
  output: DataValue;
  dataGuid: string | null;
  createdAt: string;
}

/**
 * Datasets and their Items. Items copy the input and output of Data records at the time they are added;
 * later edits or deletion of the Data record leave the copy alone (only `/data` follows the link).
 */
export class DatasetStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly apps: AppStore; readonly data: DataStore; readonly workspaces: WorkspaceStore },
  ) {
    db.sql.exec(`
      CREATE TABLE IF NOT EXISTS datasets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        app_id INTEGER REFERENCES apps(id),
        name TEXT NOT NULL,
        description TEXT,
        ${RECORD_COLUMNS}
      );
      CREATE INDEX IF NOT EXISTS datasets_workspace ON datasets (workspace_id, deleted_at);
      CREATE TABLE IF NOT EXISTS dataset_items (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        dataset_id INTEGER NOT NULL REFERENCES datasets(id),
        data_guid TEXT,
        input TEXT NOT NULL,
        output TEXT NOT NULL,
        ${RECORD_COLUMNS}
      );
      CREATE INDEX IF NOT EXISTS dataset_items_dataset ON dataset_items (dataset_id, deleted_at);
    `);
  }

  list(caller: Caller, page: Page): Paged<DatasetRecord> {
    const from = `${FROM} WHERE d.workspace_id = ? AND d.deleted_at IS NULL`;
    const { rows, total } = this.db.paged(from, [caller.workspaceId], page, { select: COLUMNS, order: "d.id" });
    return { items: rows.map(toRecord), total };
  }

  /** The Datasets of an App (404 when the App is missing or deleted). */
  listByApp(caller: Caller, appGuid: string, page: Page): DatasetRecord[] {
    const app = this.store.apps.get(caller, appGuid);
    return this.db
      .all(`${SELECT} WHERE d.app_id = ? AND d.deleted_at IS NULL ORDER BY d.id LIMIT ? OFFSET ?`, app.id, page.limit, page.skip)
      .map(toRecord);
  }

  /** Creates a Dataset with one Item per resolving Data GUID; 429 when the workspace allowance is used up. */
  create(
    caller: Caller,
    input: { name: string; description?: string | null | undefined; appGuid?: string | null | undefined; dataGuids?: string[] | undefined },
  ): DatasetRecord {
    return this.db.transaction(() => {
      const app = input.appGuid ? this.store.apps.get(caller, input.appGuid) : undefined;
      this.store.workspaces.reserve(caller, "datasets");
      const stamp = this.db.clock.iso();
      const id = this.db.run(
        `INSERT INTO datasets (guid, workspace_id, app_id, name, description, created_at, updated_at, created_by_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        newGuid(),
        caller.workspaceId,
        app?.id ?? null,
        input.name,
        input.description ?? null,
        stamp,
        stamp,
        caller.userId,
      );
      this.addItems(caller, id, input.dataGuids ?? []);
      return this.byId(id);
    });
  }

  /** A non-deleted Dataset of the caller's workspace; otherwise 404 `Dataset not found`. */
  get(caller: Caller, guid: string): DatasetRecord {
    const row = this.db.get(`${SELECT} WHERE d.guid = ? AND d.workspace_id = ? AND d.deleted_at IS NULL`, guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Dataset not found");
    return toRecord(row);
  }

  /**
   * Changes name and description when given. `dataGuids`, when given, replaces every Item (unresolvable
   * GUIDs create none); when absent the Items stay. The App relationship never changes here.
   */
  update(
    caller: Caller,
    guid: string,
    input: { name?: string | undefined; description?: string | null | undefined; dataGuids?: string[] | undefined },
  ): DatasetRecord {
    return this.db.transaction(() => {
      const dataset = this.get(caller, guid);
      const stamp = this.db.clock.iso();
      this.db.run(
        "UPDATE datasets SET name = ?, description = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
        input.name ?? dataset.name,
        input.description === undefined ? dataset.description : input.description,
        stamp,
        caller.userId,
        dataset.id,
      );
      // Spec: not shown (ambiguous) what an absent `datapoints` does; the emulator keeps the Items then.
      if (input.dataGuids !== undefined) {
        this.db.run("UPDATE dataset_items SET deleted_at = ? WHERE dataset_id = ? AND deleted_at IS NULL", stamp, dataset.id);
        this.addItems(caller, dataset.id, input.dataGuids);
      }
      return this.byId(dataset.id);
    });
  }

  /** Soft-deletes the Dataset and its Items. */
  softDelete(caller: Caller, guid: string): DatasetRecord {
    return this.db.transaction(() => {
      const dataset = this.get(caller, guid);
      const stamp = this.db.clock.iso();
      this.db.run("UPDATE datasets SET deleted_at = ? WHERE id = ?", stamp, dataset.id);
      this.db.run("UPDATE dataset_items SET deleted_at = ? WHERE dataset_id = ? AND deleted_at IS NULL", stamp, dataset.id);
      return dataset;
    });
  }

  /** The Dataset's Items in the order they were added. */
  items(caller: Caller, guid: string, page: Page): Paged<DatasetItemRecord> {
    const dataset = this.get(caller, guid);
    const { rows, total } = this.db.paged("FROM dataset_items WHERE dataset_id = ? AND deleted_at IS NULL", [dataset.id], page, {
      order: "id",
    });
    return { items: rows.map(toItem), total };
  }

  /** The Data records the Dataset's Items link to, in Item order; the page is taken over records not since deleted. */
  linkedData(caller: Caller, guid: string, page: Page): DataRecord[] {
    const dataset = this.get(caller, guid);
    return this.db
      .all<{ data_guid: string }>(
        "SELECT data_guid FROM dataset_items WHERE dataset_id = ? AND deleted_at IS NULL AND data_guid IS NOT NULL ORDER BY id",
        dataset.id,
      )
      .map((row) => this.store.data.find(caller, row.data_guid))
      .filter((record): record is DataRecord => record !== undefined)
      .slice(page.skip, page.skip + page.limit);
  }

  private addItems(caller: Caller, datasetId: number, dataGuids: string[]): void {
    const stamp = this.db.clock.iso();
    for (const dataGuid of dataGuids) {
      const data = this.store.data.find(caller, dataGuid);
      if (!data) continue;
      this.db.run(
        `INSERT INTO dataset_items (guid, workspace_id, dataset_id, data_guid, input, output, created_at, updated_at, created_by_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        newGuid(),
        caller.workspaceId,
        datasetId,
        data.guid,
        toJson(data.input),
        toJson(data.output),
        stamp,
        stamp,
        caller.userId,
      );
    }
  }

  private byId(id: number): DatasetRecord {
    return toRecord(this.db.get(`${SELECT} WHERE d.id = ?`, id)!);
  }
}

const COLUMNS = "d.*, p.guid AS app_guid";
const FROM = "FROM datasets d LEFT JOIN apps p ON p.id = d.app_id";
const SELECT = `SELECT ${COLUMNS} ${FROM}`;

function toRecord(row: Record<string, unknown>): DatasetRecord {
  return {
    id: row.id as number,
    guid: row.guid as string,
    name: row.name as string,
    description: (row.description as string | null) ?? null,
    appId: (row.app_id as number | null) ?? null,
    appGuid: (row.app_guid as string | null) ?? null,
    ...audited(row),
  };
}

function toItem(row: Record<string, unknown>): DatasetItemRecord {
  return {
    id: row.id as number,
    guid: row.guid as string,
    input: fromJson<DataValue>(row.input)!,
    output: fromJson<DataValue>(row.output)!,
    dataGuid: (row.data_guid as string | null) ?? null,
    createdAt: row.created_at as string,
  };
}
