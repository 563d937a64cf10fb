/** The Skill endpoints: the Skills of the workspace, their types, and prompting one. */
import { z } from "zod";
import type { GmsClient } from "../client";
import { DeleteMessage, Guid, UnnamedAuditFields } from "./common";
import { call, endpoint } from "./endpoint";
import { wire } from "./wire";

/**
 * One metadata entry of a Skill: a named setting, whether it is required, its value (any JSON; the key
 * must be present, the spec marks only `type` optional) and its value type.
 */
const SkillMetadataEntryWire = z.object({
  name: z.string(),
  required: z.boolean(),
  value: z.unknown(),
  type: z.string().optional(),
});
export const SkillMetadataEntry = wire(SkillMetadataEntryWire);
export type SkillMetadataEntry = z.output<typeof SkillMetadataEntry>;

export const Skill = wire(
  z.object({
    guid: Guid,
    name: z.string(),
    type: z.string(),
    metadata: z.array(SkillMetadataEntryWire).nullable(),
    ...UnnamedAuditFields,
  }),
);

/**
 * A Skill type with the metadata definitions its Skills use. The spec does not show this shape; it is
 * the emulator's.
 */
export const SkillType = wire(
  z.object({
    name: z.string(),
    metadata: z.array(z.object({ name: z.string(), required: z.boolean(), type: z.string().nullable() })),
  }),
);
export type SkillType = z.output<typeof SkillType>;

export const SkillCreate = wire(
  z.object({
    name: z.string().min(1),
    type: z.string().min(1),
    metadata: z.array(SkillMetadataEntryWire).nullable().optional(),
    /** Older clients' name of `metadata`. */
    meta_data: z.array(SkillMetadataEntryWire).nullable().optional(),
  }),
);

/** PUT renames; `type` and `metadata` are not replaced even when sent. */
export const SkillUpdate = wire(z.object({ name: z.string().min(1) }));

/** `prompt` is the only accepted field: no streaming, async, Session or structured-output options. */
export const SkillPrompt = wire(z.strictObject({ prompt: z.string() }));
export type SkillPrompt = z.output<typeof SkillPrompt>;

export const SkillPromptResponse = wire(z.object({ msg: z.string() }));
export type SkillPromptResponse = z.output<typeof SkillPromptResponse>;

export const skillEndpoints = {
  /**
   * The envelope of every non-deleted Skill: skip and limit are accepted but not applied, and `has_next_page`
   * (computed as if they were) must not be relied on. Create copies the configured Skill of the same name, so
   * the Skill kind lists before its POST: only what was not among the Skills of that name and type can be the new one.
   */
  list: endpoint({ method: "GET", path: "/skills", response: Skill, list: "unpaged" }),
  /** Spec: exact shape not shown; the emulator answers a bare array of `SkillType`, with no paging. */
  types: endpoint({ method: "GET", path: "/skills/types", response: z.array(SkillType) }),
  create: endpoint({ method: "POST", path: "/skills", body: SkillCreate, response: Skill }),
  get: endpoint({ method: "GET", path: "/skills/{guid}", response: Skill }),
  update: endpoint({ method: "PUT", path: "/skills/{guid}", body: SkillUpdate, response: Skill }),
  /** Spec: response not shown; the emulator answers `{ message: "Skill <guid> deleted" }` (the Providers' shape). */
  delete: endpoint({ method: "DELETE", path: "/skills/{guid}", response: DeleteMessage, shown: false }),
  prompt: endpoint({ method: "POST", path: "/skills/{skill}/prompt", body: SkillPrompt, response: SkillPromptResponse }),
};

export const skillsApi = {
  /** The workspace's Skill types: a bare array. */
  types: (client: GmsClient): Promise<SkillType[]> => call(client, skillEndpoints.types),
};
