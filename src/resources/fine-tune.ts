/**
 * FineTune: a model trained at an external model provider from Data records of an App. Create starts
 * the provider job (the service answers once the provider accepted it, status `processing`) and waits
 * until the job leaves `processing`, logging its progress; a job the provider fails, or one still
 * running at the deadline, fails the step while state records the fine-tune (it exists), so the next
 * `up` replaces it and `destroy` deletes it. A fine-tune whose recorded status is `failed` (a refresh reads
 * it whole) is replaced by the next `up` too. Only the name changes in place; everything else replaces.
 * The wait reads and sleeps on a clock (`makeFineTuneKind(clock)`; `fineTuneKind` has the system clock), so a
 * test can run it on a fake one.
 *
 * Its operations are derived from its endpoint entries (src/api/fine-tunes.ts; the codecs name the connection
 * `providerConnection` and `providerConnectionGuid`). Its quirks: a lost create is looked up among its App's
 * fine-tunes by name, dataset and base model; a refused create says what to check; create is more than its POST
 * (skipped Data IDs undo it, then the wait), and read keeps the Data IDs sorted, as check leaves them.
 */
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { Guid } from "../api/common";
import { call } from "../api/endpoint";
import { FineTuneStatus, MIN_FINE_TUNE_RECORDS, type FineTuneRecord, fineTuneEndpoints } from "../api/fine-tunes";
import { describeTimeout, type GmsClient, MayExistError, NotFoundError, operationTimeout, timeLeft } from "../client";
import { type Clock, systemClock } from "../provider/clock";
import { failure, failureText, ProviderError } from "../provider/errors";
import { computed, replaceOnly, updatable } from "../provider/fields";
import type { Outputs } from "../provider/kind";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { restKind } from "../provider/rest";
import { providerLog } from "../provider/log";
import type { Model } from "./model";
import { AppRef, Name, entryRef } from "../provider/workspace-form";
import { abandonCreate } from "../provider/undo-create";
import * as shim from "../shims/fine-tune";

/** What create waits at most for the job to leave `processing` when `waitTimeoutSeconds` is left out. */
const DEFAULT_WAIT_SECONDS = 3600;
const MAX_WAIT_SECONDS = 86_400;
/** Polling starts fast and backs off to this cap; a progress line is logged at most every `PROGRESS_EVERY_MS`. */
const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 5_000;
const PROGRESS_EVERY_MS = 10_000;

const NUMERIC_ID = "a whole number (an internal numeric id, not a GUID)";

/**
 * The records to train on, compared as a set: the service trains on each record once, whatever the
 * order, so check sorts them and a reordered list changes nothing.
 */
const DataIds = z
  .array(
    z
      .number({ error: `must be ${NUMERIC_ID}` })
      .int(`must be ${NUMERIC_ID}`)
      .positive("must be a positive Data ID"),
  )
  .min(MIN_FINE_TUNE_RECORDS, `must list at least ${MIN_FINE_TUNE_RECORDS} Data IDs: the service trains only when that many resolve`)
  .superRefine((ids, context) => {
    ids.forEach((id, index) => {
      if (ids.indexOf(id) !== index) context.addIssue({ code: "custom", path: [index], message: `lists Data ID ${id} more than once` });
    });
  })
  .transform((ids) => sortedIds(ids));

const sortedIds = (ids: readonly number[]): number[] => [...ids].sort((a, b) => a - b);

/** The FineTune kind, its wait on `clock`. */
export const makeFineTuneKind = (clock: Clock = systemClock) =>
  restKind(
    {
      name: "FineTune",
      description:
        "A fine-tune: a model trained at an external model provider from Data records of an App. Create starts the provider job and waits until " +
        "it leaves `processing`; a job the provider fails fails the step (the fine-tune is recorded and replaced by the next update, as is one a " +
        "refresh shows `failed`). Only the name changes in place.",
      quirks: [
        "The service builds a training Dataset (`<name> (fine-tune training data)`) under the App on create and keeps it when the fine-tune is deleted.",
        "`dataIds` are the records' numeric ids, not their GUIDs, and at least 10 must resolve.",
      ],
      workspaceSection:
        "Fine-tunes (models trained at a provider from Data records of an App), by logical name; each waits for its provider job on create.",
      identity: [["app", "name"]],
      inputs: {
        name: updatable(z.string().min(1, "must not be empty"), "The fine-tune's name; renamed in place.", { required: true }),
        app: replaceOnly(Guid, "The GUID of the App whose Data records train the model. Another App replaces the fine-tune.", {
          required: true,
        }),
        dataset: replaceOnly(Guid, "The GUID of the Dataset the fine-tune is made against. Another Dataset replaces the fine-tune.", {
          required: true,
        }),
        dataIds: replaceOnly(
          DataIds,
          `The internal numeric ids of the Data records to train on (not their GUIDs; the Data routes do not show them), at least ` +
            `${MIN_FINE_TUNE_RECORDS}, each once. Compared as a set (Pulumi keeps them sorted). Every one must resolve: a create whose answer ` +
            "shows records the service skipped deletes the fine-tune again and names them. A change replaces the fine-tune.",
          { required: true },
        ),
        baseModel: replaceOnly(
          z.string().min(1, "must name the provider's base model, for example gpt-4o-mini"),
          "The provider's base model to train, for example `gpt-4o-mini`. A change replaces the fine-tune.",
          { required: true },
        ),
        providerConnection: replaceOnly(
          z
            .number({ error: `must be the ProviderConnection's numeric id (workspaceModelProviderId), ${NUMERIC_ID}` })
            .int(`must be the ProviderConnection's numeric id (workspaceModelProviderId), ${NUMERIC_ID}`)
            .positive("must be a positive id"),
          "The numeric id of the ProviderConnection whose provider runs the job (the service's `workspaceModelProviderId`): a Model's " +
            "`workspaceModelProviderId` output is that of the connection it is linked to. Not returned by the service, so refresh keeps " +
            "the declared value (`providerConnectionGuid` shows the connection). A change replaces the fine-tune.",
          { required: true, writeOnly: true },
        ),
        waitTimeoutSeconds: updatable(
          z.number().positive("must be positive").max(MAX_WAIT_SECONDS, `must be at most ${MAX_WAIT_SECONDS} (one day)`),
          `How long create waits for the provider job to leave \`processing\` (default ${DEFAULT_WAIT_SECONDS} s). A job still running ` +
            "then fails the step, and state records the fine-tune: `pulumi refresh` once the job has succeeded keeps it, the next `pulumi up` " +
            "without one replaces it. Changing it changes nothing in the service.",
          { writeOnly: true },
        ),
      },
      outputs: {
        guid: computed(z.string(), "The fine-tune's GUID."),
        status: computed(
          FineTuneStatus,
          "The job's status: `processing` while the provider trains, then `succeeded` or `failed`. Refresh reads it; `failed` makes the next " +
            "`pulumi up` replace the fine-tune (a new job), any other status causes no diff.",
        ),
        vendorFinetuneName: computed(z.string(), "The provider-side job name."),
        failureReason: computed(z.string().nullable(), "Why the provider failed the job; null unless `status` is `failed`."),
        trainingDataset: computed(z.string(), "The GUID of the Dataset the service built from the resolved Data records to upload."),
        providerConnectionGuid: computed(z.string(), "The GUID of the ProviderConnection `providerConnection` names."),
        createdAt: computed(z.string().optional(), "Creation time (ISO 8601), when the service reports it."),
        updatedAt: computed(z.string().optional(), "Last update time (ISO 8601), when the service reports it."),
      },
      workspace: {
        form: (inputs) => ({
          app: AppRef.describe(`The App whose Data records train the model. ${AppRef.description} Another App replaces the fine-tune.`),
          dataset: entryRef(
            "Dataset",
            Name.describe("The logical name of a Dataset declared under `datasets`. Another Dataset replaces the fine-tune."),
          ),
          providerConnection: z
            .union(
              [
                inputs.providerConnection.schema,
                z.strictObject({
                  model: entryRef(
                    "Model",
                    Name.describe("The logical name of a Model declared under `models`: the connection it is linked to runs the job."),
                  ),
                }),
              ],
              {
                error:
                  "must be the ProviderConnection's numeric id (workspaceModelProviderId) or { model: <logical name of a Model declared under models> }",
              },
            )
            .describe(
              "The ProviderConnection whose provider runs the job: its numeric id (the service's `workspaceModelProviderId`), or " +
                "`{ model: <logical name> }` for the connection a Model declared under `models` is linked to (the Model's " +
                "`workspaceModelProviderId` output; the fine-tune is created after the Model). A change replaces the fine-tune.",
            ),
        }),
        toArgs: (_key, entry, context) => {
          const { app, dataset, providerConnection, ...fields } = entry;
          return {
            args: {
              ...fields,
              app: context.appGuid(app),
              dataset: context.child("Dataset", dataset).id,
              // A Model's output: left out when the Model shows none, which the fine-tune's check then reports.
              providerConnection:
                typeof providerConnection === "number"
                  ? providerConnection
                  : (context.child("Model", providerConnection.model) as Model).workspaceModelProviderId,
            },
          };
        },
      },
      // A failed job never trains again: the next `up` starts a new one, even after a refresh dropped the partial-create mark.
      replaceWhen: (olds) => (olds.status === "failed" ? "status" : undefined),
    },
    // Its App's list (the lost-create lookup), and the rename PUT (the one update).
    { ...fineTuneEndpoints, list: fineTuneEndpoints.ofApp, update: fineTuneEndpoints.rename },
    {
      label: (inputs) => `FineTune "${inputs.name}"`,
      // What tells a fine-tune apart in its App's list (the connection and the Data IDs are not compared).
      matchOn: ["app", "name", "dataset", "baseModel"],
      listBy: { guid: "app" },
      async explain(_client, error, operation, inputs) {
        return operation === "create" ? failure(`Cannot create FineTune "${inputs.name}"`, error, createAdvice(error)) : error;
      },
      overrides: (derived) => ({
        async create(client, inputs) {
          const created = (await derived.create(client, inputs)) as FineTuneRecord;
          const resolved = new Set(created.dataIds);
          const skipped = inputs.dataIds!.filter((id) => !resolved.has(id));
          if (skipped.length > 0) {
            return abandonCreate({
              remove: () => derived.delete(client, created.guid, {}),
              kindLabel: "fine-tune",
              guid: created.guid,
              message:
                `Cannot create FineTune "${inputs.name}": the service found no Data record for ${skipped.length === 1 ? "Data ID" : "Data IDs"} ` +
                `${skipped.join(", ")} in the workspace and trained on the other ${created.dataIds.length}. ` +
                `Remove ${skipped.length === 1 ? "it" : "them"} from dataIds.`,
              record: toOutputs(created),
            });
          }
          return toOutputs(await waitForJob(client, created, inputs.waitTimeoutSeconds ?? DEFAULT_WAIT_SECONDS, clock));
        },
        read: async (client, guid, state) => toOutputs((await derived.read(client, guid, state)) as FineTuneRecord),
      }),
    },
  );

export const fineTuneKind = makeFineTuneKind();

/** What to check when the service refuses the create. */
function createAdvice(error: unknown): string | undefined {
  if (error instanceof NotFoundError) {
    return (
      "Check that app and dataset are GUIDs of an App and a Dataset of the workspace, and that providerConnection is the numeric id " +
      "(workspaceModelProviderId) of one of its ProviderConnections."
    );
  }
  return undefined;
}

/**
 * Polls the job's status until it leaves `processing`, logging progress. `succeeded` answers the record;
 * a failed job, the deadline or a failed check throws a `MayExistError` (the fine-tune exists).
 */
async function waitForJob(client: GmsClient, created: FineTuneRecord, timeoutSeconds: number, clock: Clock): Promise<FineTuneRecord> {
  const label = `FineTune "${created.name}" (${created.guid})`;
  const exists = (message: string, record: FineTuneRecord) =>
    new MayExistError(
      `${message} Pulumi records it as created with errors: the next \`pulumi up\` replaces it (starting a new job), ` +
        "`pulumi destroy` deletes it.",
      { state: "made", id: record.guid, outputs: toOutputs(record) },
    );
  const started = clock.now();
  // The engine's timeout for the step (customTimeouts), when it comes first, bounds the wait as waitTimeoutSeconds does.
  const bound = operationTimeout();
  const ownDeadline = started + timeoutSeconds * 1000;
  const deadline = Math.min(ownDeadline, started + timeLeft());
  const elapsed = () => `${((clock.now() - started) / 1000).toFixed(1)} s`;
  let delay = FIRST_POLL_MS;
  let checks = 0;
  let lastLog = started;
  /** The record as last seen: the create's answer with the latest status. */
  let latest = created;
  if (latest.status === "processing")
    await providerLog.info(
      `${label}: waiting up to ${timeoutSeconds} s for provider job ${created.vendorFinetuneName} to leave processing`,
    );
  while (latest.status === "processing") {
    const left = deadline - clock.now();
    if (left <= 0) {
      const raise = bound && deadline < ownDeadline ? `Raise ${describeTimeout(bound)}, which ran out first` : "Raise waitTimeoutSeconds";
      throw exists(
        `${label} was created, but its provider job ${latest.vendorFinetuneName} was still processing after ${elapsed()} (${checks} checks); ` +
          `the job continues at the provider. ${raise}, or run \`pulumi refresh\` once the job has succeeded to keep it.`,
        latest,
      );
    }
    await clock.sleep(Math.min(delay, left));
    delay = Math.min(delay * 2, MAX_POLL_MS);
    try {
      latest = { ...latest, ...(await call(client, fineTuneEndpoints.status, { params: { guid: created.guid } })) };
    } catch (error) {
      if (error instanceof NotFoundError)
        throw new ProviderError("gone", `${label} was deleted (outside Pulumi?) while Pulumi waited for its provider job.`);
      throw exists(`${label} was created, but checking its provider job failed: ${failureText(error)}.`, latest);
    }
    checks += 1;
    if (latest.status === "processing" && clock.now() - lastLog >= PROGRESS_EVERY_MS) {
      lastLog = clock.now();
      await providerLog.info(`${label}: provider job ${latest.vendorFinetuneName} still processing after ${elapsed()}`);
    }
  }
  let record: FineTuneRecord;
  try {
    // The status route shows two fields: the record holds the failure's reason and the rest.
    record = await call(client, fineTuneEndpoints.get, { params: { guid: created.guid } });
  } catch (error) {
    throw exists(
      `${label}: its provider job left processing (${latest.status}), but reading the fine-tune failed: ${failureText(error)}.`,
      latest,
    );
  }
  await providerLog.info(`${label}: provider job ${record.vendorFinetuneName} ${record.status} after ${elapsed()}`);
  if (record.status === "failed") {
    throw exists(
      `Cannot create FineTune "${record.name}": the provider failed its job ${record.vendorFinetuneName}: ${record.failureReason ?? "no reason given"}.`,
      record,
    );
  }
  return record;
}

/** The record as outputs: its Data IDs sorted, as check leaves them. */
const toOutputs = (fineTune: FineTuneRecord): Outputs => ({ ...fineTune, dataIds: sortedIds(fineTune.dataIds) });

export type FineTuneArgs = KindArgs<typeof fineTuneKind>;
export interface FineTune extends KindOutputs<typeof fineTuneKind> {}
export class FineTune extends GmsResource {
  constructor(name: string, args: FineTuneArgs, opts?: pulumi.CustomResourceOptions) {
    super(fineTuneKind, shim, name, args, opts);
  }
}
