import { z } from "zod";
import { type EvalCreate, EvalDataType, type EvalTypeMetadata, type EvalTypeSelection } from "../../api/evals";
import { RecordTable, type StoredRecord, flag, integer, json, nullable, oneOf, real, table, text } from "./columns";
import { storeModule } from "./module";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Caller, type Page, type Paged, RECORD_COLUMNS, createdBy, newGuid, updatedBy } from "./records";
import type { ActionStore } from "./actions";
import type { DatasetStore } from "./datasets";
import type { WorkspaceStore } from "./workspaces";

/** The types of an Eval as stored: each type's GUID and the variables the Eval sets (kept as the request gave them). */
const StoredTypes = z.array(
  z.object({
    guid: z.string(),
    metadata: z.custom<EvalTypeMetadata>((value) => typeof value === "object" && !Array.isArray(value)).nullable(),
  }),
);

/** Eval types belong to no workspace, so their table has no workspace_id (the one exception). */
export const EVAL_TYPES = table("eval_types", { id: integer, guid: text, name: text, description: nullable(text), created_at: text });

export const EVALS = table("evals", {
  id: integer,
  guid: text,
  workspace_id: integer,
  name: text,
  action_id: integer,
  action_guid: text,
  version: nullable(text),
  eval_types: json((value) => StoredTypes.safeParse(value)),
  dataset_guid: nullable(text),
  dataset_name: nullable(text),
  sampling_rate: nullable(real),
  alert_on_fail: flag,
  data_type: oneOf(EvalDataType.options),
  ...RECORD_COLUMNS,
});

const TYPES = new RecordTable(EVAL_TYPES);
const RECORDS = new RecordTable(EVALS);

/** An Eval type. Types are global: every workspace sees the same list, loaded from fixtures. */
export type StoredEvalType = StoredRecord<typeof TYPES>;

/**
 * An Eval in the wire's names: its Action as `action`, each of its types with the type's name, and the Dataset
 * it scores (its name as it was at create) or null.
 */
export type StoredEval = ReturnType<typeof named>;

export class EvalStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly actions: ActionStore; readonly datasets: DatasetStore; readonly workspaces: WorkspaceStore },
  ) {}

  /** Adds an Eval type unless one of that name exists (fixtures call it at every start). */
  ensureType(input: { name: string; guid?: string | undefined; description?: string | undefined }): StoredEvalType {
    const existing = TYPES.find(this.db, { name: input.name });
    if (existing) return existing;
    const id = TYPES.insert(this.db, { ...input, guid: input.guid ?? newGuid(), createdAt: this.db.clock.iso() });
    return TYPES.find(this.db, { id })!;
  }

  listTypes(): StoredEvalType[] {
    return TYPES.list(this.db, {});
  }

  /** The workspace's non-deleted Evals, oldest first, optionally only those of one data type. */
  list(caller: Caller, page: Page, dataType?: EvalDataType): Paged<StoredEval> {
    const { items, total } = RECORDS.page(this.db, { workspaceId: caller.workspaceId, deletedAt: null, dataType }, page);
    return { items: items.map((evaluation) => named(this.listTypes(), evaluation)), total };
  }

  /**
   * Creates an Eval of an Action of the workspace (404 `Action not found`), scoring with existing types
   * (404 `Eval type not found`), over live traffic or over a Dataset (404 `Dataset not found`).
   * Spec: not shown; the emulator stores `version` as given (it has no Action versions) and keeps the
   * Dataset summary as it was at creation.
   */
  create(caller: Caller, input: EvalCreate): StoredEval {
    return this.db.transaction(() => {
      const action = this.store.actions.get(caller, input.action);
      const evalTypes = this.resolveTypes(input.evalTypes);
      const dataset = input.dataset ? this.store.datasets.get(caller, input.dataset) : null;
      this.store.workspaces.reserve(caller, "evals");
      const stamp = this.db.clock.iso();
      const id = RECORDS.insert(this.db, {
        ...createdBy(caller, stamp),
        guid: newGuid(),
        name: input.name,
        actionId: action.id,
        actionGuid: action.guid,
        version: input.version,
        evalTypes,
        datasetGuid: dataset?.guid,
        datasetName: dataset?.name,
        samplingRate: input.samplingRate,
        alertOnFail: input.alertOnFail ?? false,
        dataType: dataset ? "DATASET" : "LIVE",
      });
      return named(this.listTypes(), RECORDS.find(this.db, { id })!);
    });
  }

  /** A non-deleted Eval of the caller's workspace; anything else is 404 `Eval not found`. */
  get(caller: Caller, guid: string): StoredEval {
    const evaluation = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
    if (!evaluation) throw new RecordNotFoundError("Eval not found");
    return named(this.listTypes(), evaluation);
  }

  /** Replaces the Eval's type list (the only thing PUT changes). */
  update(caller: Caller, guid: string, input: { evalTypes: EvalTypeSelection[] }): StoredEval {
    const evaluation = this.get(caller, guid);
    RECORDS.update(this.db, evaluation.id, { evalTypes: this.resolveTypes(input.evalTypes), ...updatedBy(caller, this.db.clock.iso()) });
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): StoredEval {
    const evaluation = this.get(caller, guid);
    RECORDS.update(this.db, evaluation.id, { deletedAt: this.db.clock.iso() });
    return evaluation;
  }

  /** Every selected type must exist; what is stored is the GUID and the variables. */
  private resolveTypes(selections: EvalTypeSelection[]): z.output<typeof StoredTypes> {
    return selections.map((selection) => {
      if (!TYPES.find(this.db, { guid: selection.guid })) throw new RecordNotFoundError("Eval type not found");
      return { guid: selection.guid, metadata: selection.metadata ?? null };
    });
  }
}

/** The stored Eval with what is not its columns: each type's name (from the `types` there are) and the Dataset summary. */
function named(types: StoredEvalType[], evaluation: StoredRecord<typeof RECORDS>) {
  const names = new Map(types.map((type) => [type.guid, type.name]));
  return {
    ...evaluation,
    action: evaluation.actionGuid,
    evalTypes: evaluation.evalTypes.map((entry) => ({ ...entry, name: names.get(entry.guid)! })),
    // A Dataset Eval keeps the Dataset's name as it was at create.
    dataset: evaluation.datasetGuid ? { guid: evaluation.datasetGuid, name: evaluation.datasetName ?? "" } : null,
  };
}

/** Opened by the Store as `store.evals` (./module.ts). */
export const evalStore = storeModule(EvalStore, [EVAL_TYPES, EVALS]);
