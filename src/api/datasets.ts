import { z } from "zod";
import { collect, type EncodedPath, type GmsClient, listBare, paginateEnvelope, paginateUntilShort, path } from "../client";
import { type FindCreated, Guid, Timestamp } from "./common";
import { Data, DataValue } from "./data";
import { putRecord } from "./put-record";

/** A Dataset as every Dataset route returns it: exactly these five fields. */
export const Dataset = z.object({
  guid: Guid,
  name: z.string(),
  description: z.string().nullable(),
  app: Guid.nullable(),
  created_by_id: z.string(),
});
export type Dataset = z.infer<typeof Dataset>;

// Spec: not shown for malformed GUIDs; the emulator skips them like any unresolvable GUID (no Item, no 400).
const DataGuids = z.array(z.string());

export const DatasetCreate = z.object({
  // Spec: not shown which create fields are required; the emulator requires `name` only.
  name: z.string().min(1),
  description: z.string().nullable().optional(),
  app: Guid.nullable().optional(),
  data: DataGuids.optional(),
});
export type DatasetCreate = z.infer<typeof DatasetCreate>;

/** `app` is accepted and ignored: the existing App relationship is retained. */
export const DatasetUpdate = z.object({
  name: z.string().min(1).optional(),
  description: z.string().nullable().optional(),
  app: Guid.nullable().optional(),
  datapoints: DataGuids.optional(),
});
export type DatasetUpdate = z.infer<typeof DatasetUpdate>;

// Spec: not shown; the emulator names Dataset Item fields guid, input, output, data (the linked Data GUID), created_at.
export const DatasetItem = z.object({
  guid: Guid,
  input: DataValue,
  output: DataValue,
  data: Guid.nullable(),
  created_at: Timestamp,
});
export type DatasetItem = z.infer<typeof DatasetItem>;

/** A Dataset as the code uses it. */
export type DatasetRecord = {
  guid: string;
  name: string;
  description: string | null;
  app: string | null;
};

export const toDatasetRecord = (dataset: Dataset): DatasetRecord => ({
  guid: dataset.guid,
  name: dataset.name,
  description: dataset.description,
  app: dataset.app,
});

/** What the code changes on a Dataset; `data` lists the Data records whose copies replace every Item. */
export interface DatasetChanges {
  name?: string | undefined;
  description?: string | null | undefined;
  data?: string[] | undefined;
}

/** Only the GUID of each linked record matters; the rest of a Data record is not parsed. */
const LinkedData = Data.pick({ guid: true });

const recordPath = (guid: string): EncodedPath => path`/datasets/${guid}`;

export const datasetsApi = {
  /** The Dataset's own path (to delete an abandoned create). */
  recordPath,
  /** The Datasets of an App (a bare array), or with no App every Dataset of the workspace (an envelope). */
  async list(client: GmsClient, app: string | null | undefined): Promise<DatasetRecord[]> {
    const datasets = app
      ? await listBare(client, { path: path`/datasets/app/${app}`, item: Dataset })
      : await collect(paginateEnvelope(client, { path: path`/datasets/`, item: Dataset }));
    return datasets.map(toDatasetRecord);
  },
  /**
   * `data` makes the first Items. Dataset records carry no creation time, so the matching Datasets are
   * listed before the POST: a lookup after a lost answer then tells the new one from older ones.
   */
  async create(client: GmsClient, body: DatasetCreate, findCreated: FindCreated): Promise<DatasetRecord> {
    return toDatasetRecord(
      await client.create({
        path: path`/datasets`,
        body,
        schema: Dataset,
        findCreated,
        listBeforeCreate: true,
        identity: [body.name, body.description, body.app],
      }),
    );
  },
  async get(client: GmsClient, guid: string): Promise<DatasetRecord> {
    return toDatasetRecord(await client.request({ method: "GET", path: recordPath(guid), schema: Dataset }));
  },
  /**
   * Sends the changes given, `data` as `datapoints`. A PUT without `datapoints` may empty the Dataset
   * (the spec's "omitted or unresolvable GUIDs create none"): a caller that manages the Items sends them
   * with every change.
   */
  async update(client: GmsClient, guid: string, changes: DatasetChanges): Promise<DatasetRecord> {
    const body: DatasetUpdate = {};
    if ("name" in changes) body.name = changes.name;
    if ("description" in changes) body.description = changes.description;
    if ("data" in changes) body.datapoints = changes.data;
    return toDatasetRecord(await putRecord(client, recordPath(guid), body, Dataset));
  },
  async delete(client: GmsClient, guid: string): Promise<void> {
    await client.request({ method: "DELETE", path: recordPath(guid), schema: z.unknown() });
  },
  /** The GUIDs of the Data records the Items link to, in Item order (a bare array paged by skip/limit). */
  async linkedData(client: GmsClient, guid: string): Promise<string[]> {
    const records = await collect(paginateUntilShort(client, { path: path`/datasets/${guid}/data`, item: LinkedData }));
    return records.map((record) => record.guid);
  },
};
