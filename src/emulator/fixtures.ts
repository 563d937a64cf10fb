/**
 * Fixtures: what the public interface cannot create (workspaces with their API keys and limits, Actions with their environments,
 * Workflows with their blocks, Data records, Contexts, pre-configured Skills, Eval types), loaded from YAML. Loading is
 * idempotent: a workspace whose API key is already in the database is left as it is, so a restart on the
 * same file with the same fixtures duplicates nothing; only if its key holder deleted it is it restored
 * (with its records and key), because the fixtures declare it and the key must select it again.
 */
import { z } from "zod";
import { Guid } from "../api/common";
import type { Store } from "./store";
import { FEATURES } from "./store/workspaces";
import { slugify } from "./store/records";
import { issueMessage, REPORT_INPUT, readYamlFile, YamlFileError } from "../yaml-file";

/** A map of the fixtures that takes no other fields; an unknown one is named with the fields there are. */
function strict<S extends z.core.$ZodLooseShape>(shape: S, what: string) {
  const fields = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) => (issue.code === "unrecognized_keys" ? `is not a field of ${what}; its fields are ${fields}` : undefined),
  });
}

/** A required name: present and not empty. */
const nameOf = (what: string) => z.string().min(1, `must not be empty: the ${what}'s name`);

export const MIN_API_KEY_LENGTH = 8;

/**
 * An Action. Its variables are the `{{...}}` placeholders of `prompt`; `environments` lists where it is
 * deployed (runs name one of them), `Production` only when left out.
 */
const ActionFixture = strict(
  {
    guid: Guid.optional(),
    name: nameOf("Action"),
    prompt: z.string(),
    model: z.string().nullable().optional(),
    type: z.string().optional(),
    environments: z
      .array(z.string().min(1, "must not be empty: an environment's name, e.g. Production"))
      .min(1, "must list at least one environment (leave it out for Production only)")
      .optional(),
  },
  "an Action",
);

/** A Workflow with its ordered blocks; each block names an Action of the same App. */
const WorkflowFixture = strict(
  {
    guid: Guid.optional(),
    name: nameOf("Workflow"),
    blocks: z.array(strict({ guid: Guid.optional(), name: nameOf("block"), action: z.string().min(1) }, "a Workflow block")).default([]),
  },
  "a Workflow",
);

/** A Data record (generations logged before the workspace was declared); `action` names an Action of the App. */
const DataValue = z.union([z.string(), z.array(z.unknown()), z.record(z.string(), z.unknown())], {
  error: (issue) => (issue.input === undefined ? undefined : "must be a string, a list or a map"),
});
const DataFixture = strict(
  {
    guid: Guid.optional(),
    action: z.string().min(1),
    input: DataValue,
    output: DataValue,
    model: z.string().optional(),
  },
  "a Data record",
);

const AppFixture = strict(
  {
    guid: Guid.optional(),
    name: nameOf("App"),
    description: z.string().nullable().optional(),
    actions: z.array(ActionFixture).default([]),
    workflows: z.array(WorkflowFixture).default([]),
    data: z.array(DataFixture).default([]),
  },
  "an App",
).superRefine((app, context) => {
  const actions = new Set(app.actions.map((action) => action.name));
  const check = (name: string, path: (string | number)[]) => {
    if (!actions.has(name)) {
      const known = [...actions].map((action) => `"${action}"`).join(", ") || "none";
      context.addIssue({ code: "custom", path, message: `unknown Action "${name}" of App "${app.name}" (its Actions: ${known})` });
    }
  };
  app.workflows.forEach((workflow, w) =>
    workflow.blocks.forEach((block, b) => check(block.action, ["workflows", w, "blocks", b, "action"])),
  );
  app.data.forEach((record, d) => check(record.action, ["data", d, "action"]));
});

const SkillMetadataFixture = strict(
  {
    name: z.string(),
    required: z.boolean().default(false),
    value: z.unknown().optional(),
    type: z.string().optional(),
  },
  "a Skill metadata entry",
);

const SLUG = /^[a-z0-9][a-z0-9-]*$/;

const WorkspaceFixture = strict(
  {
    guid: Guid.optional(),
    name: nameOf("workspace"),
    slug: z.string().regex(SLUG, {
      error: (issue) =>
        `must be lowercase letters, digits and dashes, starting with a letter or digit` +
        (typeof issue.input === "string" ? ` (e.g. ${slugify(issue.input)})` : ""),
    }),
    apiKey: z
      .string()
      .min(MIN_API_KEY_LENGTH, `must be at least ${MIN_API_KEY_LENGTH} characters: the key that selects this workspace, e.g. gms_acme_key`),
    limits: z
      .partialRecord(
        z.enum(FEATURES),
        z
          .number({ error: "must be a whole number, 0 or more" })
          .int("must be a whole number, 0 or more")
          .min(0, "must be a whole number, 0 or more"),
        {
          error: (issue) =>
            // An enum-keyed record reports an unknown key as unrecognized_keys (its types say otherwise).
            (issue.code as string) === "unrecognized_keys"
              ? `is not a feature with a limit; the features are ${FEATURES.join(", ")}`
              : undefined,
        },
      )
      .optional(),
    apps: z.array(AppFixture).default([]),
    contexts: z.array(strict({ guid: Guid.optional(), name: nameOf("Context") }, "a Context")).default([]),
    skills: z
      .array(
        strict(
          {
            guid: Guid.optional(),
            name: nameOf("Skill"),
            type: z.string().min(1, "must not be empty: the Skill's type, e.g. web"),
            metadata: z.array(SkillMetadataFixture).optional(),
          },
          "a Skill",
        ),
      )
      .default([]),
  },
  "a workspace",
);

export const Fixtures = strict(
  {
    workspaces: z.array(WorkspaceFixture).default([]),
    evalTypes: z
      .array(strict({ guid: Guid.optional(), name: nameOf("Eval type"), description: z.string().optional() }, "an Eval type"))
      .default([]),
  },
  "the fixtures",
).superRefine((fixtures, context) => {
  // Two workspaces with one slug cannot both be made; two with one key would select one workspace (the
  // second would be skipped as already loaded). Neither is caught later with the path that says where.
  const slugs = new Map<string, number>();
  const keys = new Map<string, number>();
  fixtures.workspaces.forEach((workspace, index) => {
    const slugAt = slugs.get(workspace.slug);
    if (slugAt === undefined) slugs.set(workspace.slug, index);
    else
      context.addIssue({
        code: "custom",
        path: ["workspaces", index, "slug"],
        message: `is workspaces[${slugAt}]'s slug too; slugs must differ`,
      });
    const keyAt = keys.get(workspace.apiKey);
    if (keyAt === undefined) keys.set(workspace.apiKey, index);
    else
      context.addIssue({
        code: "custom",
        path: ["workspaces", index, "apiKey"],
        message: `is workspaces[${keyAt}]'s key too; each workspace needs its own`,
      });
  });
});
export type Fixtures = z.input<typeof Fixtures>;

/**
 * What a required field left out is, by its place (indices left out): "is required" says which field, this
 * says what to put there.
 */
const REQUIRED_HINTS: Record<string, string> = {
  "workspaces.name": "the workspace's display name, e.g. Acme",
  "workspaces.slug": "the workspace's slug: lowercase letters, digits and dashes, e.g. acme",
  "workspaces.apiKey": `the key that selects this workspace, at least ${MIN_API_KEY_LENGTH} characters, e.g. gms_acme_key`,
  "workspaces.apps.name": "the App's name",
  "workspaces.apps.actions.name": "the Action's name (blocks and data name it)",
  "workspaces.apps.actions.prompt": "the Action's prompt; its {{...}} placeholders are its variables",
  "workspaces.apps.workflows.name": "the Workflow's name",
  "workspaces.apps.workflows.blocks.name": "the block's name",
  "workspaces.apps.workflows.blocks.action": "the name of an Action of the same App",
  "workspaces.apps.data.action": "the name of an Action of the same App",
  "workspaces.apps.data.input": "a string, a list or a map",
  "workspaces.apps.data.output": "a string, a list or a map",
  "workspaces.contexts.name": "the Context's name",
  "workspaces.skills.name": "the Skill's name (Skill create resolves it)",
  "workspaces.skills.type": "the Skill's type, e.g. web",
  "workspaces.skills.metadata.name": "the metadata entry's name",
  "evalTypes.name": "the Eval type's name",
};

/** `workspaces[1].apiKey`: a path as the fixture file reads, list positions in brackets (from 0). */
export function fixturePath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, segment) => {
    if (typeof segment === "number" || /^\d+$/.test(String(segment))) return `${text}[${String(segment)}]`;
    return text ? `${text}.${String(segment)}` : String(segment);
  }, "");
}

/** A message with the fix for a required field left out. */
function withHint(path: readonly PropertyKey[], message: string): string {
  if (message !== "is required") return message;
  const hint = REQUIRED_HINTS[path.filter((segment) => typeof segment !== "number" && !/^\d+$/.test(String(segment))).join(".")];
  return hint ? `is required: ${hint}` : message;
}

export class FixturesError extends Error {
  override readonly name = "FixturesError";
}

/**
 * Reads and validates a fixtures YAML file; each problem is `file:line:column: path: message`, the path as
 * the file reads (`workspaces[1].apiKey: must be at least 8 characters: ...`).
 */
export function readFixturesFile(path: string): z.output<typeof Fixtures> {
  try {
    return readYamlFile(path, Fixtures);
  } catch (error) {
    if (!(error instanceof YamlFileError)) throw error;
    throw new YamlFileError(
      error.source,
      error.problems.map((problem) => {
        const segments = problem.path ? problem.path.split(".") : [];
        return { ...problem, path: fixturePath(segments), message: withHint(segments, problem.message) };
      }),
    );
  }
}

function validate(value: unknown, source: string): z.output<typeof Fixtures> {
  const result = Fixtures.safeParse(value ?? {}, REPORT_INPUT);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]!] : issue.path;
      return `  ${fixturePath(path) || "(root)"}: ${withHint(path, issueMessage(issue))}`;
    });
    throw new FixturesError(`${source}: invalid fixtures\n${lines.join("\n")}`);
  }
  return result.data;
}

/** Loads fixtures into the store; returns the API keys of the workspaces they declare. */
export function loadFixtures(store: Store, input: Fixtures | z.output<typeof Fixtures>): string[] {
  const fixtures = validate(input, "fixtures");
  return store.db.transaction(() => {
    for (const evalType of fixtures.evalTypes) store.evals.ensureType(evalType);
    for (const workspace of fixtures.workspaces) {
      if (store.workspaces.restoreByKey(workspace.apiKey)) continue;
      const caller = store.workspaces.createWithKey(workspace);
      for (const app of workspace.apps) {
        const record = store.apps.create(caller, app);
        const actionGuids = new Map<string, string>();
        for (const action of app.actions) {
          actionGuids.set(action.name, store.actions.create(caller, { ...action, app: record.guid, actionType: action.type }).guid);
        }
        for (const workflow of app.workflows) {
          const blocks = workflow.blocks.map((block) => ({
            guid: block.guid,
            name: block.name,
            actionGuid: actionGuids.get(block.action)!,
          }));
          store.workflows.createFixture(caller, { guid: workflow.guid, app: record.guid, name: workflow.name, blocks });
        }
        for (const data of app.data) {
          store.data.create(caller, {
            guid: data.guid,
            action: actionGuids.get(data.action)!,
            app: record.guid,
            input: data.input,
            output: data.output,
            model: data.model,
          });
        }
      }
      for (const context of workspace.contexts) store.contexts.create(caller, context);
      for (const skill of workspace.skills) store.skills.createConfigured(caller, skill);
    }
    return fixtures.workspaces.map((workspace) => workspace.apiKey);
  });
}
