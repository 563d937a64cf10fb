/**
 * Dataset: a named collection of input/output examples, each Item a copy of a Data record. The resource
 * declares the Items by the GUIDs of the Data records they come from (`data`); the service silently skips
 * GUIDs it cannot resolve, so every write of `data` reads the linked records back and names the ones it
 * skipped. `data` is compared as a set: the service keeps its own Item order, and a program that lists
 * the same records in another order has nothing to change.
 *
 * Its operations are derived from its endpoint entries (src/api/datasets.ts); its quirks: the lookup lists the
 * App's Datasets, or the workspace's for a Dataset of no App, before the POST too (Datasets carry no creation
 * time); a missing App is named as such; create checks which Data records its Items copy (a second call; the
 * Dataset deleted again when some were skipped); read adds those records to the Dataset; and update decides what
 * a PUT sends (`data` with every PUT while the program manages it), sends nothing for a reordering, and checks
 * the records the read-back shows (the spec shows no PUT answer, so the derived update reads the Dataset back,
 * which for a Dataset is its record and the Data records its Items copy).
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { Guid } from "../api/common";
import { appsApi } from "../api/apps";
import { datasetEndpoints } from "../api/datasets";
import { listAll } from "../api/endpoint";
import { type GmsClient, NotFoundError } from "../client";
import { failure, failureText, notInWorkspace, ProviderError } from "../provider/errors";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { restKind } from "../provider/rest";
import { AppRef } from "../provider/workspace-form";
import { abandonCreate } from "../provider/undo-create";
import * as shim from "../shims/dataset";

type DataGuids = string[] | null | undefined;

export const datasetKind = restKind(
  {
    name: "Dataset",
    description: "A Dataset: input/output examples (Items), each copied from a Data record when it is added, used by Evals and fine-tunes.",
    quirks: [
      "Changing `data` replaces every Item of the Dataset; a GUID that does not resolve to a Data record adds nothing.",
      "Deleting a Dataset deletes its Items.",
    ],
    workspaceSection: "Datasets, by logical name.",
    identity: [["name"]],
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
    workspace: {
      form: () => ({
        app: AppRef.nullable().describe(
          `The App the Dataset belongs to, or null for none. ${AppRef.description} Another App replaces the Dataset.`,
        ),
      }),
      toArgs: (_key, entry, context) => {
        const { app, ...fields } = entry;
        return { args: { ...fields, ...(app === undefined ? {} : { app: app === null ? null : context.appGuid(app) }) } };
      },
    },
  },
  { ...datasetEndpoints, list: datasetEndpoints.ofApp, listWithoutParent: datasetEndpoints.list },
  {
    label: (inputs) => `Dataset "${inputs.name}"`,
    matchOn: ["name", "description", "app"],
    listBy: { app: "app" },
    // Datasets carry no creation time: the matching ones are listed before the POST, to tell the new one apart.
    listBeforeCreate: true,
    async explain(_client, error, operation, inputs) {
      if (operation === "update") return error;
      const what = `Cannot create Dataset "${inputs.name}"`;
      if (error instanceof NotFoundError && inputs.app)
        return notInWorkspace(what, `App ${inputs.app}`, "set app to the GUID of an existing App, or null", error);
      return failure(what, error);
    },
    overrides: (derived) => ({
      async findCreated(client, inputs) {
        const found = await derived.findCreated(client, inputs);
        if (found.length === 0 || !inputs.app) return found;
        // A Dataset is no older than its App, whose record has a creation time: that bounds the Dataset's (an App
        // made during an interrupted update holds only Datasets made during it too).
        const app = await appsApi.get(client, inputs.app);
        return found.map((candidate) => ({ ...candidate, notBefore: app.createdAt }));
      },
      async create(client, inputs) {
        const created = await derived.create(client, inputs);
        if (inputs.data && inputs.data.length > 0) {
          const guid = created.guid as string;
          const abandon = (message: string, data: string[]) =>
            abandonCreate({
              remove: () => derived.delete(client, guid, {}),
              kindLabel: "Dataset",
              guid,
              message,
              record: { ...created, data },
            });
          let linked: string[];
          try {
            linked = await linkedData(client, guid);
          } catch (error) {
            return abandon(
              `Cannot create Dataset "${inputs.name}": reading which Data records it copied failed: ${failureText(error)}.`,
              [],
            );
          }
          const skipped = missingFrom(linked, inputs.data);
          if (skipped.length > 0) return abandon(`Cannot create Dataset "${inputs.name}": ${unresolved(skipped)}`, linked);
        }
        return { ...created, data: inputs.data ?? [] };
      },
      async read(client, guid, state) {
        const dataset = await derived.read(client, guid, state);
        const live = await linkedData(client, guid);
        // The stored order is kept while the records are the same, so a refresh never reports a reordering.
        const stored = state.data as DataGuids;
        return { ...dataset, data: stored !== undefined && sameRecords(live, stored) ? stored : live };
      },
      async update(client, guid, news, changed, state) {
        // `data` is sent by the rule below, not because it changed.
        const sent = new Set(changed);
        sent.delete("data");
        // A reordering alone changes nothing on the service.
        const rewritesItems = changed.has("data") && !sameRecords(news.data, state.data as DataGuids);
        // The spec's "omitted or unresolvable GUIDs create none" also reads as "a PUT without datapoints empties
        // the Dataset", so whenever the program manages `data`, every PUT carries the declared list.
        if (rewritesItems || (sent.size > 0 && Array.isArray(news.data))) sent.add("data");
        const data = changed.has("data") ? news.data : state.data;
        if (sent.size === 0) return { ...state, data };

        const dataset = await derived.update(client, guid, { ...news, data: news.data ?? [] }, sent, state);
        if (rewritesItems && news.data && news.data.length > 0) {
          // The read-back lists the records the Items now copy.
          const skipped = missingFrom(dataset.data as string[], news.data);
          if (skipped.length > 0) {
            throw new ProviderError(
              "data_not_copied",
              `Dataset "${news.name}" (${guid}) was updated, but ${unresolved(skipped)} Its Items now copy only the other records.`,
            );
          }
        }
        return { ...dataset, data };
      },
    }),
  },
);

/** The same records regardless of order (an absent list and an empty one are the same: no Items). */
function sameRecords(a: DataGuids, b: DataGuids): boolean {
  const sorted = (list: DataGuids) => [...(list ?? [])].sort();
  const left = sorted(a);
  const right = sorted(b);
  return left.length === right.length && left.every((guid, index) => guid === right[index]);
}

/** The GUIDs of the Data records the Dataset's Items link to, in Item order. */
const linkedData = async (client: GmsClient, guid: string): Promise<string[]> =>
  (await listAll(client, datasetEndpoints.data, { params: { guid } })).map((record) => record.guid);

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
