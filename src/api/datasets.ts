/** The Dataset endpoints: Datasets, their Items and the Data records the Items link to. */
import { z } from "zod";
import type { EncodedPath, GmsClient } from "../client";
import { DeleteMessage, type FindCreated, Guid, Timestamp } from "./common";
import { Data, DataValue } from "./data";
import { call, createWith, endpoint, listAll, pathOf } from "./endpoint";
import { putRecord } from "./put-record";
import { wire } from "./wire";

/** A Dataset as every Dataset route returns it: exactly these five fields (spec). */
export const Dataset = wire(
  z.object({
    guid: Guid,
    name: z.string(),
    description: z.string().nullable(),
    app: Guid.nullable(),
    created_by_id: z.string(),
  }),
);
/** A Dataset as the code uses it. */
export type DatasetRecord = z.output<typeof Dataset>;

// Spec: not shown for malformed GUIDs; the emulator skips them like any unresolvable GUID (no Item, no 400).
const DataGuids = z.array(z.string());

export const DatasetCreate = wire(
  z.object({
    // Spec: not shown which create fields are required; the emulator requires `name` only.
    name: z.string().min(1),
    description: z.string().nullable().optional(),
    app: Guid.nullable().optional(),
    data: DataGuids.optional(),
  }),
);
export type DatasetCreate = z.output<typeof DatasetCreate>;

/** `app` is accepted and ignored: the existing App relationship is retained. */
export const DatasetUpdate = wire(
  z.object({
    name: z.string().min(1).optional(),
    description: z.string().nullable().optional(),
    app: Guid.nullable().optional(),
    datapoints: DataGuids.optional(),
  }),
);
export type DatasetUpdate = z.output<typeof DatasetUpdate>;

// Spec: not shown; the emulator names Dataset Item fields guid, input, output, data (the linked Data GUID), created_at.
export const DatasetItem = wire(
  z.object({
    guid: Guid,
    input: DataValue,
    output: DataValue,
    data: Guid.nullable(),
    created_at: Timestamp,
  }),
);
export type DatasetItem = z.output<typeof DatasetItem>;

/** What the code changes on a Dataset; `data` lists the Data records whose copies replace every Item (sent as `datapoints`). */
export interface DatasetChanges {
  name?: string | undefined;
  description?: string | null | undefined;
  data?: string[] | undefined;
}

export const datasetEndpoints = {
  /** Every Dataset of the workspace (the spec writes the path with its trailing slash). */
  list: endpoint({ method: "GET", path: "/datasets/", response: Dataset, list: "envelope" }),
  create: endpoint({ method: "POST", path: "/datasets", body: DatasetCreate, response: Dataset }),
  // Spec: the responses of get, update and delete are not shown; the emulator answers get and update with the Dataset (its fields as the
  // spec lists them), which the client reads on get and relies on nowhere else (`putRecord` on update).
  get: endpoint({ method: "GET", path: "/datasets/{guid}", response: Dataset }),
  update: endpoint({ method: "PUT", path: "/datasets/{guid}", body: DatasetUpdate, response: Dataset, shown: false }),
  /** Spec: not shown; the emulator answers `{ message: "Dataset <guid> deleted" }`. */
  delete: endpoint({ method: "DELETE", path: "/datasets/{guid}", response: DeleteMessage, shown: false }),
  /** The Datasets of an App: a bare array honouring skip/limit. */
  ofApp: endpoint({ method: "GET", path: "/datasets/app/{app}", response: Dataset, list: "bare" }),
  items: endpoint({ method: "GET", path: "/datasets/{guid}/items", response: DatasetItem, list: "envelope" }),
  /** The Data records the Items link to, in Item order: a bare array honouring skip/limit. */
  data: endpoint({ method: "GET", path: "/datasets/{guid}/data", response: wire(Data), list: "bare" }),
};

const recordPath = (guid: string): EncodedPath => pathOf(datasetEndpoints.get, { guid });

export const datasetsApi = {
  /** The Dataset's own path (to delete an abandoned create). */
  recordPath,
  /** The Datasets of an App (a bare array), or with no App every Dataset of the workspace (an envelope). */
  list: (client: GmsClient, app: string | null | undefined): Promise<DatasetRecord[]> =>
    app ? listAll(client, datasetEndpoints.ofApp, { params: { app } }) : listAll(client, datasetEndpoints.list),
  /**
   * `data` makes the first Items. Dataset records carry no creation time, so the matching Datasets are
   * listed before the POST: a lookup after a lost answer then tells the new one from older ones.
   */
  create: (client: GmsClient, body: DatasetCreate, findCreated: FindCreated): Promise<DatasetRecord> =>
    createWith(client, datasetEndpoints.create, {
      body,
      findCreated,
      listBeforeCreate: true,
      identity: [body.name, body.description, body.app],
    }),
  get: (client: GmsClient, guid: string): Promise<DatasetRecord> => call(client, datasetEndpoints.get, { params: { guid } }),
  /**
   * Sends the changes given, `data` as `datapoints`. A PUT without `datapoints` may empty the Dataset
   * (the spec's "omitted or unresolvable GUIDs create none"): a caller that manages the Items sends them
   * with every change. The answer is not shown: the Dataset is read back when it is not one.
   */
  update(client: GmsClient, guid: string, changes: DatasetChanges): Promise<DatasetRecord> {
    const body: DatasetUpdate = { name: changes.name, description: changes.description, datapoints: changes.data };
    return putRecord(client, recordPath(guid), z.encode(DatasetUpdate, body), Dataset);
  },
  async delete(client: GmsClient, guid: string): Promise<void> {
    await call(client, datasetEndpoints.delete, { params: { guid } });
  },
  /** The GUIDs of the Data records the Items link to, in Item order. */
  async linkedData(client: GmsClient, guid: string): Promise<string[]> {
    return (await listAll(client, datasetEndpoints.data, { params: { guid } })).map((record) => record.guid);
  },
};
