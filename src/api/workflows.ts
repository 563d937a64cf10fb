import { z } from "zod";
import { collect, type GmsClient, paginateUntilShort, path } from "../client";
import { type FindCreated, UnnamedAuditFields, Guid, JsonObject } from "./common";
import { putRecord } from "./put-record";

/** A Workflow record (blocks are never part of it). */
export const Workflow = z.object({
  guid: Guid,
  name: z.string(),
  slug: z.string(),
  // Spec: not among the Workflow fields the spec lists; the emulator returns it, clients must not need it.
  app: Guid.optional(),
  ...UnnamedAuditFields,
});
export type Workflow = z.infer<typeof Workflow>;

/** A Workflow as listed under its App (`GET /apps/{guid}/workflows`): the spec shows no element fields, so only these are read. */
export const WorkflowSummary = z.object({ guid: Guid, name: z.string(), created_at: z.string().optional() });
export type WorkflowSummary = z.infer<typeof WorkflowSummary>;

export const WorkflowCreate = z.object({
  name: z.string().min(1),
  app: Guid,
});
export type WorkflowCreate = z.infer<typeof WorkflowCreate>;

export const WorkflowUpdate = z.object({
  name: z.string().min(1),
});
export type WorkflowUpdate = z.infer<typeof WorkflowUpdate>;

/** Run input: an array of objects, each mapping keys to a string, a nested object or null. */
// Spec: not shown what a nested object may hold; the emulator accepts any JSON object there.
export const WorkflowInput = z.array(z.record(z.string(), z.union([z.string(), z.null(), JsonObject])));
export type WorkflowInput = z.infer<typeof WorkflowInput>;

// Spec: not shown whether `input` may be null; the emulator treats null like an absent input (pydantic Optional).
const OptionalInput = WorkflowInput.nullish().transform((input) => input ?? undefined);

export const WorkflowTrigger = z.object({ input: OptionalInput });
export type WorkflowTrigger = z.infer<typeof WorkflowTrigger>;

// Spec: not shown; the emulator takes a temporary block as `{ name, action: <Action GUID> }`.
export const PlaygroundBlock = z.object({
  name: z.string().min(1),
  action: Guid,
});
export type PlaygroundBlock = z.infer<typeof PlaygroundBlock>;

export const WorkflowPlayground = z.object({
  workflow: Guid,
  input: OptionalInput,
  blocks: z.array(PlaygroundBlock).optional(),
});
export type WorkflowPlayground = z.infer<typeof WorkflowPlayground>;

export const TriggeredBlock = z.object({
  feedback_url: z.string(),
  data_guid: Guid,
  result_url: z.string(),
  action: z.object({ guid: Guid, name: z.string() }),
});
export type TriggeredBlock = z.infer<typeof TriggeredBlock>;

/** The trigger response (the playground answers the same shape). */
export const WorkflowTriggered = z.object({
  msg: z.literal("Workflow triggered"),
  status: z.literal("success"),
  blocks: z.array(TriggeredBlock),
  run_guid: Guid,
  has_output_block: z.boolean(),
});
export type WorkflowTriggered = z.infer<typeof WorkflowTriggered>;

export const WorkflowResult = z.object({ result: z.string() });
export type WorkflowResult = z.infer<typeof WorkflowResult>;

/** The Dataset variant of a run result; `final` is always "" (a documented quirk of the service). */
export const WorkflowDatasetResult = z.object({
  final: z.literal(""),
  // Spec: not shown which GUID a block carries; the emulator gives the block's own GUID.
  blocks: z.array(z.object({ guid: Guid, name: z.string(), output: z.string() })),
});
export type WorkflowDatasetResult = z.infer<typeof WorkflowDatasetResult>;

/** A Workflow as the code uses it. */
export type WorkflowRecord = {
  guid: string;
  name: string;
  app: string | undefined;
  slug: string;
  createdAt: string | undefined;
  updatedAt: string | undefined;
};

export const toWorkflowRecord = (workflow: Workflow): WorkflowRecord => ({
  guid: workflow.guid,
  name: workflow.name,
  app: workflow.app,
  slug: workflow.slug,
  createdAt: workflow.created_at,
  updatedAt: workflow.updated_at,
});

/** A Workflow as its App lists it. */
export type WorkflowSummaryRecord = {
  guid: string;
  name: string;
  createdAt: string | undefined;
};

export const workflowsApi = {
  /** The Workflows of an App: a bare array paged until a short page. */
  async listOfApp(client: GmsClient, app: string): Promise<WorkflowSummaryRecord[]> {
    const workflows = await collect(paginateUntilShort(client, { path: path`/apps/${app}/workflows`, item: WorkflowSummary }));
    return workflows.map((workflow) => ({ guid: workflow.guid, name: workflow.name, createdAt: workflow.created_at }));
  },
  async create(client: GmsClient, body: WorkflowCreate, findCreated: FindCreated): Promise<WorkflowRecord> {
    return toWorkflowRecord(
      await client.create({ path: path`/workflows`, body, schema: Workflow, findCreated, identity: [body.app, body.name] }),
    );
  },
  async get(client: GmsClient, guid: string): Promise<WorkflowRecord> {
    return toWorkflowRecord(await client.request({ method: "GET", path: path`/workflows/${guid}`, schema: Workflow }));
  },
  /** PUT takes (and requires) `name` only. */
  async update(client: GmsClient, guid: string, body: WorkflowUpdate): Promise<WorkflowRecord> {
    return toWorkflowRecord(await putRecord(client, path`/workflows/${guid}`, body, Workflow));
  },
  async delete(client: GmsClient, guid: string): Promise<void> {
    await client.request({ method: "DELETE", path: path`/workflows/${guid}`, schema: z.unknown() });
  },
};
