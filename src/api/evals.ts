import { z } from "zod";
import { UnnamedAuditFields, Guid, JsonObject, PageQuery } from "./common";

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
