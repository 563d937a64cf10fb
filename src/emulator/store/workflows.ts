import { type StoredAction, type ActionStore, PLACEHOLDER } from "./actions";
import { RecordTable, type StoredRecord, integer, table, text } from "./columns";
import { storeModule } from "./module";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Caller, type Page, RECORD_COLUMNS, createdBy, newGuid, slugify, updatedBy } from "./records";
import type { AppStore } from "./apps";
import type { DataStore } from "./data";
import type { WorkspaceStore } from "./workspaces";

/** One object of a run's input: keys to a string, a nested object or null. */
export type WorkflowInputObject = Record<string, string | null | Record<string, unknown>>;

export interface WorkflowRunRecord {
  guid: string;
  workflowGuid: string;
  blocks: RunBlockRecord[];
}

/** A block about to run: stored blocks keep their GUID, playground blocks get a fresh one. */
interface RunnableBlock {
  guid: string;
  name: string;
  action: StoredAction;
}

/** The tables of Workflows, their blocks, their runs and what each block of a run produced. */
export const WORKFLOWS = table("workflows", {
  id: integer,
  guid: text,
  workspace_id: integer,
  app_id: integer,
  name: text,
  slug: text,
  ...RECORD_COLUMNS,
});

export const WORKFLOW_BLOCKS = table("workflow_blocks", {
  id: integer,
  guid: text,
  workspace_id: integer,
  workflow_id: integer,
  position: integer,
  name: text,
  action_id: integer,
  ...RECORD_COLUMNS,
});

export const WORKFLOW_RUNS = table("workflow_runs", {
  id: integer,
  guid: text,
  workspace_id: integer,
  workflow_id: integer,
  ...RECORD_COLUMNS,
});

export const WORKFLOW_RUN_BLOCKS = table("workflow_run_blocks", {
  id: integer,
  guid: text,
  workspace_id: integer,
  run_id: integer,
  position: integer,
  block_guid: text,
  name: text,
  action_guid: text,
  action_name: text,
  data_guid: text,
  output: text,
  ...RECORD_COLUMNS,
});

const RECORDS = new RecordTable(WORKFLOWS, { joins: "JOIN apps p ON p.id = workflows.app_id", derived: { app: ["p.guid", text] } });
const BLOCKS = new RecordTable(WORKFLOW_BLOCKS, {
  joins: "JOIN actions a ON a.id = workflow_blocks.action_id",
  derived: { action: ["a.guid", text] },
});
const RUNS = new RecordTable(WORKFLOW_RUNS);
const RUN_BLOCKS = new RecordTable(WORKFLOW_RUN_BLOCKS);

/** A Workflow (blocks are never part of it), its App's GUID as `app`. */
export type StoredWorkflow = StoredRecord<typeof RECORDS>;

/** What one block of a run produced: the block it ran, its Action, the generated Data record and the output. */
export type RunBlockRecord = Pick<
  StoredRecord<typeof RUN_BLOCKS>,
  "blockGuid" | "name" | "actionGuid" | "actionName" | "dataGuid" | "output"
>;

/**
 * Workflows and their ordered blocks. The public interface cannot create blocks, so they come from
 * fixtures (`createFixture`). A run executes every non-deleted block in order, each generating one Data
 * record; the emulator completes the run at once, so result URLs answer immediately.
 */
export class WorkflowStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: {
      readonly actions: ActionStore;
      readonly apps: AppStore;
      readonly data: DataStore;
      readonly workspaces: WorkspaceStore;
    },
  ) {}

  /** Creates a Workflow record without blocks; 429 when the workspace allowance is used up. */
  create(caller: Caller, input: { app: string; name: string; guid?: string | undefined }): StoredWorkflow {
    return this.db.transaction(() => {
      const app = this.store.apps.get(caller, input.app);
      this.store.workspaces.reserve(caller, "workflows");
      const stamp = this.db.clock.iso();
      // Spec: not shown whether slugs are unique; the emulator derives them from the name and allows repeats.
      const id = RECORDS.insert(this.db, {
        ...createdBy(caller, stamp),
        guid: input.guid ?? newGuid(),
        appId: app.id,
        name: input.name,
        slug: slugify(input.name),
      });
      return RECORDS.find(this.db, { id })!;
    });
  }

  /** Fixture loading only: a Workflow with its ordered blocks, each running an Action of the same App. */
  createFixture(
    caller: Caller,
    input: {
      app: string;
      name: string;
      guid?: string | undefined;
      blocks: { name: string; actionGuid: string; guid?: string | undefined }[];
    },
  ): StoredWorkflow {
    return this.db.transaction(() => {
      const workflow = this.create(caller, input);
      input.blocks.forEach((block, position) => {
        const action = this.store.actions.get(caller, block.actionGuid);
        BLOCKS.insert(this.db, {
          ...createdBy(caller, this.db.clock.iso()),
          guid: block.guid ?? newGuid(),
          workflowId: workflow.id,
          position,
          name: block.name,
          actionId: action.id,
        });
      });
      return workflow;
    });
  }

  /** A non-deleted Workflow of the caller's workspace; otherwise 404 `Workflow not found`. */
  get(caller: Caller, guid: string): StoredWorkflow {
    const workflow = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
    if (!workflow) throw new RecordNotFoundError("Workflow not found");
    return workflow;
  }

  /** The non-deleted Workflows of an App, oldest first (404 when the App is missing or deleted). */
  listByApp(caller: Caller, appGuid: string, page: Page): StoredWorkflow[] {
    const app = this.store.apps.get(caller, appGuid);
    return RECORDS.page(this.db, { appId: app.id, deletedAt: null }, page).items;
  }

  /** Renames the Workflow; the slug keeps the value it was created with. */
  update(caller: Caller, guid: string, input: { name: string }): StoredWorkflow {
    const workflow = this.get(caller, guid);
    RECORDS.update(this.db, workflow.id, { name: input.name, ...updatedBy(caller, this.db.clock.iso()) });
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): StoredWorkflow {
    const workflow = this.get(caller, guid);
    RECORDS.update(this.db, workflow.id, { deletedAt: this.db.clock.iso() });
    return workflow;
  }

  /** Runs the stored non-deleted blocks in order; 404 `Workflow has no blocks` when there are none. */
  trigger(caller: Caller, guid: string, input: WorkflowInputObject[] | undefined): WorkflowRunRecord {
    const workflow = this.get(caller, guid);
    return this.execute(caller, workflow, this.storedBlocks(caller, workflow), input);
  }

  /**
   * Runs the Workflow with temporary blocks when given (each naming an Action of the workspace) instead of
   * the stored ones. The temporary blocks are not kept; the run and its Data records are.
   */
  playground(
    caller: Caller,
    guid: string,
    input: WorkflowInputObject[] | undefined,
    blocks: { name: string; actionGuid: string }[] | undefined,
  ): WorkflowRunRecord {
    const workflow = this.get(caller, guid);
    // Spec: not shown; the emulator treats a given `blocks` array (even an empty one) as replacing the stored blocks.
    const runnable =
      blocks === undefined
        ? this.storedBlocks(caller, workflow)
        : blocks.map((block) => ({ guid: newGuid(), name: block.name, action: this.store.actions.get(caller, block.actionGuid) }));
    return this.execute(caller, workflow, runnable, input);
  }

  /** A run of the Workflow: 404 `Workflow not found` or `Run not found`. */
  run(caller: Caller, guid: string, runGuid: string): WorkflowRunRecord {
    const workflow = this.get(caller, guid);
    const run = RUNS.find(this.db, { guid: runGuid, workflowId: workflow.id, deletedAt: null });
    if (!run) throw new RecordNotFoundError("Run not found");
    const blocks = RUN_BLOCKS.list(this.db, { runId: run.id, deletedAt: null }, ["position"]);
    return { guid: runGuid, workflowGuid: workflow.guid, blocks };
  }

  private storedBlocks(caller: Caller, workflow: StoredWorkflow): RunnableBlock[] {
    return BLOCKS.list(this.db, { workflowId: workflow.id, deletedAt: null }, ["position", "id"]).map((block) => ({
      guid: block.guid,
      name: block.name,
      action: this.store.actions.get(caller, block.action),
    }));
  }

  /** Records a run: one Data record per block, in order, each with the block's emulated output. */
  private execute(
    caller: Caller,
    workflow: StoredWorkflow,
    blocks: RunnableBlock[],
    input: WorkflowInputObject[] | undefined,
  ): WorkflowRunRecord {
    if (blocks.length === 0) throw new RecordNotFoundError("Workflow has no blocks");
    return this.db.transaction(() => {
      const runGuid = newGuid();
      const stamp = this.db.clock.iso();
      const runId = RUNS.insert(this.db, { ...createdBy(caller, stamp), guid: runGuid, workflowId: workflow.id });
      const results = blocks.map((block, position): RunBlockRecord => {
        const output = emulatedOutput(block.action.prompt, input?.[0]);
        // Spec: not shown what a block's Data input is; the emulator stores the run input as sent ([] when absent).
        const data = this.store.data.create(caller, {
          action: block.action.guid,
          app: workflow.app,
          input: input ?? [],
          output,
          model: block.action.model,
          runId: runGuid,
        });
        const result = {
          blockGuid: block.guid,
          name: block.name,
          actionGuid: block.action.guid,
          actionName: block.action.name,
          dataGuid: data.guid,
          output,
        };
        RUN_BLOCKS.insert(this.db, { ...createdBy(caller, stamp), ...result, guid: newGuid(), runId, position });
        return result;
      });
      return { guid: runGuid, workflowGuid: workflow.guid, blocks: results };
    });
  }
}

/**
 * The emulator generates nothing: a block's output is its Action's prompt with each `{{variable}}` filled
 * from the first input object (strings as they are, nested objects as JSON, null as ""). Placeholders the
 * input does not name stay as written. Deterministic, so tests and previews can predict it.
 */
export function emulatedOutput(prompt: string, values: WorkflowInputObject | undefined): string {
  return prompt.replace(PLACEHOLDER, (placeholder, name: string) => {
    if (!values || !Object.hasOwn(values, name)) return placeholder;
    const value = values[name];
    return value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
  });
}

/** Opened by the Store as `store.workflows` (./module.ts). */
export const workflowStore = storeModule(WorkflowStore, [WORKFLOWS, WORKFLOW_BLOCKS, WORKFLOW_RUNS, WORKFLOW_RUN_BLOCKS]);
