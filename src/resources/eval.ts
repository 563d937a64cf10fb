/**
 * Eval: scores an Action's generations, on live traffic or over a Dataset, with a list of Eval types.
 * Only the type list changes in place (the only field the service's PUT takes); everything else
 * replaces the Eval. Its operations are derived from its endpoint entries (src/api/evals.ts); its quirks: the
 * lost-create lookup compares the name and the Action, the Eval types and the Dataset are held in another form
 * than the wire's, every PUT sends the whole type list, and a reference that does not resolve is explained.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { Guid } from "../api/common";
import { type EvalAnswer, EvalDataType, EvalVariable, evalEndpoints, evalsApi, toEvalRecord, toSelections } from "../api/evals";
import { type GmsClient, NotFoundError } from "../client";
import { failure } from "../provider/errors";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { restKind } from "../provider/rest";
import { ActionRef, Name, entryRef } from "../provider/workspace-form";
import * as shim from "../shims/eval";

const EvalTypeEntry = z.strictObject({
  guid: Guid,
  variables: z.array(z.strictObject(EvalVariable.shape)).optional(),
});
type EvalTypeEntry = z.infer<typeof EvalTypeEntry>;

export const evalKind = restKind(
  {
    name: "Eval",
    description:
      "An Eval: scores an Action's generations with Eval types, on live traffic or over a Dataset. Only the Eval types change in place.",
    quirks: ["No route starts an Eval run: runs are read only (`GET /evals/{guid}/runs`)."],
    workspaceSection: "Evals, by logical name.",
    identity: [["name"]],
    inputs: {
      name: replaceOnly(
        z.string().min(1, "must not be empty"),
        "The Eval's name. The service cannot rename an Eval: changing it replaces the Eval.",
        { required: true },
      ),
      action: replaceOnly(Guid, "The GUID of the Action whose generations are scored.", { required: true }),
      evalTypes: updatable(
        z.array(EvalTypeEntry),
        "The Eval types that score, each `{guid, variables?}` where `variables` is a list of `{name, " +
          "value}` (value: string, number, boolean or object). Eval type GUIDs come from `GET /evals/types`.",
        { required: true },
      ),
      dataset: replaceOnly(Guid.nullable(), "The GUID of a Dataset to score, or null to score live traffic.", { default: null }),
      version: replaceOnly(Guid.nullable(), "The GUID of the Action version to score, or null.", { default: null }),
      samplingRate: replaceOnly(
        z.number().min(0, "must be between 0 and 1").max(1, "must be between 0 and 1").nullable(),
        "The share of live generations scored, from 0 to 1, or null for the service's default.",
        { default: null },
      ),
      alertOnFail: replaceOnly(z.boolean(), "Whether a failing score raises an alert.", { default: false }),
    },
    outputs: {
      guid: computed(z.string(), "The Eval's GUID."),
      dataType: computed(EvalDataType, "`DATASET` when the Eval scores a Dataset, else `LIVE`."),
      createdAt: computed(z.string().optional(), "Creation time (ISO 8601), when the service reports it."),
      updatedAt: computed(z.string().optional(), "Last update time (ISO 8601), when the service reports it."),
    },
    workspace: {
      form: (inputs) => ({
        action: ActionRef.describe("The Action whose generations are scored, as `{app, action}`. Another Action replaces the Eval."),
        evalTypes: z
          .array(
            z
              .union([
                Name.describe("An Eval type by name."),
                z.strictObject({
                  type: Name.describe("The Eval type's name."),
                  variables: inputs.evalTypes.schema.element.shape.variables.describe("The type's variables, each `{name, value}`."),
                }),
              ])
              .describe("An Eval type by name, or `{type, variables}`."),
          )
          .describe("The Eval types that score, by name (each once), or `{type, variables}`. Changes in place."),
        dataset: entryRef(
          "Dataset",
          Name.nullable().describe(
            "The logical name of a Dataset declared under `datasets` to score, or null to score live traffic. Another Dataset replaces the Eval.",
          ),
        ),
      }),
      toArgs: (_key, entry, context) => {
        const { action, evalTypes, dataset, ...fields } = entry;
        return {
          args: {
            ...fields,
            action: context.lookedUp((found) => found.action(action.app, action.action)),
            evalTypes: context.lookedUp((found) =>
              evalTypes.map((ref) =>
                typeof ref === "string"
                  ? { guid: found.evalType(ref) }
                  : { guid: found.evalType(ref.type), ...(ref.variables ? { variables: ref.variables } : {}) },
              ),
            ),
            ...(dataset === undefined ? {} : { dataset: dataset === null ? null : context.child("Dataset", dataset).id }),
          },
          after: context.declaredApp(action.app),
        };
      },
    },
  },
  evalEndpoints,
  {
    label: (inputs) => `Eval "${inputs.name}"`,
    matchOn: ["name", "action"],
    // PUT takes the whole Eval type list, the one updatable field, and requires it.
    alwaysSent: ["evalTypes"],
    // The Eval types are held as `{guid, variables?}` choices and the Dataset as a GUID: the wire's forms differ.
    sent: (inputs) => ({ evalTypes: inputs.evalTypes && toSelections(inputs.evalTypes) }),
    received: (record) => toEvalRecord(record as EvalAnswer),
    async explain(client, error, operation, inputs, state) {
      if (operation === "create") return explained(client, `Cannot create Eval "${inputs.name}"`, error, inputs);
      // An update's other failures stay the client's errors: a 404 of the Eval itself means it is gone.
      if (error instanceof NotFoundError && /eval type/i.test(error.detail))
        return explained(client, `Cannot update the Eval types of Eval ${state?.guid}`, error, inputs);
      return error;
    },
  },
);

/** The references a create or update names, for explaining a 404. */
interface References {
  action?: string | undefined;
  dataset?: string | null | undefined;
  evalTypes?: EvalTypeEntry[] | undefined;
}

/** A refused create or update in the user's terms: which reference did not resolve, and what exists. */
async function explained(client: GmsClient, what: string, error: unknown, inputs: References): Promise<Error> {
  if (!(error instanceof NotFoundError)) return failure(what, error);
  if (/eval type/i.test(error.detail)) {
    const declared = (inputs.evalTypes ?? []).map((type) => type.guid).join(", ");
    const advice = `Not every GUID of evalTypes (${declared}) is an Eval type`;
    try {
      const types = await evalsApi.types(client);
      const available = types.map((type) => `${type.guid} (${type.name})`).join(", ") || "none";
      return failure(what, error, `${advice}; the available Eval types are: ${available}.`);
    } catch {
      return failure(what, error, `${advice}; list them with GET /evals/types.`);
    }
  }
  if (/action/i.test(error.detail))
    return failure(what, error, `action (${inputs.action}) must be the GUID of an Action of this workspace.`);
  if (/dataset/i.test(error.detail))
    return failure(what, error, `dataset (${inputs.dataset}) must be the GUID of a Dataset of this workspace, or null.`);
  return failure(what, error);
}

export type EvalArgs = KindArgs<typeof evalKind>;
export interface Eval extends KindOutputs<typeof evalKind> {}
export class Eval extends GmsResource {
  constructor(name: string, args: EvalArgs, opts?: pulumi.CustomResourceOptions) {
    super(evalKind, shim, name, args, opts);
  }
}
