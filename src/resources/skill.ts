/**
 * Skill: a configured capability of the workspace. Skills are configured outside the public interface:
 * the service's create only succeeds under the name of a Skill that already exists, so the usual way to
 * manage one is to adopt it by GUID. Only `name` changes in place. Its operations are derived from its endpoint
 * entries (src/api/skills.ts); its quirks: a lost create is told from the Skills of its name and type that existed
 * before the POST, every PUT requires the name, and a refused create lists the Skills and types that are configured.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { listAll } from "../api/endpoint";
import { skillEndpoints, skillsApi } from "../api/skills";
import { type GmsClient, NotFoundError } from "../client";
import { failure, failureText } from "../provider/errors";
import { computed, replaceOnly, updatable } from "../provider/fields";
import { GmsResource, type KindArgs, type KindOutputs } from "../provider/resource";
import { restKind } from "../provider/rest";
import * as shim from "../shims/skill";

const MetadataEntry = z.strictObject({
  name: z.string().min(1, "must not be empty"),
  required: z.boolean(),
  value: z.unknown(),
  type: z.string().min(1, "must not be empty").optional(),
});

/** A Skill as a failed create names it. */
const named = (inputs: { name?: string | undefined; type?: string | undefined }) => `Skill "${inputs.name}" (type "${inputs.type}")`;

export const skillKind = restKind(
  {
    name: "Skill",
    description:
      "A Skill of the workspace. Skills are configured outside the public interface: create succeeds only " +
      "under the name of an already configured Skill, so bring an existing Skill under management by its GUID instead (the import resource option).",
    quirks: [
      "The service resolves a new Skill's type by looking up an existing Skill of the same name, and answers 404 `Type not found` otherwise: new " +
        "Skills are configured outside the public interface.",
      "The service's update takes only the name: another type or metadata replaces the Skill.",
    ],
    workspaceSection: "Skills, by logical name (create succeeds only under the name of a Skill configured in the workspace).",
    identity: [["name"]],
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
  },
  skillEndpoints,
  {
    label: named,
    // Create copies the configured Skill of the same name, so every Skill made under one name shares its name and type:
    // only the creation time, and not having been listed before the POST, tell the new one from its template.
    matchOn: ["name", "type"],
    listBeforeCreate: true,
    // The only field PUT accepts, and it requires it.
    alwaysSent: ["name"],
    async explain(client, error, operation, inputs) {
      if (operation === "update") return error;
      // The service's quirk: create looks up an existing Skill by name and answers 404 `Type not found` without one.
      const explanation = error instanceof NotFoundError ? await whatIsConfigured(client) : undefined;
      return failure(`Cannot create ${named(inputs)}`, error, explanation);
    },
  },
);

/** The explanation of a refused create, with the Skills and types the workspace has. */
async function whatIsConfigured(client: GmsClient): Promise<string> {
  const explanation =
    "Skills and their types are configured outside the public interface: the service creates a Skill only under the name of a Skill " +
    "that is already configured in the workspace. Use one of those names, or pass an existing Skill's GUID as `adopt` to manage it.";
  try {
    const [skills, types] = await Promise.all([listAll(client, skillEndpoints.list), skillsApi.types(client)]);
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
