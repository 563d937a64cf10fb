/**
 * Experiment: an A/B comparison of two Actions of one App. The name and both Actions update in place;
 * another App replaces the Experiment. The service refuses Actions of another App with a bare
 * "Both Actions must belong to the App", so the error is rewritten to name the App, say which Action is
 * foreign and list the Actions the App has. Its operations are derived from its endpoint entries
 * (src/api/experiments.ts); its quirks: the lost-create lookup compares the name and the two Actions (the spec
 * does not show an Experiment's App), and a refused create or update is explained as above.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { type ActionRecord, appsApi } from "../api/apps";
import { Guid } from "../api/common";
import { type ExperimentFields, experimentEndpoints } from "../api/experiments";
import { type GmsClient, NotFoundError, ValidationError } from "../client";
import { failure, notInWorkspace, ProviderError } from "../provider/errors";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { restKind } from "../provider/rest";
import { AppRef, Name } from "../provider/workspace-form";
import * as shim from "../shims/experiment";

export const experimentKind = restKind(
  {
    name: "Experiment",
    description: "An Experiment: an A/B comparison of two Actions of one App.",
    quirks: ["Both Actions must belong to the Experiment's App."],
    workspaceSection: "Experiments (A/B comparisons of two Actions of one App), by logical name.",
    identity: [["name"]],
    inputs: {
      name: updatable(z.string().min(1, "must not be empty"), "The Experiment's name.", { required: true }),
      app: replaceOnly(Guid, "The GUID of the App whose Actions are compared; another App replaces the Experiment.", { required: true }),
      primaryAction: updatable(Guid, "The GUID of the primary (A) Action; it must belong to the App.", { required: true }),
      secondaryAction: updatable(Guid, "The GUID of the secondary (B) Action; it must belong to the App.", { required: true }),
    },
    outputs: {
      guid: computed(z.string(), "The Experiment's GUID."),
      status: computed(z.string(), "The Experiment's status as the service reports it (e.g. `active`)."),
      createdAt: computed(z.string().optional(), "Creation time (ISO 8601), when the service reports it."),
      updatedAt: computed(z.string().optional(), "Last update time (ISO 8601), when the service reports it."),
    },
    workspace: {
      form: () => ({
        app: AppRef.describe(`The App whose Actions are compared. ${AppRef.description} Another App replaces the Experiment.`),
        primaryAction: Name.describe("The name of the primary (A) Action, an Action of the App. Changes in place."),
        secondaryAction: Name.describe("The name of the secondary (B) Action, an Action of the App. Changes in place."),
      }),
      toArgs: (_key, entry, context) => {
        const { app, primaryAction, secondaryAction, ...fields } = entry;
        return {
          args: {
            ...fields,
            app: context.appGuid(app),
            primaryAction: context.lookedUp((found) => found.action(app, primaryAction)),
            secondaryAction: context.lookedUp((found) => found.action(app, secondaryAction)),
          },
        };
      },
    },
  },
  experimentEndpoints,
  {
    label: (inputs) => `Experiment "${inputs.name}"`,
    // The spec does not list `app` among an Experiment's fields: the lookup does not rely on it.
    matchOn: ["name", "primaryAction", "secondaryAction"],
    async explain(client, error, operation, inputs, state) {
      // The App cannot change in place, so an update's Actions are checked against the Experiment's own App.
      const app = (operation === "update" ? (state?.app as string | undefined) : undefined) ?? inputs.app!;
      const declared = { name: inputs.name!, app, primaryAction: inputs.primaryAction!, secondaryAction: inputs.secondaryAction! };
      return explained(client, error, operation, declared);
    },
  },
);

/**
 * The service's refusals in the program's terms. Only on the error path does this cost requests: the
 * App and its Action list, to say which declared Action is foreign and which Actions would do.
 */
async function explained(client: GmsClient, error: unknown, operation: "create" | "update", declared: ExperimentFields): Promise<unknown> {
  const what = `Cannot ${operation} Experiment "${declared.name}"`;
  if (error instanceof ValidationError && /must belong to the App/i.test(error.detail)) {
    const app = await describeApp(client, declared.app);
    const own = new Set(app?.actions.map((action) => action.guid));
    const foreign = (["primaryAction", "secondaryAction"] as const)
      .filter((field) => !own.has(declared[field]))
      .map((field) => `${field} ${declared[field]}`);
    if (!app || foreign.length === 0) {
      return new ProviderError(
        "actions_of_another_app",
        `${what}: primaryAction ${declared.primaryAction} and secondaryAction ${declared.secondaryAction} ` +
          `must both be Actions of App ${declared.app}, and at least one is not`,
        { cause: error },
      );
    }
    const available = app.actions.length > 0 ? app.actions.map((action) => `${action.name} (${action.guid})`).join(", ") : "none";
    return new ProviderError(
      "actions_of_another_app",
      `${what}: both Actions must belong to App "${app.name}" (${declared.app}), but ` +
        `${foreign.join(" and ")} ${foreign.length === 1 ? "belongs" : "belong"} to another App. ` +
        `Actions of "${app.name}": ${available}. Use two of them, or set app to the App that owns the Actions (a different app replaces the Experiment).`,
      { cause: error },
    );
  }
  if (error instanceof NotFoundError && /^Action/i.test(error.detail)) {
    return notInWorkspace(
      what,
      "an Action",
      `check primaryAction ${declared.primaryAction} and secondaryAction ${declared.secondaryAction}`,
      error,
    );
  }
  if (error instanceof NotFoundError && operation === "create" && /^App/i.test(error.detail)) {
    return notInWorkspace(what, `App ${declared.app}`, "set app to the GUID of an existing App", error);
  }
  // An update's other failures stay the client's errors: a 404 of the Experiment itself means it is gone.
  return operation === "create" ? failure(what, error) : error;
}

/** The App's name and Actions, or undefined when they cannot be read (the original error then speaks alone). */
async function describeApp(client: GmsClient, guid: string): Promise<{ name: string; actions: ActionRecord[] } | undefined> {
  try {
    const app = await appsApi.get(client, guid);
    const actions = await appsApi.actions(client, guid);
    return { name: app.name, actions };
  } catch {
    return undefined;
  }
}

export type ExperimentArgs = KindArgs<typeof experimentKind>;
export interface Experiment extends KindOutputs<typeof experimentKind> {}
export class Experiment extends GmsResource {
  constructor(name: string, args: ExperimentArgs, opts?: pulumi.CustomResourceOptions) {
    super(experimentKind, shim, name, args, opts);
  }
}
