/** The Workflow endpoints: the record, its App's list, runs (trigger, playground) and their results. */
import { z } from "zod";
import { DeleteMessage, Guid, JsonObject, UnnamedAuditFields } from "./common";
import { endpoint } from "./endpoint";
import { wire } from "./wire";

/** A Workflow record (blocks are never part of it), in the wire's names; `WorkflowCodec` decodes it into the package's. */
const Workflow = z.object({
  guid: Guid,
  name: z.string(),
  slug: z.string(),
  // Spec: not among the Workflow fields the spec lists; the emulator returns it, clients must not need it.
  app: Guid.optional(),
  ...UnnamedAuditFields,
});
export const WorkflowCodec = wire(Workflow);
/** A Workflow as the code uses it. */
export type WorkflowRecord = z.output<typeof WorkflowCodec>;

/**
 * A Workflow as the client reads it from its App's list (`GET /apps/{guid}/workflows`, the Workflow kind's lost-create
 * lookup): the spec shows no element fields, so only these are read (the emulator answers whole Workflows, `WorkflowCodec`).
 */
export const WorkflowSummary = wire(z.object({ guid: Guid, name: z.string(), created_at: z.string().optional() }));

export const WorkflowCreate = wire(
  z.object({
    name: z.string().min(1),
    app: Guid,
  }),
);
export type WorkflowCreate = z.output<typeof WorkflowCreate>;

export const WorkflowUpdate = wire(z.object({ name: z.string().min(1) }));
export type WorkflowUpdate = z.output<typeof WorkflowUpdate>;

/** Run input: an array of objects, each mapping keys to a string, a nested object or null (free keys: never renamed). */
// Spec: not shown what a nested object may hold; the emulator accepts any JSON object there.
export const WorkflowInput = z.array(z.record(z.string(), z.union([z.string(), z.null(), JsonObject])));
export type WorkflowInput = z.infer<typeof WorkflowInput>;

// Spec: not shown whether `input` may be null; the emulator treats null like an absent input (pydantic Optional).
const OptionalInput = WorkflowInput.nullish();

/** Spec: not shown whether a body is required; every field is optional, so none is accepted too. */
export const WorkflowTrigger = wire(z.object({ input: OptionalInput }).optional());
export type WorkflowTrigger = z.output<typeof WorkflowTrigger>;

// Spec: not shown; the emulator takes a temporary block as `{ name, action: <Action GUID> }`.
const PlaygroundBlock = z.object({
  name: z.string().min(1),
  action: Guid,
});

export const WorkflowPlayground = wire(
  z.object({
    workflow: Guid,
    input: OptionalInput,
    blocks: z.array(PlaygroundBlock).optional(),
  }),
);
export type WorkflowPlayground = z.output<typeof WorkflowPlayground>;

/** The trigger response (the playground answers the same shape). */
export const WorkflowTriggered = wire(
  z.object({
    msg: z.literal("Workflow triggered"),
    status: z.literal("success"),
    blocks: z.array(
      z.object({
        feedback_url: z.string(),
        data_guid: Guid,
        result_url: z.string(),
        action: z.object({ guid: Guid, name: z.string() }),
      }),
    ),
    run_guid: Guid,
    has_output_block: z.boolean(),
  }),
);
export type WorkflowTriggered = z.output<typeof WorkflowTriggered>;

export const WorkflowResult = wire(z.object({ result: z.string() }));
export type WorkflowResult = z.output<typeof WorkflowResult>;

/** The Dataset variant of a run result; `final` is always "" (a documented quirk of the service). */
export const WorkflowDatasetResult = wire(
  z.object({
    final: z.literal(""),
    // Spec: not shown which GUID a block carries; the emulator gives the block's own GUID.
    blocks: z.array(z.object({ guid: Guid, name: z.string(), output: z.string() })),
  }),
);
export type WorkflowDatasetResult = z.output<typeof WorkflowDatasetResult>;

export const workflowEndpoints = {
  /** Spec: no element fields shown; the emulator answers whole Workflows, a bare array honouring skip/limit. */
  ofApp: endpoint({ method: "GET", path: "/apps/{guid}/workflows", response: WorkflowCodec, list: "bare" }),
  /** Spec: guid, name, slug, timestamps, creator (record only, no blocks). */
  create: endpoint({ method: "POST", path: "/workflows", body: WorkflowCreate, response: WorkflowCodec }),
  get: endpoint({ method: "GET", path: "/workflows/{guid}", response: WorkflowCodec }),
  /** Spec: response not shown; the emulator answers the updated Workflow (the client relies on nothing in it: it reads the Workflow back). */
  update: endpoint({ method: "PUT", path: "/workflows/{guid}", body: WorkflowUpdate, response: WorkflowCodec, shown: false }),
  /** Spec: response not shown ("soft delete"); the emulator answers `{ message: "Workflow <guid> deleted" }`. */
  delete: endpoint({ method: "DELETE", path: "/workflows/{guid}", response: DeleteMessage, shown: false }),
  trigger: endpoint({ method: "POST", path: "/workflows/{guid}/trigger", body: WorkflowTrigger, response: WorkflowTriggered }),
  /** Spec: response not shown; the emulator answers the trigger's shape for the run it records. */
  playground: endpoint({
    method: "POST",
    path: "/workflows/playground",
    body: WorkflowPlayground,
    response: WorkflowTriggered,
    shown: false,
  }),
  /** The spec writes `{run_guid}`; the parameter is named `runGuid` here (the name a malformed one is reported under). */
  result: endpoint({ method: "GET", path: "/workflows/{guid}/result/{runGuid}", response: WorkflowResult }),
  datasetResult: endpoint({ method: "GET", path: "/workflows/{guid}/result/{runGuid}/dataset", response: WorkflowDatasetResult }),
};
