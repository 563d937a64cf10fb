import { type FineTuneCreate, type FineTuneStatus, MIN_FINE_TUNE_RECORDS } from "../../api/fine-tunes";
import { z } from "zod";
import type { AppStore } from "./apps";
import { RecordTable, type StoredRecord, integer, json, nullable, oneOf, table, text } from "./columns";
import { storeModule } from "./module";
import type { DataStore } from "./data";
import type { Database } from "./database";
import type { DatasetStore } from "./datasets";
import { BadRequestError, RecordNotFoundError } from "./errors";
import type { ProviderStore } from "./providers";
import { type Caller, type Page, type Paged, RECORD_COLUMNS, createdBy, newGuid, updatedBy } from "./records";

/** Seconds a fine-tune stays `processing` unless the emulator is told otherwise. */
export const DEFAULT_FINE_TUNE_SECONDS = 3;

export interface FineTuneOptions {
  /** Seconds from create until a job leaves `processing` (0: at the first read after create). */
  seconds?: number | undefined;
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

const RECORDS = new RecordTable(FINETUNES, {
  joins: `JOIN apps a ON a.id = finetunes.app_id LEFT JOIN datasets d ON d.id = finetunes.dataset_id
    JOIN datasets t ON t.id = finetunes.training_dataset_id JOIN providers p ON p.id = finetunes.provider_id`,
  derived: {
    app: ["a.guid", text],
    dataset: ["d.guid", nullable(text)],
    training_dataset: ["t.guid", text],
    provider_connection_guid: ["p.guid", text],
  },
});

/**
 * A fine-tune as of a moment, its linked records by GUID under the wire's names: the App, the Dataset named on
 * create (or null), the training Dataset create built, and the Provider connection the job runs on.
 */
export type StoredFineTune = ReturnType<typeof asOf>;

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
    /** The Store's options: `fineTunes` tunes this store. */
    options: { readonly fineTunes?: FineTuneOptions | undefined } = {},
  ) {
    this.durationMs = (options.fineTunes?.seconds ?? DEFAULT_FINE_TUNE_SECONDS) * 1000;
  }

  /** Non-deleted fine-tunes of the workspace, oldest first. */
  list(caller: Caller, page: Page): Paged<StoredFineTune> {
    const { items, total } = RECORDS.page(this.db, { workspaceId: caller.workspaceId, deletedAt: null }, page);
    const at = this.db.clock.now();
    return { items: items.map((fineTune) => asOf(fineTune, at)), total };
  }

  /** The App's fine-tunes, oldest first (404 `App not found` when it is missing or deleted). */
  listByApp(caller: Caller, appGuid: string, page: Page): StoredFineTune[] {
    const app = this.store.apps.get(caller, appGuid);
    const at = this.db.clock.now();
    return RECORDS.page(this.db, { appId: app.id, deletedAt: null }, page).items.map((fineTune) => asOf(fineTune, at));
  }

  /**
   * Starts a job: 404 for a missing App, Dataset or Provider connection, 400 when fewer than 10 of
   * `dataIds` are live Data records of the workspace. Builds the training Dataset (under the App, one Item
   * per resolved record, in the order given; it takes a place of the Dataset allowance) and answers the
   * job as `processing`.
   */
  create(caller: Caller, input: FineTuneCreate): StoredFineTune {
    return this.db.transaction(() => {
      const app = this.store.apps.get(caller, input.app);
      const dataset = input.dataset ? this.store.datasets.get(caller, input.dataset) : undefined;
      const connection = this.store.providers.getById(caller, input.providerConnection);
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
        app: app.guid,
        data: records.map((record) => record.guid),
      });
      const failureReason = /fail/i.test(input.baseModel)
        ? `The vendor rejected the job: base model '${input.baseModel}' cannot be fine-tuned`
        : null;
      const stamp = this.db.clock.iso();
      const id = RECORDS.insert(this.db, {
        ...createdBy(caller, stamp),
        guid,
        appId: app.id,
        datasetId: dataset?.id,
        trainingDatasetId: training.id,
        providerId: connection.id,
        name: input.name,
        dataIds: records.map((record) => record.id),
        baseModel: input.baseModel,
        outcome: failureReason ? "failed" : "succeeded",
        failureReason,
        finishesAt: new Date(Date.parse(stamp) + this.durationMs).toISOString(),
      });
      return asOf(RECORDS.find(this.db, { id })!, Date.parse(stamp));
    });
  }

  /** A non-deleted fine-tune of the caller's workspace; anything else is 404 `Fine-tune not found`. */
  get(caller: Caller, guid: string): StoredFineTune {
    const fineTune = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
    if (!fineTune) throw new RecordNotFoundError("Fine-tune not found");
    return asOf(fineTune, this.db.clock.now());
  }

  /** Changes the name only; the job and its training Dataset stay as they are. */
  rename(caller: Caller, guid: string, name: string): StoredFineTune {
    const fineTune = this.get(caller, guid);
    RECORDS.update(this.db, fineTune.id, { name, ...updatedBy(caller, this.db.clock.iso()) });
    return this.get(caller, guid);
  }

  /** Soft delete; the training Dataset stays (it is a Dataset like any other). */
  softDelete(caller: Caller, guid: string): StoredFineTune {
    const fineTune = this.get(caller, guid);
    RECORDS.update(this.db, fineTune.id, { deletedAt: this.db.clock.iso() });
    return fineTune;
  }
}

/** The record as of `at` (ms since the epoch): `processing` until strictly after `finishes_at`, then the outcome. */
function asOf(fineTune: StoredRecord<typeof RECORDS>, at: number) {
  const finished = at > Date.parse(fineTune.finishesAt);
  const status: FineTuneStatus = finished ? fineTune.outcome : "processing";
  return {
    ...fineTune,
    status,
    vendorFinetuneName: `ftjob-${fineTune.guid.replaceAll("-", "")}`,
    failureReason: finished ? fineTune.failureReason : null,
  };
}

/** Opened by the Store as `store.fineTunes` (./module.ts). */
export const fineTuneStore = storeModule(FineTuneStore, [FINETUNES]);
