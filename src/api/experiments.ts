/** The Experiment endpoints. */
import { z } from "zod";
import { ONE_RUN_MODE, RunBody, RunResponse, Variant, oneRunMode } from "./actions";
import { DeleteMessage, Guid, UnnamedAuditFields } from "./common";
import { endpoint } from "./endpoint";
import { wire } from "./wire";

/** An Experiment: an A/B comparison of two Actions of one App. */
export const Experiment = wire(
  z.object({
    guid: Guid,
    name: z.string(),
    // Spec: not among the Experiment fields the spec lists; the emulator returns it, clients must not need it.
    app: Guid.optional(),
    primary_action: Guid,
    secondary_action: Guid,
    status: z.string(),
    deleted: z.boolean(),
    ...UnnamedAuditFields,
  }),
);

export const ExperimentCreate = wire(
  z.object({
    name: z.string().min(1),
    app: Guid,
    primary_action: Guid,
    secondary_action: Guid,
  }),
);
/** What the code creates an Experiment from. */
export type ExperimentFields = z.output<typeof ExperimentCreate>;

/** Whether two optional fields of a body, when both are given, are equal. */
const sameWhenBoth =
  <K extends string>(first: K, second: K) =>
  (body: Partial<Record<K, unknown>>): boolean =>
    body[first] === undefined || body[second] === undefined || body[first] === body[second];

/**
 * Spec: field names not shown; the emulator takes the create names, at least one of them, and the official
 * client's names for the two Actions (`action_primary_guid`, `action_secondary_guid`) as their aliases. A
 * side given under both names must name the same Action; the emulator's route takes either.
 */
export const ExperimentUpdate = wire(
  z
    .object({
      name: z.string().min(1).optional(),
      primary_action: Guid.optional(),
      secondary_action: Guid.optional(),
      action_primary_guid: Guid.optional(),
      action_secondary_guid: Guid.optional(),
    })
    .refine(sameWhenBoth("primary_action", "action_primary_guid"), {
      error: "primary_action and action_primary_guid name different Actions",
      path: ["action_primary_guid"],
    })
    .refine(sameWhenBoth("secondary_action", "action_secondary_guid"), {
      error: "secondary_action and action_secondary_guid name different Actions",
      path: ["action_secondary_guid"],
    })
    .refine((body) => Object.values(body).some((value) => value !== undefined), {
      error: "name, primary_action or secondary_action is required",
    }),
);
export type ExperimentUpdate = z.output<typeof ExperimentUpdate>;

/**
 * `POST /experiments/{guid}/prompt`: the options of an Action run. Spec: the forcing field's name is not
 * shown; the emulator reads the official client's `force_action`, which must be one of the Experiment's two Actions.
 */
export const ExperimentPrompt = RunBody.extend({ force_action: Guid.nullable().optional() }).refine(oneRunMode, ONE_RUN_MODE);
export type ExperimentPrompt = z.infer<typeof ExperimentPrompt>;

/** Spec: the response shape is not shown; the emulator answers a run's, plus the Action that served it and its side. */
export const ExperimentPromptResponse = RunResponse.extend({
  action: Guid,
  variant: Variant,
});
export type ExperimentPromptResponse = z.infer<typeof ExperimentPromptResponse>;

export const experimentEndpoints = {
  list: endpoint({ method: "GET", path: "/experiments", response: Experiment, list: "envelope" }),
  create: endpoint({ method: "POST", path: "/experiments", body: ExperimentCreate, response: Experiment }),
  get: endpoint({ method: "GET", path: "/experiments/{guid}", response: Experiment }),
  /** Spec: the response is not shown; the emulator answers the updated Experiment (the client relies on nothing in it: it reads the record back). */
  update: endpoint({ method: "PUT", path: "/experiments/{guid}", body: ExperimentUpdate, response: Experiment, shown: false }),
  /** Spec: not shown; the emulator answers `{ message: "Experiment <guid> deleted" }`. */
  delete: endpoint({ method: "DELETE", path: "/experiments/{guid}", response: DeleteMessage, shown: false }),
};
