/**
 * Skill: a configured capability of the workspace. Skills are configured outside the public interface:
 * the service's create only succeeds under the name of a Skill that already exists, so the usual way to
 * manage one is to adopt it by GUID. Only `name` changes in place.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { skillsApi } from "../api/skills";
import { type CreatedCandidate, type GmsClient, NotFoundError } from "../client";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { defineKind } from "../provider/kind";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { failure, failureText } from "../provider/errors";
import * as shim from "../shims/skill";

const MetadataEntry = z.strictObject({
  name: z.string().min(1, "must not be empty"),
  required: z.boolean(),
  value: z.unknown(),
  type: z.string().min(1, "must not be empty").optional(),
});

export const skillKind = defineKind({
  name: "Skill",
  description:
    "A Skill of the workspace. Skills are configured outside the public interface: create succeeds only " +
    "under the name of an already configured Skill, so adopt an existing Skill by GUID to manage it.",
  inputs: {
    name: updatable(
      z.string().min(1, "must not be empty"),
      "The Skill's name. On create it must be the name of a Skill already configured in the workspace.",
      {
        required: true,
      },
    ),
    type: replaceOnly(z.string().min(1, "must not be empty"), "The Skill type, one of the types configured in the workspace.", {
      required: true,
    }),
    metadata: replaceOnly(
      z.array(MetadataEntry),
      "The Skill's settings as `{name, required, value, type?}` entries. Set on create only. When left out Pulumi leaves them alone.",
    ),
  },
  outputs: {
    guid: computed(z.string(), "The Skill's GUID."),
    createdAt: computed(z.string().optional(), "Creation time (ISO 8601), when the service reports it."),
    updatedAt: computed(z.string().optional(), "Last update time (ISO 8601), when the service reports it."),
  },
  async create(client, inputs) {
    const body = { name: inputs.name!, type: inputs.type!, metadata: inputs.metadata };
    try {
      return await skillsApi.create(client, body, () => findSkills(client, inputs));
    } catch (error) {
      // The service's quirk: create looks up an existing Skill by name and answers 404 `Type not found` without one.
      throw failure(
        `Cannot create Skill "${inputs.name}" (type "${inputs.type}")`,
        error,
        error instanceof NotFoundError ? await whatIsConfigured(client) : undefined,
      );
    }
  },
  findCreated: findSkills,
  async read(client, guid) {
    return skillsApi.get(client, guid);
  },
  async update(client, guid, news) {
    // PUT takes `name` only, the one updatable field, and answers the Skill.
    return skillsApi.update(client, guid, { name: news.name! });
  },
  async delete(client, guid) {
    await skillsApi.delete(client, guid);
  },
});

/** The Skills that match what a create sends (see Kind.findCreated). */
async function findSkills(
  client: GmsClient,
  inputs: { name?: string | undefined; type?: string | undefined },
): Promise<CreatedCandidate[]> {
  // Create copies an existing Skill of the same name, so only the creation time tells the new one from its template.
  const skills = await skillsApi.list(client);
  return skills
    .filter((skill) => skill.name === inputs.name && skill.type === inputs.type)
    .map((skill) => ({ guid: skill.guid, createdAt: skill.createdAt }));
}

/** The explanation of a refused create, with the Skills and types the workspace has. */
async function whatIsConfigured(client: GmsClient): Promise<string> {
  const explanation =
    "Skills and their types are configured outside the public interface: the service creates a Skill only under the name of a Skill " +
    "that is already configured in the workspace. Use one of those names, or pass an existing Skill's GUID as `adopt` to manage it.";
  try {
    const [skills, types] = await Promise.all([skillsApi.list(client), skillsApi.types(client)]);
    const skillList =
      skills.length > 0 ? skills.map((skill) => `"${skill.name}" (type ${skill.type}, guid ${skill.guid})`).join(", ") : "none";
    const typeList = types.length > 0 ? types.map((type) => type.name).join(", ") : "none";
    return `${explanation} Configured Skills: ${skillList}. Available Skill types: ${typeList}.`;
  } catch (error) {
    return `${explanation} (The configured Skills could not be listed: ${failureText(error)}.)`;
  }
}

export type SkillArgs = KindArgs<typeof skillKind>;
export interface Skill extends KindOutputs<typeof skillKind> {}
export class Skill extends GmsResource {
  constructor(name: string, args: SkillArgs, opts?: pulumi.CustomResourceOptions) {
    super(skillKind, shim, name, args, opts);
  }
}
