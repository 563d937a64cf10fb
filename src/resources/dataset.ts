/**
 * Dataset: a named collection of input/output examples, each Item a copy of a Data record. The resource
 * declares the Items by the GUIDs of the Data records they come from (`data`); the service silently skips
 * GUIDs it cannot resolve, so every write of `data` reads the linked records back and names the ones it
 * skipped. `data` is compared as a set: the service keeps its own Item order, and a program that lists
 * the same records in another order has nothing to change.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { Guid } from "../api/common";
import { type DatasetChanges, type DatasetRecord, datasetsApi } from "../api/datasets";
import { NotFoundError } from "../client";
import { abandonCreate } from "../provider/undo-create";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { failure, failureText, notInWorkspace, ProviderError } from "../provider/errors";
import { defineKind } from "../provider/kind";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import * as shim from "../shims/dataset";

type DataGuids = string[] | null | undefined;

export const datasetKind = defineKind({
  name: "Dataset",
  description: "A Dataset: input/output examples (Items), each copied from a Data record when it is added, used by Evals and fine-tunes.",
  inputs: {
    name: updatable(z.string().min(1, "must not be empty"), "The Dataset's name.", { required: true }),
    description: updatable(z.string().nullable(), "What the Dataset holds.", { default: null }),
    app: replaceOnly(
      Guid.nullable(),
      "The GUID of the App the Dataset belongs to, or null for none; the service cannot move a Dataset, so another App replaces it.",
      {
        default: null,
      },
    ),
    data: updatable(
      // A record listed twice would make the set comparison disagree with a service that keeps one Item per record.
      z.array(Guid).superRefine((guids, context) => {
        guids.forEach((guid, index) => {
          if (guids.indexOf(guid) !== index)
            context.addIssue({ code: "custom", path: [index], message: `lists Data record ${guid} more than once` });
        });
      }),
      "The GUIDs of the Data records whose input and output the Dataset's Items copy, compared as a set (order is not significant). " +
        "Changing it replaces every Item with fresh copies of the listed records. Leave it out to manage the Items elsewhere; " +
        "refresh shows the records the Items link to (Items not linked to a Data record, or whose record was deleted, are not listed).",
    ),
  },
  outputs: {
    guid: computed(z.string(), "The Dataset's GUID."),
  },
  async create(client, inputs) {
    const body = { name: inputs.name!, description: inputs.description, app: inputs.app, ...(inputs.data ? { data: inputs.data } : {}) };
    let created: DatasetRecord;
    try {
      created = await datasetsApi.create(client, body, () => this.findCreated(client, inputs));
    } catch (error) {
      const what = `Cannot create Dataset "${inputs.name}"`;
      if (error instanceof NotFoundError && inputs.app)
        throw notInWorkspace(what, `App ${inputs.app}`, "set app to the GUID of an existing App, or null", error);
      throw failure(what, error);
    }
    if (inputs.data && inputs.data.length > 0) {
      const abandon = (message: string, data: string[]) =>
        abandonCreate(client, {
          path: datasetsApi.recordPath(created.guid),
          kindLabel: "Dataset",
          guid: created.guid,
          message,
          record: { ...created, data },
        });
      let linked: string[];
      try {
        linked = await datasetsApi.linkedData(client, created.guid);
      } catch (error) {
        return abandon(`Cannot create Dataset "${inputs.name}": reading which Data records it copied failed: ${failureText(error)}.`, []);
      }
      const skipped = missingFrom(linked, inputs.data);
      if (skipped.length > 0) return abandon(`Cannot create Dataset "${inputs.name}": ${unresolved(skipped)}`, linked);
    }
    return { ...created, data: inputs.data ?? [] };
  },
  async findCreated(client, inputs) {
    const datasets = await datasetsApi.list(client, inputs.app);
    return datasets
      .filter((dataset) => dataset.name === inputs.name && dataset.description === inputs.description && dataset.app === inputs.app)
      .map((dataset) => ({ guid: dataset.guid }));
  },
  async read(client, guid, state) {
    const dataset = await datasetsApi.get(client, guid);
    const live = await datasetsApi.linkedData(client, guid);
    // The stored order is kept while the records are the same, so a refresh never reports a reordering.
    const stored = state.data as DataGuids;
    return { ...dataset, data: stored !== undefined && sameRecords(live, stored) ? stored : live };
  },
  async update(client, guid, news, changed, state) {
    const changes: DatasetChanges = {};
    if (changed.has("name")) changes.name = news.name;
    if (changed.has("description")) changes.description = news.description;
    // A reordering alone changes nothing on the service.
    const rewritesItems = changed.has("data") && !sameRecords(news.data, state.data as DataGuids);
    // The spec's "omitted or unresolvable GUIDs create none" also reads as "a PUT without datapoints empties
    // the Dataset", so whenever the program manages `data`, every PUT carries the declared list.
    if (rewritesItems || (Object.keys(changes).length > 0 && Array.isArray(news.data))) changes.data = news.data ?? [];
    const data = changed.has("data") ? news.data : state.data;
    if (Object.keys(changes).length === 0) return { ...state, data };

    const dataset = await datasetsApi.update(client, guid, changes);
    if (rewritesItems && news.data && news.data.length > 0) {
      const skipped = missingFrom(await datasetsApi.linkedData(client, guid), news.data);
      if (skipped.length > 0) {
        throw new ProviderError(
          "data_not_copied",
          `Dataset "${news.name}" (${guid}) was updated, but ${unresolved(skipped)} Its Items now copy only the other records.`,
        );
      }
    }
    return { ...dataset, data };
  },
  async delete(client, guid) {
    await datasetsApi.delete(client, guid);
  },
});

/** The same records regardless of order (an absent list and an empty one are the same: no Items). */
function sameRecords(a: DataGuids, b: DataGuids): boolean {
  const sorted = (list: DataGuids) => [...(list ?? [])].sort();
  const left = sorted(a);
  const right = sorted(b);
  return left.length === right.length && left.every((guid, index) => guid === right[index]);
}

const missingFrom = (live: string[], declared: string[]): string[] => {
  const present = new Set(live);
  return [...new Set(declared.filter((guid) => !present.has(guid)))];
};

const unresolved = (skipped: string[]) =>
  skipped.length === 1
    ? `data lists a Data record the service could not find in the workspace (${skipped[0]}), ` +
      `so no Item copies it. Remove it from data, or create the Data record first.`
    : `data lists Data records the service could not find in the workspace (${skipped.join(", ")}), ` +
      `so no Item copies them. Remove them from data, or create the Data records first.`;

export type DatasetArgs = KindArgs<typeof datasetKind>;
export interface Dataset extends KindOutputs<typeof datasetKind> {}
export class Dataset extends GmsResource {
  constructor(name: string, args: DatasetArgs, opts?: pulumi.CustomResourceOptions) {
    super(datasetKind, shim, name, args, opts);
  }
}
