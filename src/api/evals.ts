/** The Eval endpoints: Evals, the global Eval types and an Eval's runs. */
import { z } from "zod";
import type { GmsClient } from "../client";
import { DeleteMessage, Guid, JsonObject, PageQuery, UnnamedAuditFields } from "./common";
import { call, endpoint } from "./endpoint";
import { wire } from "./wire";

const EvalTypeFields = z.object({
  guid: Guid,
  name: z.string(),
  description: z.string().nullable(),
});
/** An Eval type. Eval types are global: every workspace sees the same ones. */
export type EvalType = z.output<typeof EvalTypeFields>;

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

/** Spec: an Eval configuration's fields beyond the create fields and a Dataset summary are not shown; these are the emulator's. */
export const Eval = wire(
  z.object({
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
  }),
);

/** An Eval as the entries answer it (the code holds two of its fields in another form: `EvalRecord`). */
export type EvalAnswer = z.output<typeof Eval>;

export const EvalCreate = wire(
  z.object({
    name: z.string().min(1),
    action: Guid,
    eval_types: z.array(EvalTypeSelection),
    dataset: Guid.nullable().optional(),
    version: Guid.nullable().optional(),
    sampling_rate: z.number().min(0).max(1).nullable().optional(),
    alert_on_fail: z.boolean().optional(),
  }),
);
export type EvalCreate = z.output<typeof EvalCreate>;

/** PUT replaces the `eval_types` list; the spec does not show the type of `new_record`, so any value passes. */
export const EvalUpdate = wire(
  z.object({
    eval_types: z.array(EvalTypeSelection.extend({ new_record: z.unknown().optional() })),
  }),
);
export type EvalUpdate = z.output<typeof EvalUpdate>;

/** GET /evals query: paging plus an optional `dataType` filter (another value is 400, invalid enum). */
export const EvalListQuery = PageQuery.extend({ dataType: EvalDataType.optional() });
export type EvalListQuery = z.infer<typeof EvalListQuery>;

/**
 * An Eval run. No route starts a run, so the emulator never returns one; the spec names only the
 * progress fields `metadata.status` and `run_items_completed`.
 */
export const EvalRun = wire(
  z.object({
    metadata: z.object({ status: z.string().optional() }).nullable().optional(),
    run_items_completed: z.number().int().optional(),
  }),
);
export type EvalRun = z.output<typeof EvalRun>;

/** An Eval type as an Eval uses it: its GUID and, when it has any, its variables. */
export interface EvalTypeChoice {
  guid: string;
  variables?: EvalVariable[];
}

/** An Eval as the code uses it: its Eval types as choices, its Dataset as a GUID (null for live traffic). */
export type EvalRecord = Omit<EvalAnswer, "evalTypes" | "dataset"> & { evalTypes: EvalTypeChoice[]; dataset: string | null };

/** An Eval as the code uses it from the record: the two fields the code holds in another form than the wire's. */
export const toEvalRecord = (evaluation: EvalAnswer): EvalRecord => ({
  ...evaluation,
  evalTypes: evaluation.evalTypes.map(({ guid, metadata }) => (metadata?.variables ? { guid, variables: metadata.variables } : { guid })),
  dataset: evaluation.dataset?.guid ?? null,
});

/** Eval type choices as a create or update sends them. */
export const toSelections = (types: EvalTypeChoice[]): EvalTypeSelection[] =>
  types.map((type) => (type.variables === undefined ? { guid: type.guid } : { guid: type.guid, metadata: { variables: type.variables } }));

export const evalEndpoints = {
  /** Spec: the list shape is not shown; the emulator answers the standard envelope, filtered by `dataType`. */
  list: endpoint({ method: "GET", path: "/evals", response: Eval, list: "envelope", query: EvalListQuery }),
  /** The Eval types: a bare array, no paging. */
  types: endpoint({ method: "GET", path: "/evals/types", response: wire(z.array(EvalTypeFields)) }),
  create: endpoint({ method: "POST", path: "/evals", body: EvalCreate, response: Eval }),
  get: endpoint({ method: "GET", path: "/evals/{guid}", response: Eval }),
  /** Spec: the response is not shown; the emulator answers the Eval (the client relies on nothing in it: it reads the Eval back). */
  update: endpoint({ method: "PUT", path: "/evals/{guid}", body: EvalUpdate, response: Eval, shown: false }),
  /** Spec: not shown; the emulator answers the delete message the spec shows for Providers. */
  delete: endpoint({ method: "DELETE", path: "/evals/{guid}", response: DeleteMessage, shown: false }),
  /** Spec: "Eval runs with progress metadata", no paging shown; the emulator answers a bare array. */
  runs: endpoint({ method: "GET", path: "/evals/{guid}/runs", response: EvalRun, list: "bare" }),
};

export const evalsApi = {
  /** The Eval types (global: every workspace sees the same). */
  types: (client: GmsClient): Promise<EvalType[]> => call(client, evalEndpoints.types),
};
