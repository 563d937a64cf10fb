import { z } from "zod";
import { collect, type GmsClient, paginateEnvelope, path } from "../client";
import { ONE_RUN_MODE, RunBody, RunResponse, Variant, oneRunMode } from "./actions";
import { type FindCreated, UnnamedAuditFields, Guid } from "./common";
import { putRecord } from "./put-record";

/** An Experiment: an A/B comparison of two Actions of one App. */
export const Experiment = z.object({
  guid: Guid,
  name: z.string(),
  // Spec: not among the Experiment fields the spec lists; the emulator returns it, clients must not need it.
  app: Guid.optional(),
  primary_action: Guid,
  secondary_action: Guid,
  status: z.string(),
  deleted: z.boolean(),
  ...UnnamedAuditFields,
});
export type Experiment = z.infer<typeof Experiment>;

export const ExperimentCreate = z.object({
  name: z.string().min(1),
  app: Guid,
  primary_action: Guid,
  secondary_action: Guid,
});
export type ExperimentCreate = z.infer<typeof ExperimentCreate>;

/** Whether two optional fields of a body, when both are given, are equal. */
const sameWhenBoth =
  <K extends string>(first: K, second: K) =>
  (body: Partial<Record<K, unknown>>): boolean =>
    body[first] === undefined || body[second] === undefined || body[first] === body[second];

/**
 * Spec: field names not shown; the emulator takes the create names, at least one of them, and the official
 * client's names for the two Actions (`action_primary_guid`, `action_secondary_guid`) as their aliases. A
 * side given under both names must name the same Action.
 */
export const ExperimentUpdate = z
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
  .transform(({ action_primary_guid, action_secondary_guid, ...body }) => ({
    ...body,
    primary_action: body.primary_action ?? action_primary_guid,
    secondary_action: body.secondary_action ?? action_secondary_guid,
  }))
  .refine((body) => body.name !== undefined || body.primary_action !== undefined || body.secondary_action !== undefined, {
    error: "name, primary_action or secondary_action is required",
  });
export type ExperimentUpdate = z.infer<typeof ExperimentUpdate>;

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

/** An Experiment as the code uses it. */
export type ExperimentRecord = {
  guid: string;
  name: string;
  app: string | undefined;
  primaryAction: string;
  secondaryAction: string;
  status: string;
  createdAt: string | undefined;
  updatedAt: string | undefined;
};

export const toExperimentRecord = (experiment: Experiment): ExperimentRecord => ({
  guid: experiment.guid,
  name: experiment.name,
  app: experiment.app,
  primaryAction: experiment.primary_action,
  secondaryAction: experiment.secondary_action,
  status: experiment.status,
  createdAt: experiment.created_at,
  updatedAt: experiment.updated_at,
});

export interface ExperimentFields {
  name: string;
  app: string;
  primaryAction: string;
  secondaryAction: string;
}

export const experimentsApi = {
  async list(client: GmsClient): Promise<ExperimentRecord[]> {
    return (await collect(paginateEnvelope(client, { path: path`/experiments`, item: Experiment }))).map(toExperimentRecord);
  },
  async create(client: GmsClient, fields: ExperimentFields, findCreated: FindCreated): Promise<ExperimentRecord> {
    const body: ExperimentCreate = {
      name: fields.name,
      app: fields.app,
      primary_action: fields.primaryAction,
      secondary_action: fields.secondaryAction,
    };
    return toExperimentRecord(await client.create({ path: path`/experiments`, body, schema: Experiment, findCreated }));
  },
  async get(client: GmsClient, guid: string): Promise<ExperimentRecord> {
    return toExperimentRecord(await client.request({ method: "GET", path: path`/experiments/${guid}`, schema: Experiment }));
  },
  /** Sends the fields given (the App cannot change). */
  async update(client: GmsClient, guid: string, fields: Partial<Omit<ExperimentFields, "app">>): Promise<ExperimentRecord> {
    const body: Record<string, unknown> = {};
    if ("name" in fields) body.name = fields.name;
    if ("primaryAction" in fields) body.primary_action = fields.primaryAction;
    if ("secondaryAction" in fields) body.secondary_action = fields.secondaryAction;
    return toExperimentRecord(await putRecord(client, path`/experiments/${guid}`, body, Experiment));
  },
  async delete(client: GmsClient, guid: string): Promise<void> {
    await client.request({ method: "DELETE", path: path`/experiments/${guid}`, schema: z.unknown() });
  },
};
