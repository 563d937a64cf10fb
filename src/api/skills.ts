import { z } from "zod";
import { UnnamedAuditFields, Guid } from "./common";

/**
 * One metadata entry of a Skill: a named setting, whether it is required, its value (any JSON; the key
 * must be present, the spec marks only `type` optional) and its value type.
 */
export const SkillMetadataEntry = z.object({
  name: z.string(),
  required: z.boolean(),
  value: z.unknown(),
  type: z.string().optional(),
});
export type SkillMetadataEntry = z.infer<typeof SkillMetadataEntry>;

export const Skill = z.object({
  guid: Guid,
  name: z.string(),
  type: z.string(),
  metadata: z.array(SkillMetadataEntry).nullable(),
  ...UnnamedAuditFields,
});
export type Skill = z.infer<typeof Skill>;

/**
 * A Skill type with the metadata definitions its Skills use. The spec does not show this shape; it is
 * the emulator's.
 */
export const SkillType = z.object({
  name: z.string(),
  metadata: z.array(z.object({ name: z.string(), required: z.boolean(), type: z.string().nullable() })),
});
export type SkillType = z.infer<typeof SkillType>;

export const SkillCreate = z.object({
  name: z.string().min(1),
  type: z.string().min(1),
  metadata: z.array(SkillMetadataEntry).nullable().optional(),
  /** Older clients' name of `metadata`. */
  meta_data: z.array(SkillMetadataEntry).nullable().optional(),
});
export type SkillCreate = z.infer<typeof SkillCreate>;

/** PUT renames; `type` and `metadata` are not replaced even when sent. */
export const SkillUpdate = z.object({ name: z.string().min(1) });
export type SkillUpdate = z.infer<typeof SkillUpdate>;

/** `prompt` is the only accepted field: no streaming, async, Session or structured-output options. */
export const SkillPrompt = z.strictObject({ prompt: z.string() });
export type SkillPrompt = z.infer<typeof SkillPrompt>;

export const SkillPromptResponse = z.object({ msg: z.string() });
export type SkillPromptResponse = z.infer<typeof SkillPromptResponse>;
