import { z } from "zod";
import { type GmsClient, path } from "../client";
import { Envelope, Guid, JsonObject, Timestamp } from "./common";

/** A Data record's input or output: a string, an array or an object. */
export const DataValue = z.union([z.string(), z.array(z.unknown()), JsonObject]);
export type DataValue = z.infer<typeof DataValue>;

const TokenCount = z.number().int().nonnegative();

/**
 * The public fields returned on detail, list and create. Spec: not shown what an optional field never
 * supplied looks like; the emulator answers null.
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
export type Data = z.infer<typeof Data>;

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

export const DataCreate = DataFields.extend({
  action: Guid,
  input: DataValue,
  output: DataValue,
  version: Guid.nullable().optional(),
  runId: z.string().nullable().optional(),
  guid: Guid.optional(),
});
export type DataCreate = z.infer<typeof DataCreate>;

/** Every field optional; only supplied fields change. The version travels as `version_id` here. */
export const DataUpdate = DataFields.extend({
  action: Guid.nullable().optional(),
  input: DataValue.optional(),
  output: DataValue.optional(),
  version_id: Guid.nullable().optional(),
});
export type DataUpdate = z.infer<typeof DataUpdate>;

/** A Data record as the code uses it. */
export type DataRecord = {
  guid: string;
  input: DataValue;
  output: DataValue;
  fullPromptSent: string | null;
  model: string | null;
  modelProvider: string | null;
  numInputTokens: number | null;
  numOutputTokens: number | null;
  latency: number | null;
  metadata: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
};

export const toDataRecord = (data: Data): DataRecord => ({
  guid: data.guid,
  input: data.input,
  output: data.output,
  fullPromptSent: data.full_prompt_sent,
  model: data.model,
  modelProvider: data.model_provider,
  numInputTokens: data.num_input_tokens,
  numOutputTokens: data.num_output_tokens,
  latency: data.latency,
  metadata: data.metadata,
  createdAt: data.created_at,
  updatedAt: data.updated_at,
});

export const dataApi = {
  /** The first `limit` Data records logged under an App, newest first (one page of the envelope). */
  async firstOfApp(client: GmsClient, app: string, limit: number): Promise<DataRecord[]> {
    const page = await client.request({ method: "GET", path: path`/apps/${app}/data`, query: { skip: 0, limit }, schema: Envelope(Data) });
    return page.data.map(toDataRecord);
  },
};
