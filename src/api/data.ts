/** The Data endpoints: logged generations, the workspace's and an App's. */
import { z } from "zod";
import type { GmsClient } from "../client";
import { DeleteMessage, Envelope, Guid, JsonObject, Timestamp } from "./common";
import { call, endpoint } from "./endpoint";
import { wire } from "./wire";

/** A Data record's input or output: a string, an array or an object (its keys are data: never renamed). */
export const DataValue = z.union([z.string(), z.array(z.unknown()), JsonObject]);
export type DataValue = z.infer<typeof DataValue>;

const TokenCount = z.number().int().nonnegative();

/**
 * The public fields returned on detail, list and create, in the wire's names (src/api/datasets.ts reads a
 * Dataset's linked Data with it). Spec: not shown what an optional field never supplied looks like; the
 * emulator answers null. `DataCodec` is the same record decoded into the package's names.
 */
export const Data = z.object({
  guid: Guid,
  input: DataValue,
  output: DataValue,
  full_prompt_sent: z.string().nullable(),
  model: z.string().nullable(),
  model_provider: z.string().nullable(),
  num_input_tokens: TokenCount.nullable(),
  num_output_tokens: TokenCount.nullable(),
  latency: z.number().nullable(),
  metadata: JsonObject.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const DataCodec = wire(Data);
/** A Data record as the code uses it. */
export type DataRecord = z.output<typeof DataCodec>;

/**
 * Fields create and update share. Relationship GUIDs are optional and null counts as not supplied;
 * `meta_data` is the legacy name of `metadata`. The raw request/response and cost fields are accepted
 * but, their names not being shown, ignored like any unknown field.
 */
const DataFields = z.object({
  app: Guid.nullable().optional(),
  session: Guid.nullable().optional(),
  full_prompt_sent: z.string().nullable().optional(),
  system_message: z.string().nullable().optional(),
  prompt_template: z.string().nullable().optional(),
  model: z.string().nullable().optional(),
  model_provider: z.string().nullable().optional(),
  num_input_tokens: TokenCount.nullable().optional(),
  num_output_tokens: TokenCount.nullable().optional(),
  latency: z.number().nonnegative().nullable().optional(),
  metadata: JsonObject.nullable().optional(),
  meta_data: JsonObject.nullable().optional(),
});

export const DataCreate = wire(
  DataFields.extend({
    action: Guid,
    input: DataValue,
    output: DataValue,
    version: Guid.nullable().optional(),
    runId: z.string().nullable().optional(),
    guid: Guid.optional(),
  }),
);
export type DataCreate = z.output<typeof DataCreate>;

/** Every field optional; only supplied fields change. The version travels as `version_id` here. */
export const DataUpdate = wire(
  DataFields.extend({
    action: Guid.nullable().optional(),
    input: DataValue.optional(),
    output: DataValue.optional(),
    version_id: Guid.nullable().optional(),
  }),
);
export type DataUpdate = z.output<typeof DataUpdate>;

export const dataEndpoints = {
  /** Newest first. */
  list: endpoint({ method: "GET", path: "/data", response: DataCodec, list: "envelope" }),
  /** Answers the stored Data record. */
  create: endpoint({ method: "POST", path: "/data", body: DataCreate, response: DataCodec }),
  get: endpoint({ method: "GET", path: "/data/{guid}", response: DataCodec }),
  update: endpoint({ method: "PUT", path: "/data/{guid}", body: DataUpdate, response: DataCodec }),
  /** Spec: response not shown; the emulator answers `{ message: "Data <guid> deleted" }` (the shape the spec shows for Providers). */
  delete: endpoint({ method: "DELETE", path: "/data/{guid}", response: DeleteMessage, shown: false }),
  /** The App's Data, an envelope. */
  ofApp: endpoint({ method: "GET", path: "/apps/{guid}/data", response: DataCodec, list: "envelope" }),
};

/** One page of the App's Data as the envelope answers it (`dataApi.firstOfApp` reads no further). */
const firstPageOfApp = endpoint({ method: "GET", path: dataEndpoints.ofApp.path, response: Envelope(DataCodec) });

export const dataApi = {
  /** The first `limit` Data records logged under an App, newest first (one page of the envelope). */
  async firstOfApp(client: GmsClient, app: string, limit: number): Promise<DataRecord[]> {
    return (await call(client, firstPageOfApp, { params: { guid: app }, query: { skip: 0, limit } })).data;
  },
};
