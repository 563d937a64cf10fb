import { type FineTuneStatus, MIN_FINE_TUNE_RECORDS } from "../../api/fine-tunes";
import { z } from "zod";
import type { AppStore } from "./apps";
import { type RawRow, integer, json, nullable, oneOf, table, text } from "./columns";
import type { DataStore } from "./data";
import type { Database } from "./database";
import type { DatasetStore } from "./datasets";
import { BadRequestError, RecordNotFoundError } from "./errors";
import type { ProviderStore } from "./providers";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, newGuid, toJson } from "./records";

/** Seconds a fine-tune stays `processing` unless the emulator is told otherwise. */
export const DEFAULT_FINE_TUNE_SECONDS = 3;

export interface FineTuneOptions {
  /** Seconds from create until a job leaves `processing` (0: at the first read after create). */
  seconds?: number | undefined;
}

export interface FineTuneRecord extends Audited {
  id: number;
  guid: string;
  name: string;
  appGuid: string;
  /** The Dataset named on create, or null. */
  datasetGuid: string | null;
  /** The dedicated Dataset create built from the resolved Data records. */
  trainingDatasetGuid: string;
  dataIds: number[];
  baseModel: string;
  /** The Provider connection the job runs on. */
  providerGuid: string;
  status: FineTuneStatus;
  vendorFinetuneName: string;
  failureReason: string | null;
}

export interface FineTuneCreateInput {
  name: string;
  appGuid: string;
  datasetGuid?: string | null | undefined;
  dataIds: number[];
  baseModel: string;
  /** The numeric id of a Provider connection. */
  connectionId: number;
}

const DataIds = z.array(z.number().int());

export const FINETUNES = table("finetunes", {
  id: integer,
  guid: text,
  workspace_id: integer,
  app_id: integer,
  dataset_id: nullable(integer),
  training_dataset_id: integer,
  provider_id: integer,
  name: text,
  data_ids: json((value) => DataIds.safeParse(value)),
  base_model: text,
  /** How the job ends, decided at create. */
  outcome: oneOf(["succeeded", "failed"]),
  failure_reason: nullable(text),
  finishes_at: text,
  ...RECORD_COLUMNS,
});

/**
 * Fine-tunes. A job is `processing` for a fixed time after create, then ends in the outcome decided at
 * create: `failed` when the base model's name contains "fail" (any case), else `succeeded`. The status is
 * read off the clock, so it is the same for every reader and survives restarts.
 */
export class FineTuneStore {
  private readonly durationMs: number;

  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: {
      readonly apps: AppStore;
      readonly data: DataStore;
      readonly datasets: DatasetStore;
      readonly providers: ProviderStore;
    },
    options: FineTuneOptions = {},
  ) {
    this.durationMs = (options.seconds ?? DEFAULT_FINE_TUNE_SECONDS) * 1000;
  }

  /** Non-deleted fine-tunes of the workspace, oldest first. */
  list(caller: Caller, page: Page): Paged<FineTuneRecord> {
    const { rows, total } = this.db.paged(`${FROM} WHERE f.workspace_id = ? AND f.deleted_at IS NULL`, [caller.workspaceId], page, {
      select: COLUMNS,
      order: "f.id",
    });
    const at = this.db.clock.now();
    return { items: rows.map((row) => toRecord(row, at)), total };
  }

  /** The App's fine-tunes, oldest first (404 `App not found` when it is missing or deleted). */
  listByApp(caller: Caller, appGuid: string, page: Page): FineTuneRecord[] {
    const app = this.store.apps.get(caller, appGuid);
    const at = this.db.clock.now();
    return this.db
      .all(`${SELECT} WHERE f.app_id = ? AND f.deleted_at IS NULL ORDER BY f.id LIMIT ? OFFSET ?`, app.id, page.limit, page.skip)
      .map((row) => toRecord(row, at));
  }

  /**
   * Starts a job: 404 for a missing App, Dataset or Provider connection, 400 when fewer than 10 of
   * `dataIds` are live Data records of the workspace. Builds the training Dataset (under the App, one Item
   * per resolved record, in the order given; it takes a place of the Dataset allowance) and answers the
   * job as `processing`.
   */
  create(caller: Caller, input: FineTuneCreateInput): FineTuneRecord {
    return this.db.transaction(() => {
      const app = this.store.apps.get(caller, input.appGuid);
      const dataset = input.datasetGuid ? this.store.datasets.get(caller, input.datasetGuid) : undefined;
      const connection = this.store.providers.getById(caller, input.connectionId);
      const records = [...new Set(input.dataIds)].flatMap((id) => this.store.data.findById(caller, id) ?? []);
      if (records.length < MIN_FINE_TUNE_RECORDS) {
        throw new BadRequestError(
          `A fine-tune needs at least ${MIN_FINE_TUNE_RECORDS} Data records; ${records.length} of data_ids resolved to one`,
        );
      }
      const guid = newGuid();
      const training = this.store.datasets.create(caller, {
        name: `${input.name} (fine-tune training data)`,
        description: `Built for fine-tune ${guid}`,
        appGuid: app.guid,
        dataGuids: records.map((record) => record.guid),
      });
      const failureReason = /fail/i.test(input.baseModel)
        ? `The vendor rejected the job: base model '${input.baseModel}' cannot be fine-tuned`
        : null;
      const stamp = this.db.clock.iso();
      const id = this.db.run(
        `INSERT INTO finetunes (guid, workspace_id, app_id, dataset_id, training_dataset_id, provider_id, name, data_ids, base_model,
           outcome, failure_reason, finishes_at, created_at, updated_at, created_by_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        guid,
        caller.workspaceId,
        app.id,
        dataset?.id ?? null,
        training.id,
        connection.id,
        input.name,
        toJson(records.map((record) => record.id)),
        input.baseModel,
        failureReason ? "failed" : "succeeded",
        failureReason,
        new Date(Date.parse(stamp) + this.durationMs).toISOString(),
        stamp,
        stamp,
        caller.userId,
      );
      return toRecord(this.db.get(`${SELECT} WHERE f.id = ?`, id)!, Date.parse(stamp));
    });
  }

  /** A non-deleted fine-tune of the caller's workspace; anything else is 404 `Fine-tune not found`. */
  get(caller: Caller, guid: string): FineTuneRecord {
    const row = this.db.get(`${SELECT} WHERE f.guid = ? AND f.workspace_id = ? AND f.deleted_at IS NULL`, guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Fine-tune not found");
    return toRecord(row, this.db.clock.now());
  }

  /** Changes the name only; the job and its training Dataset stay as they are. */
  rename(caller: Caller, guid: string, name: string): FineTuneRecord {
    const fineTune = this.get(caller, guid);
    this.db.run(
      "UPDATE finetunes SET name = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      name,
      this.db.clock.iso(),
      caller.userId,
      fineTune.id,
    );
    return this.get(caller, guid);
  }

  /** Soft delete; the training Dataset stays (it is a Dataset like any other). */
  softDelete(caller: Caller, guid: string): FineTuneRecord {
    const fineTune = this.get(caller, guid);
    this.db.run("UPDATE finetunes SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), fineTune.id);
    return fineTune;
  }
}

const COLUMNS = "f.*, a.guid AS app_guid, d.guid AS dataset_guid, t.guid AS training_dataset_guid, p.guid AS provider_guid";
const FROM = `FROM finetunes f JOIN apps a ON a.id = f.app_id LEFT JOIN datasets d ON d.id = f.dataset_id
              JOIN datasets t ON t.id = f.training_dataset_id JOIN providers p ON p.id = f.provider_id`;
const SELECT = `SELECT ${COLUMNS} ${FROM}`;

/** The record as of `at` (ms since the epoch): `processing` until strictly after `finishes_at`, then the outcome. */
const ROW = FINETUNES.extend({ app_guid: text, dataset_guid: nullable(text), training_dataset_guid: text, provider_guid: text });

function toRecord(raw: RawRow, at: number): FineTuneRecord {
  const row = ROW.decode(raw);
  const finished = at > Date.parse(row.finishes_at);
  return {
    id: row.id,
    guid: row.guid,
    name: row.name,
    appGuid: row.app_guid,
    datasetGuid: row.dataset_guid,
    trainingDatasetGuid: row.training_dataset_guid,
    dataIds: row.data_ids,
    baseModel: row.base_model,
    providerGuid: row.provider_guid,
    status: finished ? row.outcome : "processing",
    vendorFinetuneName: `ftjob-${row.guid.replaceAll("-", "")}`,
    failureReason: finished ? row.failure_reason : null,
    ...audited(row),
  };
}
