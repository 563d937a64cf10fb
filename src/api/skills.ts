import { z } from "zod";
import { type GmsClient, listIgnoringPaging, path } from "../client";
import { type FindCreated, UnnamedAuditFields, Guid } from "./common";

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

/** A Skill as the code uses it. */
export type SkillRecord = {
  guid: string;
  name: string;
  type: string;
  metadata: SkillMetadataEntry[] | null;
  createdAt: string | undefined;
  updatedAt: string | undefined;
};

export const toSkillRecord = (skill: Skill): SkillRecord => ({
  guid: skill.guid,
  name: skill.name,
  type: skill.type,
  metadata: skill.metadata,
  createdAt: skill.created_at,
  updatedAt: skill.updated_at,
});

export const skillsApi = {
  /** The service ignores skip/limit and answers every Skill at once. */
  async list(client: GmsClient): Promise<SkillRecord[]> {
    return (await listIgnoringPaging(client, { path: path`/skills`, item: Skill })).map(toSkillRecord);
  },
  /**
   * Create copies the configured Skill of the same name, so every Skill made under one name shares its
   * name and type: the matching Skills are listed before the POST, and only what was not among them can
   * be the new one.
   */
  async create(client: GmsClient, body: SkillCreate, findCreated: FindCreated): Promise<SkillRecord> {
    return toSkillRecord(
      await client.create({
        path: path`/skills`,
        body,
        schema: Skill,
        findCreated,
        listBeforeCreate: true,
        identity: [body.name, body.type],
      }),
    );
  },
  async get(client: GmsClient, guid: string): Promise<SkillRecord> {
    return toSkillRecord(await client.request({ method: "GET", path: path`/skills/${guid}`, schema: Skill }));
  },
  /** PUT renames only, and answers the Skill. */
  async update(client: GmsClient, guid: string, body: SkillUpdate): Promise<SkillRecord> {
    return toSkillRecord(await client.request({ method: "PUT", path: path`/skills/${guid}`, body, schema: Skill }));
  },
  async delete(client: GmsClient, guid: string): Promise<void> {
    await client.request({ method: "DELETE", path: path`/skills/${guid}`, schema: z.unknown() });
  },
  /** The workspace's Skill types: a bare array. */
  types(client: GmsClient): Promise<SkillType[]> {
    return client.request({ method: "GET", path: path`/skills/types`, schema: z.array(SkillType) });
  },
};
