/** The Dataset endpoints: Datasets, their Items and the Data records the Items link to. */
import { z } from "zod";
import { DeleteMessage, Guid, Timestamp } from "./common";
import { Data, DataValue } from "./data";
import { endpoint } from "./endpoint";
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

/**
 * `app` is accepted and ignored: the existing App relationship is retained. `datapoints` lists the Data records whose
 * copies replace every Item: the package calls it `data`, as create does.
 */
export const DatasetUpdate = wire(
  z.object({
    name: z.string().min(1).optional(),
    description: z.string().nullable().optional(),
    app: Guid.nullable().optional(),
    datapoints: DataGuids.optional(),
  }),
  { datapoints: "data" },
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

export const datasetEndpoints = {
  /** Every Dataset of the workspace (the spec writes the path with its trailing slash). */
  list: endpoint({ method: "GET", path: "/datasets/", response: Dataset, list: "envelope" }),
  create: endpoint({ method: "POST", path: "/datasets", body: DatasetCreate, response: Dataset }),
  // Spec: the responses of get, update and delete are not shown; the emulator answers get and update with the Dataset (its fields as the
  // spec lists them), which the client reads on get and relies on nowhere else (an update reads the Dataset back).
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
