import { z } from "zod";
import { type RawRow, flag, integer, json, nullable, oneOf, real, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, newGuid, toFlag, toJson } from "./records";
import type { ActionStore } from "./actions";
import type { DatasetStore } from "./datasets";
import type { WorkspaceStore } from "./workspaces";

/** An Eval type. Types are global: every workspace sees the same list, loaded from fixtures. */
export interface EvalTypeRecord {
  id: number;
  guid: string;
  name: string;
  description: string | null;
}

export type EvalDataType = "LIVE" | "DATASET";

export interface EvalVariables {
  variables?: { name: string; value: string | number | boolean | Record<string, unknown> }[] | undefined;
}

/** One scoring type of an Eval, with the variables the Eval sets for it. */
export interface EvalTypeEntry {
  guid: string;
  name: string;
  metadata: EvalVariables | null;
}

export interface EvalRecord extends Audited {
  id: number;
  guid: string;
  name: string;
  actionGuid: string;
  version: string | null;
  evalTypes: EvalTypeEntry[];
  dataset: { guid: string; name: string } | null;
  samplingRate: number | null;
  alertOnFail: boolean;
  dataType: EvalDataType;
}

/** The types of an Eval as stored: each type's GUID and the variables the Eval sets (kept as the request gave them). */
const StoredTypes = z.array(
  z.object({
    guid: z.string(),
    metadata: z.custom<EvalVariables>((value) => typeof value === "object" && !Array.isArray(value)).nullable(),
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
  data_type: oneOf(["LIVE", "DATASET"]),
  ...RECORD_COLUMNS,
});

/** What a request selects: a type by GUID and optional variables. */
export interface EvalTypeSelection {
  guid: string;
  metadata?: EvalVariables | null | undefined;
}

export interface EvalCreateInput {
  name: string;
  actionGuid: string;
  evalTypes: EvalTypeSelection[];
  datasetGuid?: string | null | undefined;
  version?: string | null | undefined;
  samplingRate?: number | null | undefined;
  alertOnFail?: boolean | undefined;
}

export class EvalStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly actions: ActionStore; readonly datasets: DatasetStore; readonly workspaces: WorkspaceStore },
  ) {}

  /** Adds an Eval type unless one of that name exists (fixtures call it at every start). */
  ensureType(input: { name: string; guid?: string | undefined; description?: string | undefined }): EvalTypeRecord {
    this.db.run(
      "INSERT INTO eval_types (guid, name, description, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
      input.guid ?? newGuid(),
      input.name,
      input.description ?? null,
      this.db.clock.iso(),
    );
    return toType(this.db.get("SELECT * FROM eval_types WHERE name = ?", input.name)!);
  }

  listTypes(): EvalTypeRecord[] {
    return this.db.all("SELECT * FROM eval_types ORDER BY id").map(toType);
  }

  /** The workspace's non-deleted Evals, oldest first, optionally only those of one data type. */
  list(caller: Caller, page: Page, dataType?: EvalDataType): Paged<EvalRecord> {
    const from = `FROM evals WHERE workspace_id = ? AND deleted_at IS NULL${dataType ? " AND data_type = ?" : ""}`;
    const args = dataType ? [caller.workspaceId, dataType] : [caller.workspaceId];
    const { rows, total } = this.db.paged(from, args, page, { order: "id" });
    return { items: rows.map((row) => this.toRecord(row)), total };
  }

  /**
   * Creates an Eval of an Action of the workspace (404 `Action not found`), scoring with existing types
   * (404 `Eval type not found`), over live traffic or over a Dataset (404 `Dataset not found`).
   * Spec: not shown; the emulator stores `version` as given (it has no Action versions) and keeps the
   * Dataset summary as it was at creation.
   */
  create(caller: Caller, input: EvalCreateInput): EvalRecord {
    return this.db.transaction(() => {
      const action = this.store.actions.get(caller, input.actionGuid);
      const evalTypes = this.resolveTypes(input.evalTypes);
      const dataset = input.datasetGuid ? this.store.datasets.get(caller, input.datasetGuid) : null;
      this.store.workspaces.reserve(caller, "evals");
      const stamp = this.db.clock.iso();
      const id = this.db.run(
        `INSERT INTO evals (guid, workspace_id, name, action_id, action_guid, version, eval_types, dataset_guid, dataset_name,
                            sampling_rate, alert_on_fail, data_type, created_at, updated_at, created_by_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        newGuid(),
        caller.workspaceId,
        input.name,
        action.id,
        action.guid,
        input.version ?? null,
        toJson(evalTypes),
        dataset?.guid ?? null,
        dataset?.name ?? null,
        input.samplingRate ?? null,
        toFlag(input.alertOnFail),
        dataset ? "DATASET" : "LIVE",
        stamp,
        stamp,
        caller.userId,
      );
      return this.toRecord(this.db.get("SELECT * FROM evals WHERE id = ?", id)!);
    });
  }

  /** A non-deleted Eval of the caller's workspace; anything else is 404 `Eval not found`. */
  get(caller: Caller, guid: string): EvalRecord {
    const row = this.db.get("SELECT * FROM evals WHERE guid = ? AND workspace_id = ? AND deleted_at IS NULL", guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Eval not found");
    return this.toRecord(row);
  }

  /** Replaces the Eval's type list (the only thing PUT changes). */
  update(caller: Caller, guid: string, input: { evalTypes: EvalTypeSelection[] }): EvalRecord {
    const evaluation = this.get(caller, guid);
    const evalTypes = this.resolveTypes(input.evalTypes);
    this.db.run(
      "UPDATE evals SET eval_types = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      toJson(evalTypes),
      this.db.clock.iso(),
      caller.userId,
      evaluation.id,
    );
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): EvalRecord {
    const evaluation = this.get(caller, guid);
    this.db.run("UPDATE evals SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), evaluation.id);
    return evaluation;
  }

  /** Every selected type must exist; what is stored is the GUID and the variables. */
  private resolveTypes(selections: EvalTypeSelection[]): StoredTypeEntry[] {
    return selections.map((selection) => {
      if (!this.db.get("SELECT 1 FROM eval_types WHERE guid = ?", selection.guid)) throw new RecordNotFoundError("Eval type not found");
      return { guid: selection.guid, metadata: selection.metadata ?? null };
    });
  }

  private toRecord(raw: RawRow): EvalRecord {
    const row = EVALS.decode(raw);
    const names = new Map(this.listTypes().map((type) => [type.guid, type.name]));
    return {
      id: row.id,
      guid: row.guid,
      name: row.name,
      actionGuid: row.action_guid,
      version: row.version,
      evalTypes: row.eval_types.map((entry) => ({ ...entry, name: names.get(entry.guid)! })),
      // A Dataset Eval keeps the Dataset's name as it was at create.
      dataset: row.dataset_guid ? { guid: row.dataset_guid, name: row.dataset_name ?? "" } : null,
      samplingRate: row.sampling_rate,
      alertOnFail: row.alert_on_fail,
      dataType: row.data_type,
      ...audited(row),
    };
  }
}

type StoredTypeEntry = Omit<EvalTypeEntry, "name">;

function toType(raw: RawRow): EvalTypeRecord {
  const row = EVAL_TYPES.decode(raw);
  return { id: row.id, guid: row.guid, name: row.name, description: row.description };
}
