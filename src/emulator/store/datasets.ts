import { type RawRow, integer, nullable, table, text } from "./columns";
import { type DataRecord, type DataValue, dataValue } from "./data";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, newGuid, toJson } from "./records";
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

export const DATASETS = table("datasets", {
  id: integer,
  guid: text,
  workspace_id: integer,
  app_id: nullable(integer),
  name: text,
  description: nullable(text),
  ...RECORD_COLUMNS,
});

export const DATASET_ITEMS = table("dataset_items", {
  id: integer,
  guid: text,
  workspace_id: integer,
  dataset_id: integer,
  data_guid: nullable(text),
  input: dataValue(),
  output: dataValue(),
  ...RECORD_COLUMNS,
});

/**
 * Datasets and their Items. Items copy the input and output of Data records at the time they are added;
 * later edits or deletion of the Data record leave the copy alone (only `/data` follows the link).
 */
export class DatasetStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly apps: AppStore; readonly data: DataStore; readonly workspaces: WorkspaceStore },
  ) {}

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
      .all(
        "SELECT data_guid FROM dataset_items WHERE dataset_id = ? AND deleted_at IS NULL AND data_guid IS NOT NULL ORDER BY id",
        dataset.id,
      )
      .map((row) => this.store.data.find(caller, LINKED.decode(row).data_guid))
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

const ROW = DATASETS.extend({ app_guid: nullable(text) });
const LINKED = DATASET_ITEMS.pick("data_guid").extend({ data_guid: text });

function toRecord(raw: RawRow): DatasetRecord {
  const row = ROW.decode(raw);
  return {
    id: row.id,
    guid: row.guid,
    name: row.name,
    description: row.description,
    appId: row.app_id,
    appGuid: row.app_guid,
    ...audited(row),
  };
}

function toItem(raw: RawRow): DatasetItemRecord {
  const row = DATASET_ITEMS.decode(raw);
  return { id: row.id, guid: row.guid, input: row.input, output: row.output, dataGuid: row.data_guid, createdAt: row.created_at };
}
