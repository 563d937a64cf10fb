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
import { readYamlFile } from "../yaml-file";

/**
 * An Action. Its variables are the `{{...}}` placeholders of `prompt`; `environments` lists where it is
 * deployed (runs name one of them), `Production` only when left out.
 */
const ActionFixture = z.strictObject({
  guid: Guid.optional(),
  name: z.string().min(1),
  prompt: z.string(),
  model: z.string().nullable().optional(),
  type: z.string().optional(),
  environments: z.array(z.string().min(1)).min(1).optional(),
});

/** A Workflow with its ordered blocks; each block names an Action of the same App. */
const WorkflowFixture = z.strictObject({
  guid: Guid.optional(),
  name: z.string().min(1),
  blocks: z.array(z.strictObject({ guid: Guid.optional(), name: z.string().min(1), action: z.string().min(1) })).default([]),
});

/** A Data record (generations logged before the workspace was declared); `action` names an Action of the App. */
const DataFixture = z.strictObject({
  guid: Guid.optional(),
  action: z.string().min(1),
  input: z.union([z.string(), z.array(z.unknown()), z.record(z.string(), z.unknown())]),
  output: z.union([z.string(), z.array(z.unknown()), z.record(z.string(), z.unknown())]),
  model: z.string().optional(),
});

const AppFixture = z
  .strictObject({
    guid: Guid.optional(),
    name: z.string().min(1),
    description: z.string().nullable().optional(),
    actions: z.array(ActionFixture).default([]),
    workflows: z.array(WorkflowFixture).default([]),
    data: z.array(DataFixture).default([]),
  })
  .superRefine((app, context) => {
    const actions = new Set(app.actions.map((action) => action.name));
    const check = (name: string, path: (string | number)[]) => {
      if (!actions.has(name)) context.addIssue({ code: "custom", path, message: `unknown Action "${name}" of App "${app.name}"` });
    };
    app.workflows.forEach((workflow, w) =>
      workflow.blocks.forEach((block, b) => check(block.action, ["workflows", w, "blocks", b, "action"])),
    );
    app.data.forEach((record, d) => check(record.action, ["data", d, "action"]));
  });

const SkillMetadataFixture = z.strictObject({
  name: z.string(),
  required: z.boolean().default(false),
  value: z.unknown().optional(),
  type: z.string().optional(),
});

const WorkspaceFixture = z.strictObject({
  guid: Guid.optional(),
  name: z.string().min(1),
  slug: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "lowercase letters, digits and dashes"),
  apiKey: z.string().min(8),
  limits: z.partialRecord(z.enum(FEATURES), z.number().int().min(0)).optional(),
  apps: z.array(AppFixture).default([]),
  contexts: z.array(z.strictObject({ guid: Guid.optional(), name: z.string().min(1) })).default([]),
  skills: z
    .array(
      z.strictObject({
        guid: Guid.optional(),
        name: z.string().min(1),
        type: z.string().min(1),
        metadata: z.array(SkillMetadataFixture).optional(),
      }),
    )
    .default([]),
});

export const Fixtures = z.strictObject({
  workspaces: z.array(WorkspaceFixture).default([]),
  evalTypes: z.array(z.strictObject({ guid: Guid.optional(), name: z.string().min(1), description: z.string().optional() })).default([]),
});
export type Fixtures = z.input<typeof Fixtures>;

export class FixturesError extends Error {
  override readonly name = "FixturesError";
}

/** Reads and validates a fixtures YAML file; errors name the file, line, column and field. */
export const readFixturesFile = (path: string): z.output<typeof Fixtures> => readYamlFile(path, Fixtures);

function validate(value: unknown, source: string): z.output<typeof Fixtures> {
  const result = Fixtures.safeParse(value ?? {});
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join(".") || "(root)"}: ${issue.message}`);
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
          actionGuids.set(action.name, store.actions.create(caller, { ...action, appGuid: record.guid, actionType: action.type }).guid);
        }
        for (const workflow of app.workflows) {
          const blocks = workflow.blocks.map((block) => ({
            guid: block.guid,
            name: block.name,
            actionGuid: actionGuids.get(block.action)!,
          }));
          store.workflows.createFixture(caller, { guid: workflow.guid, appGuid: record.guid, name: workflow.name, blocks });
        }
        for (const data of app.data) {
          store.data.create(caller, {
            guid: data.guid,
            actionGuid: actionGuids.get(data.action)!,
            appGuid: record.guid,
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
