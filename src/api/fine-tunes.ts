/**
 * Fine-tunes: a model trained at an external model provider from selected Data records. The spec shows the
 * create fields and the status response only; every other field below is the emulator's choice (README,
 * "Where the spec is silent").
 */
import { z } from "zod";
import type { GmsClient } from "../client";
import { DeleteMessage, Guid, UnnamedAuditFields } from "./common";
import { endpoint, listAll } from "./endpoint";
import { wire } from "./wire";

// Spec: only `processing` is shown; the emulator ends every job in `succeeded` or `failed`.
export const FineTuneStatus = z.enum(["processing", "succeeded", "failed"]);
export type FineTuneStatus = z.infer<typeof FineTuneStatus>;

/** The minimum number of `data_ids` that must resolve to Data records (spec, Limits). */
export const MIN_FINE_TUNE_RECORDS = 10;

export const FineTuneCreate = wire(
  z.object({
    name: z.string().min(1),
    app: Guid,
    // Spec: not shown whether `dataset` is required or must resolve; the emulator takes null or a live Dataset of the workspace.
    dataset: Guid.nullable().optional(),
    /** Internal numeric Data IDs, not GUIDs; unresolvable ones are skipped, and at least 10 must resolve. */
    data_ids: z.array(z.number().int()),
    base_model: z.string().min(1),
    /** The numeric id of a Provider connection: the FineTune kind's `providerConnection`. */
    workspaceModelProviderId: z.number().int(),
  }),
  { workspaceModelProviderId: "providerConnection" },
);
export type FineTuneCreate = z.output<typeof FineTuneCreate>;

/** Every fine-tune route (create, get, list, rename) answers this record. */
export const FineTune = wire(
  z.object({
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
    /** The GUID of the Provider connection `workspaceModelProviderId` named: the FineTune kind's `providerConnectionGuid`. */
    provider: Guid,
    status: FineTuneStatus,
    /** The provider-side job name. */
    vendor_finetune_name: z.string(),
    /** Why the provider failed the job; null unless `status` is `failed`. */
    failure_reason: z.string().nullable(),
    ...UnnamedAuditFields,
  }),
  { provider: "providerConnectionGuid" },
);
/** A fine-tune as the code uses it. */
export type FineTuneRecord = z.output<typeof FineTune>;

/** `GET /finetune/{guid}/status`: exactly these two fields (spec). */
export const FineTuneStatusResponse = wire(
  z.object({
    status: FineTuneStatus,
    vendor_finetune_name: z.string(),
  }),
);

/** `PUT /finetune/{guid}` renames: `name` only, required. */
export const FineTuneRename = wire(z.object({ name: z.string().min(1) }));

/**
 * What the emulator-only routes `GET /_emulator/data/{guid}` and `GET /_emulator/providers/{guid}` answer
 * (outside `/v1`, same key): the internal numeric id that `data_ids` and `workspaceModelProviderId` take.
 * A real service has no such route.
 */
export const NumericId = z.object({ guid: Guid, id: z.number().int() });
export type NumericId = z.infer<typeof NumericId>;

export const fineTuneEndpoints = {
  /** Every fine-tune of the workspace. */
  list: endpoint({ method: "GET", path: "/finetune", response: FineTune, list: "envelope" }),
  /** The fine-tunes of an App: a bare array honouring skip/limit. Spec: its element fields are not shown; the emulator answers the fine-tune. */
  ofApp: endpoint({ method: "GET", path: "/apps/{guid}/finetunes", response: FineTune, list: "bare" }),
  /** Answers once the provider accepted the job: status `processing`. Spec: the full response is not shown. */
  create: endpoint({ method: "POST", path: "/finetune", body: FineTuneCreate, response: FineTune }),
  get: endpoint({ method: "GET", path: "/finetune/{guid}", response: FineTune }),
  status: endpoint({ method: "GET", path: "/finetune/{guid}/status", response: FineTuneStatusResponse }),
  /** Spec: the response is not shown; the emulator answers the renamed fine-tune (the client relies on nothing in it: it reads the fine-tune back). */
  rename: endpoint({ method: "PUT", path: "/finetune/{guid}", body: FineTuneRename, response: FineTune, shown: false }),
  /** Spec: not shown; the emulator answers `{ message: "Fine-tune <guid> deleted" }`. */
  delete: endpoint({ method: "DELETE", path: "/finetune/{guid}", response: DeleteMessage, shown: false }),
};

export const fineTunesApi = {
  /** The fine-tunes of an App (the `getFineTunes` lookup; the FineTune kind's operations call the entries themselves). */
  listOfApp: (client: GmsClient, app: string): Promise<FineTuneRecord[]> =>
    listAll(client, fineTuneEndpoints.ofApp, { params: { guid: app } }),
};
