import { z } from "zod";
import { UnnamedAuditFields, Guid } from "./common";

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

/** Spec: field names not shown; the emulator takes the create names, at least one of them. */
export const ExperimentUpdate = z
  .object({
    name: z.string().min(1).optional(),
    primary_action: Guid.optional(),
    secondary_action: Guid.optional(),
  })
  .refine((body) => body.name !== undefined || body.primary_action !== undefined || body.secondary_action !== undefined, {
    error: "name, primary_action or secondary_action is required",
  });
export type ExperimentUpdate = z.infer<typeof ExperimentUpdate>;
