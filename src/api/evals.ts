import { z } from "zod";
import { collect, type GmsClient, paginateEnvelope, path } from "../client";
import { type FindCreated, UnnamedAuditFields, Guid, JsonObject, PageQuery } from "./common";

/** Eval types are global: every workspace sees the same ones. */
export const EvalType = z.object({
  guid: Guid,
  name: z.string(),
  description: z.string().nullable(),
});
export type EvalType = z.infer<typeof EvalType>;

export const EvalVariable = z.object({
  name: z.string(),
  value: z.union([z.string(), z.number(), z.boolean(), JsonObject]),
});
export type EvalVariable = z.infer<typeof EvalVariable>;

export const EvalTypeMetadata = z.object({ variables: z.array(EvalVariable).optional() });
export type EvalTypeMetadata = z.infer<typeof EvalTypeMetadata>;

/** One `eval_types` entry of a request: the type's guid and optional variables. */
export const EvalTypeSelection = z.object({
  guid: Guid,
  metadata: EvalTypeMetadata.nullable().optional(),
});
export type EvalTypeSelection = z.infer<typeof EvalTypeSelection>;

/** LIVE: scores live traffic; DATASET: scores the items of a Dataset. */
export const EvalDataType = z.enum(["LIVE", "DATASET"]);
export type EvalDataType = z.infer<typeof EvalDataType>;

export const Eval = z.object({
  guid: Guid,
  name: z.string(),
  /** The Action GUID. */
  action: Guid,
  /** The Action version GUID as submitted (the emulator has no versions). */
  version: Guid.nullable(),
  eval_types: z.array(z.object({ guid: Guid, name: z.string(), metadata: EvalTypeMetadata.nullable() })),
  dataset: z.object({ guid: Guid, name: z.string() }).nullable(),
  sampling_rate: z.number().nullable(),
  alert_on_fail: z.boolean(),
  data_type: EvalDataType,
  ...UnnamedAuditFields,
});
export type Eval = z.infer<typeof Eval>;

export const EvalCreate = z.object({
  name: z.string().min(1),
  action: Guid,
  eval_types: z.array(EvalTypeSelection),
  dataset: Guid.nullable().optional(),
  version: Guid.nullable().optional(),
  sampling_rate: z.number().min(0).max(1).nullable().optional(),
  alert_on_fail: z.boolean().optional(),
});
export type EvalCreate = z.infer<typeof EvalCreate>;

/** PUT replaces the `eval_types` list; the spec does not show the type of `new_record`, so any value passes. */
export const EvalUpdate = z.object({
  eval_types: z.array(EvalTypeSelection.extend({ new_record: z.unknown().optional() })),
});
export type EvalUpdate = z.infer<typeof EvalUpdate>;

/** GET /evals query: paging plus an optional `dataType` filter (another value is 400, invalid enum). */
export const EvalListQuery = PageQuery.extend({ dataType: EvalDataType.optional() });
export type EvalListQuery = z.infer<typeof EvalListQuery>;

/**
 * An Eval run. No route starts a run, so the emulator never returns one; the spec names only the
 * progress fields `metadata.status` and `run_items_completed`, the rest passes through.
 */
export const EvalRun = z.looseObject({
  metadata: z.looseObject({ status: z.string().optional() }).nullable().optional(),
  run_items_completed: z.number().int().optional(),
});
export type EvalRun = z.infer<typeof EvalRun>;

/** An Eval type as an Eval uses it: its GUID and, when it has any, its variables. */
export interface EvalTypeChoice {
  guid: string;
  variables?: EvalVariable[];
}

/** An Eval as the code uses it. */
export type EvalRecord = {
  guid: string;
  name: string;
  action: string;
  evalTypes: EvalTypeChoice[];
  /** The Dataset's GUID, or null for live traffic. */
  dataset: string | null;
  version: string | null;
  samplingRate: number | null;
  alertOnFail: boolean;
  dataType: EvalDataType;
  createdAt: string | undefined;
  updatedAt: string | undefined;
};

export const toEvalRecord = (evaluation: Eval): EvalRecord => ({
  guid: evaluation.guid,
  name: evaluation.name,
  action: evaluation.action,
  evalTypes: evaluation.eval_types.map((type) =>
    type.metadata?.variables ? { guid: type.guid, variables: type.metadata.variables } : { guid: type.guid },
  ),
  dataset: evaluation.dataset?.guid ?? null,
  version: evaluation.version,
  samplingRate: evaluation.sampling_rate,
  alertOnFail: evaluation.alert_on_fail,
  dataType: evaluation.data_type,
  createdAt: evaluation.created_at,
  updatedAt: evaluation.updated_at,
});

const toSelections = (types: EvalTypeChoice[]): EvalTypeSelection[] =>
  types.map((type) => (type.variables === undefined ? { guid: type.guid } : { guid: type.guid, metadata: { variables: type.variables } }));

export interface EvalFields {
  name: string;
  action: string;
  evalTypes: EvalTypeChoice[];
  dataset: string | null | undefined;
  version: string | null | undefined;
  samplingRate: number | null | undefined;
  alertOnFail: boolean | undefined;
}

export const evalsApi = {
  async list(client: GmsClient): Promise<EvalRecord[]> {
    return (await collect(paginateEnvelope(client, { path: path`/evals`, item: Eval }))).map(toEvalRecord);
  },
  async create(client: GmsClient, fields: EvalFields, findCreated: FindCreated): Promise<EvalRecord> {
    const body: EvalCreate = {
      name: fields.name,
      action: fields.action,
      eval_types: toSelections(fields.evalTypes),
      dataset: fields.dataset,
      version: fields.version,
      sampling_rate: fields.samplingRate,
      alert_on_fail: fields.alertOnFail,
    };
    return toEvalRecord(await client.create({ path: path`/evals`, body, schema: Eval, findCreated, identity: [body.name, body.action] }));
  },
  async get(client: GmsClient, guid: string): Promise<EvalRecord> {
    return toEvalRecord(await client.request({ method: "GET", path: path`/evals/${guid}`, schema: Eval }));
  },
  /** PUT replaces the whole Eval type list, the only field it takes; its response is not specified, so callers read back. */
  async update(client: GmsClient, guid: string, evalTypes: EvalTypeChoice[]): Promise<void> {
    await client.request({ method: "PUT", path: path`/evals/${guid}`, body: { eval_types: toSelections(evalTypes) }, schema: z.unknown() });
  },
  async delete(client: GmsClient, guid: string): Promise<void> {
    await client.request({ method: "DELETE", path: path`/evals/${guid}`, schema: z.unknown() });
  },
  /** The Eval types (global: every workspace sees the same), a bare array. */
  types(client: GmsClient): Promise<EvalType[]> {
    return client.request({ method: "GET", path: path`/evals/types`, schema: z.array(EvalType) });
  },
};
