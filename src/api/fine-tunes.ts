/**
 * Fine-tunes: a model trained at an external model provider from selected Data records. The spec shows the
 * create fields and the status response only; every other field below is the emulator's choice (README,
 * "Where the spec is silent").
 */
import { z } from "zod";
import { collect, type EncodedPath, type GmsClient, paginateEnvelope, paginateUntilShort, path } from "../client";
import { type FindCreated, Guid, UnnamedAuditFields } from "./common";
import { putRecord } from "./put-record";

// Spec: only `processing` is shown; the emulator ends every job in `succeeded` or `failed`.
export const FineTuneStatus = z.enum(["processing", "succeeded", "failed"]);
export type FineTuneStatus = z.infer<typeof FineTuneStatus>;

/** The minimum number of `data_ids` that must resolve to Data records (spec, Limits). */
export const MIN_FINE_TUNE_RECORDS = 10;

export const FineTuneCreate = z.object({
  name: z.string().min(1),
  app: Guid,
  // Spec: not shown whether `dataset` is required or must resolve; the emulator takes null or a live Dataset of the workspace.
  dataset: Guid.nullable().optional(),
  /** Internal numeric Data IDs, not GUIDs; unresolvable ones are skipped, and at least 10 must resolve. */
  data_ids: z.array(z.number().int()),
  base_model: z.string().min(1),
  /** The numeric id of a Provider connection. */
  workspaceModelProviderId: z.number().int(),
});
export type FineTuneCreate = z.infer<typeof FineTuneCreate>;

/** Every fine-tune route (create, get, list, rename) answers this record. */
export const FineTune = z.object({
  guid: Guid,
  name: z.string(),
  app: Guid,
  /** The Dataset named on create, or null. */
  dataset: Guid.nullable(),
  /** The dedicated Dataset the create built from the resolved Data records. */
  training_dataset: Guid,
  /** The resolved Data IDs, in the order given, without repeats. */
  data_ids: z.array(z.number().int()),
  base_model: z.string(),
  /** The GUID of the Provider connection `workspaceModelProviderId` named. */
  provider: Guid,
  status: FineTuneStatus,
  /** The provider-side job name. */
  vendor_finetune_name: z.string(),
  /** Why the provider failed the job; null unless `status` is `failed`. */
  failure_reason: z.string().nullable(),
  ...UnnamedAuditFields,
});
export type FineTune = z.infer<typeof FineTune>;

/** `GET /finetune/{guid}/status`: exactly these two fields. */
export const FineTuneStatusResponse = z.object({
  status: FineTuneStatus,
  vendor_finetune_name: z.string(),
});
export type FineTuneStatusResponse = z.infer<typeof FineTuneStatusResponse>;

/** `PUT /finetune/{guid}` renames: `name` only, required. */
export const FineTuneRename = z.object({ name: z.string().min(1) });
export type FineTuneRename = z.infer<typeof FineTuneRename>;

/**
 * What the emulator-only routes `GET /_emulator/data/{guid}` and `GET /_emulator/providers/{guid}` answer
 * (outside `/v1`, same key): the internal numeric id that `data_ids` and `workspaceModelProviderId` take.
 * A real service has no such route.
 */
export const NumericId = z.object({ guid: Guid, id: z.number().int() });
export type NumericId = z.infer<typeof NumericId>;

/** A fine-tune as the code uses it. */
export type FineTuneRecord = {
  guid: string;
  name: string;
  app: string;
  dataset: string | null;
  trainingDataset: string;
  dataIds: number[];
  baseModel: string;
  provider: string;
  status: FineTuneStatus;
  vendorFinetuneName: string;
  failureReason: string | null;
  createdAt: string | undefined;
  updatedAt: string | undefined;
};

export const toFineTuneRecord = (fineTune: FineTune): FineTuneRecord => ({
  guid: fineTune.guid,
  name: fineTune.name,
  app: fineTune.app,
  dataset: fineTune.dataset,
  trainingDataset: fineTune.training_dataset,
  dataIds: fineTune.data_ids,
  baseModel: fineTune.base_model,
  provider: fineTune.provider,
  status: fineTune.status,
  vendorFinetuneName: fineTune.vendor_finetune_name,
  failureReason: fineTune.failure_reason,
  createdAt: fineTune.created_at,
  updatedAt: fineTune.updated_at,
});

/** The status route's answer as the code uses it. */
export type FineTuneStatusRecord = { status: FineTuneStatus; vendorFinetuneName: string };

const recordPath = (guid: string): EncodedPath => path`/finetune/${guid}`;

export const fineTunesApi = {
  /** The fine-tune's own path (to delete an abandoned create). */
  recordPath,
  /** Every fine-tune of the workspace (an envelope). */
  async list(client: GmsClient): Promise<FineTuneRecord[]> {
    return (await collect(paginateEnvelope(client, { path: path`/finetune`, item: FineTune }))).map(toFineTuneRecord);
  },
  /** The fine-tunes of an App: a bare array paged until a short page. */
  async listOfApp(client: GmsClient, app: string): Promise<FineTuneRecord[]> {
    return (await collect(paginateUntilShort(client, { path: path`/apps/${app}/finetunes`, item: FineTune }))).map(toFineTuneRecord);
  },
  /** Answers once the provider accepted the job: status `processing`. */
  async create(client: GmsClient, body: FineTuneCreate, findCreated: FindCreated): Promise<FineTuneRecord> {
    return toFineTuneRecord(
      await client.create({
        path: path`/finetune`,
        body,
        schema: FineTune,
        findCreated,
        identity: [body.app, body.name, body.dataset, body.base_model],
      }),
    );
  },
  async get(client: GmsClient, guid: string): Promise<FineTuneRecord> {
    return toFineTuneRecord(await client.request({ method: "GET", path: recordPath(guid), schema: FineTune }));
  },
  async status(client: GmsClient, guid: string): Promise<FineTuneStatusRecord> {
    const answer = await client.request({ method: "GET", path: path`/finetune/${guid}/status`, schema: FineTuneStatusResponse });
    return { status: answer.status, vendorFinetuneName: answer.vendor_finetune_name };
  },
  /** The rename response is not shown: the record is read back when the answer is not one. */
  async rename(client: GmsClient, guid: string, body: FineTuneRename): Promise<FineTuneRecord> {
    return toFineTuneRecord(await putRecord(client, recordPath(guid), body, FineTune));
  },
  async delete(client: GmsClient, guid: string): Promise<void> {
    await client.request({ method: "DELETE", path: recordPath(guid), schema: z.unknown() });
  },
};
