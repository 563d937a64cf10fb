import type { DatasetCreate, DatasetUpdate } from "../../api/datasets";
import { RecordTable, type StoredRecord, integer, nullable, table, text } from "./columns";
import { storeModule } from "./module";
import { type StoredData, dataValue } from "./data";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Caller, type Page, type Paged, RECORD_COLUMNS, createdBy, newGuid, updatedBy } from "./records";
import type { AppStore } from "./apps";
import type { DataStore } from "./data";
import type { WorkspaceStore } from "./workspaces";

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

const RECORDS = new RecordTable(DATASETS, {
  joins: "LEFT JOIN apps p ON p.id = datasets.app_id",
  derived: { app: ["p.guid", nullable(text)] },
});
const ITEMS = new RecordTable(DATASET_ITEMS, { derived: { data: ["dataset_items.data_guid", nullable(text)] } });

/** A Dataset, its App's GUID (if any) as `app`. */
export type StoredDataset = StoredRecord<typeof RECORDS>;

/** A copy of a Data record's input and output, linked to that record by GUID (`data`). */
export type StoredDatasetItem = StoredRecord<typeof ITEMS>;

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

  list(caller: Caller, page: Page): Paged<StoredDataset> {
    return RECORDS.page(this.db, { workspaceId: caller.workspaceId, deletedAt: null }, page);
  }

  /** The Datasets of an App (404 when the App is missing or deleted). */
  listByApp(caller: Caller, appGuid: string, page: Page): StoredDataset[] {
    const app = this.store.apps.get(caller, appGuid);
    return RECORDS.page(this.db, { appId: app.id, deletedAt: null }, page).items;
  }

  /** Creates a Dataset with one Item per resolving Data GUID; 429 when the workspace allowance is used up. */
  create(caller: Caller, input: DatasetCreate): StoredDataset {
    return this.db.transaction(() => {
      const app = input.app ? this.store.apps.get(caller, input.app) : undefined;
      this.store.workspaces.reserve(caller, "datasets");
      const stamp = this.db.clock.iso();
      const id = RECORDS.insert(this.db, {
        ...createdBy(caller, stamp),
        guid: newGuid(),
        appId: app?.id,
        name: input.name,
        description: input.description,
      });
      this.addItems(caller, id, input.data ?? []);
      return this.byId(id);
    });
  }

  /** A non-deleted Dataset of the caller's workspace; otherwise 404 `Dataset not found`. */
  get(caller: Caller, guid: string): StoredDataset {
    const dataset = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
    if (!dataset) throw new RecordNotFoundError("Dataset not found");
    return dataset;
  }

  /**
   * Changes name and description when given. `data` (the wire's `datapoints`: Data GUIDs), when given, replaces every
   * Item (unresolvable GUIDs create none); when absent the Items stay. The App relationship never changes here.
   */
  update(caller: Caller, guid: string, input: Omit<DatasetUpdate, "app">): StoredDataset {
    return this.db.transaction(() => {
      const dataset = this.get(caller, guid);
      const stamp = this.db.clock.iso();
      RECORDS.update(this.db, dataset.id, { name: input.name, description: input.description, ...updatedBy(caller, stamp) });
      // Spec: not shown (ambiguous) what an absent `datapoints` does; the emulator keeps the Items then.
      if (input.data !== undefined) {
        ITEMS.updateAll(this.db, { datasetId: dataset.id, deletedAt: null }, { deletedAt: stamp });
        this.addItems(caller, dataset.id, input.data);
      }
      return this.byId(dataset.id);
    });
  }

  /** Soft-deletes the Dataset and its Items. */
  softDelete(caller: Caller, guid: string): StoredDataset {
    return this.db.transaction(() => {
      const dataset = this.get(caller, guid);
      const stamp = this.db.clock.iso();
      RECORDS.update(this.db, dataset.id, { deletedAt: stamp });
      ITEMS.updateAll(this.db, { datasetId: dataset.id, deletedAt: null }, { deletedAt: stamp });
      return dataset;
    });
  }

  /** The Dataset's Items in the order they were added. */
  items(caller: Caller, guid: string, page: Page): Paged<StoredDatasetItem> {
    const dataset = this.get(caller, guid);
    return ITEMS.page(this.db, { datasetId: dataset.id, deletedAt: null }, page);
  }

  /** The Data records the Dataset's Items link to, in Item order; the page is taken over records not since deleted. */
  linkedData(caller: Caller, guid: string, page: Page): StoredData[] {
    const dataset = this.get(caller, guid);
    return ITEMS.list(this.db, { datasetId: dataset.id, deletedAt: null })
      .flatMap((item) => (item.data === null ? [] : [this.store.data.find(caller, item.data)]))
      .filter((record): record is StoredData => record !== undefined)
      .slice(page.skip, page.skip + page.limit);
  }

  private addItems(caller: Caller, datasetId: number, dataGuids: string[]): void {
    const stamp = this.db.clock.iso();
    for (const dataGuid of dataGuids) {
      const data = this.store.data.find(caller, dataGuid);
      if (!data) continue;
      ITEMS.insert(this.db, {
        ...createdBy(caller, stamp),
        guid: newGuid(),
        datasetId,
        dataGuid: data.guid,
        input: data.input,
        output: data.output,
      });
    }
  }

  private byId(id: number): StoredDataset {
    return RECORDS.find(this.db, { id })!;
  }
}

/** Opened by the Store as `store.datasets` (./module.ts). */
export const datasetStore = storeModule(DatasetStore, [DATASETS, DATASET_ITEMS]);
