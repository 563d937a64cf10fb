import { type ActionRecord, type ActionStore, PLACEHOLDER } from "./actions";
import { type RawRow, integer, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, RECORD_COLUMNS, audited, newGuid, slugify } from "./records";
import type { AppStore } from "./apps";
import type { DataStore } from "./data";
import type { WorkspaceStore } from "./workspaces";

export interface WorkflowRecord extends Audited {
  id: number;
  guid: string;
  appId: number;
  appGuid: string;
  name: string;
  slug: string;
}

/** One object of a run's input: keys to a string, a nested object or null. */
export type WorkflowInputObject = Record<string, string | null | Record<string, unknown>>;

/** What one block of a run produced: the block it ran, its Action, the generated Data record and the output. */
export interface RunBlockRecord {
  blockGuid: string;
  name: string;
  actionGuid: string;
  actionName: string;
  dataGuid: string;
  output: string;
}

export interface WorkflowRunRecord {
  guid: string;
  workflowGuid: string;
  blocks: RunBlockRecord[];
}

/** A block about to run: stored blocks keep their GUID, playground blocks get a fresh one. */
interface RunnableBlock {
  guid: string;
  name: string;
  action: ActionRecord;
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
  create(caller: Caller, input: { appGuid: string; name: string; guid?: string | undefined }): WorkflowRecord {
    return this.db.transaction(() => {
      const app = this.store.apps.get(caller, input.appGuid);
      this.store.workspaces.reserve(caller, "workflows");
      const stamp = this.db.clock.iso();
      // Spec: not shown whether slugs are unique; the emulator derives them from the name and allows repeats.
      const id = this.db.run(
        `INSERT INTO workflows (guid, workspace_id, app_id, name, slug, created_at, updated_at, created_by_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        input.guid ?? newGuid(),
        caller.workspaceId,
        app.id,
        input.name,
        slugify(input.name),
        stamp,
        stamp,
        caller.userId,
      );
      return toRecord(this.db.get(`${SELECT} WHERE w.id = ?`, id)!);
    });
  }

  /** Fixture loading only: a Workflow with its ordered blocks, each running an Action of the same App. */
  createFixture(
    caller: Caller,
    input: {
      appGuid: string;
      name: string;
      guid?: string | undefined;
      blocks: { name: string; actionGuid: string; guid?: string | undefined }[];
    },
  ): WorkflowRecord {
    return this.db.transaction(() => {
      const workflow = this.create(caller, input);
      input.blocks.forEach((block, position) => {
        const action = this.store.actions.get(caller, block.actionGuid);
        const stamp = this.db.clock.iso();
        this.db.run(
          `INSERT INTO workflow_blocks (guid, workspace_id, workflow_id, position, name, action_id, created_at, updated_at, created_by_id)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          block.guid ?? newGuid(),
          caller.workspaceId,
          workflow.id,
          position,
          block.name,
          action.id,
          stamp,
          stamp,
          caller.userId,
        );
      });
      return workflow;
    });
  }

  /** A non-deleted Workflow of the caller's workspace; otherwise 404 `Workflow not found`. */
  get(caller: Caller, guid: string): WorkflowRecord {
    const row = this.db.get(`${SELECT} WHERE w.guid = ? AND w.workspace_id = ? AND w.deleted_at IS NULL`, guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Workflow not found");
    return toRecord(row);
  }

  /** The non-deleted Workflows of an App, oldest first (404 when the App is missing or deleted). */
  listByApp(caller: Caller, appGuid: string, page: Page): WorkflowRecord[] {
    const app = this.store.apps.get(caller, appGuid);
    return this.db
      .all(`${SELECT} WHERE w.app_id = ? AND w.deleted_at IS NULL ORDER BY w.id LIMIT ? OFFSET ?`, app.id, page.limit, page.skip)
      .map(toRecord);
  }

  /** Renames the Workflow; the slug keeps the value it was created with. */
  update(caller: Caller, guid: string, input: { name: string }): WorkflowRecord {
    const workflow = this.get(caller, guid);
    this.db.run(
      "UPDATE workflows SET name = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      input.name,
      this.db.clock.iso(),
      caller.userId,
      workflow.id,
    );
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): WorkflowRecord {
    const workflow = this.get(caller, guid);
    this.db.run("UPDATE workflows SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), workflow.id);
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
    const found = this.db.get(
      "SELECT id FROM workflow_runs WHERE guid = ? AND workflow_id = ? AND deleted_at IS NULL",
      runGuid,
      workflow.id,
    );
    if (!found) throw new RecordNotFoundError("Run not found");
    const run = RUN_ID.decode(found);
    const blocks = this.db
      .all("SELECT * FROM workflow_run_blocks WHERE run_id = ? AND deleted_at IS NULL ORDER BY position", run.id)
      .map(toRunBlock);
    return { guid: runGuid, workflowGuid: workflow.guid, blocks };
  }

  private storedBlocks(caller: Caller, workflow: WorkflowRecord): RunnableBlock[] {
    return this.db
      .all(
        `SELECT b.guid, b.name, a.guid AS action_guid FROM workflow_blocks b JOIN actions a ON a.id = b.action_id
         WHERE b.workflow_id = ? AND b.deleted_at IS NULL ORDER BY b.position, b.id`,
        workflow.id,
      )
      .map((raw) => {
        const row = STORED_BLOCK.decode(raw);
        return { guid: row.guid, name: row.name, action: this.store.actions.get(caller, row.action_guid) };
      });
  }

  /** Records a run: one Data record per block, in order, each with the block's emulated output. */
  private execute(
    caller: Caller,
    workflow: WorkflowRecord,
    blocks: RunnableBlock[],
    input: WorkflowInputObject[] | undefined,
  ): WorkflowRunRecord {
    if (blocks.length === 0) throw new RecordNotFoundError("Workflow has no blocks");
    return this.db.transaction(() => {
      const runGuid = newGuid();
      const stamp = this.db.clock.iso();
      const runId = this.db.run(
        "INSERT INTO workflow_runs (guid, workspace_id, workflow_id, created_at, updated_at, created_by_id) VALUES (?, ?, ?, ?, ?, ?)",
        runGuid,
        caller.workspaceId,
        workflow.id,
        stamp,
        stamp,
        caller.userId,
      );
      const results = blocks.map((block, position): RunBlockRecord => {
        const output = emulatedOutput(block.action.prompt, input?.[0]);
        // Spec: not shown what a block's Data input is; the emulator stores the run input as sent ([] when absent).
        const data = this.store.data.create(caller, {
          actionGuid: block.action.guid,
          appGuid: workflow.appGuid,
          input: input ?? [],
          output,
          model: block.action.model,
          runId: runGuid,
        });
        this.db.run(
          `INSERT INTO workflow_run_blocks (guid, workspace_id, run_id, position, block_guid, name, action_guid, action_name, data_guid, output,
             created_at, updated_at, created_by_id)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          newGuid(),
          caller.workspaceId,
          runId,
          position,
          block.guid,
          block.name,
          block.action.guid,
          block.action.name,
          data.guid,
          output,
          stamp,
          stamp,
          caller.userId,
        );
        return {
          blockGuid: block.guid,
          name: block.name,
          actionGuid: block.action.guid,
          actionName: block.action.name,
          dataGuid: data.guid,
          output,
        };
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

const SELECT = "SELECT w.*, p.guid AS app_guid FROM workflows w JOIN apps p ON p.id = w.app_id";

const ROW = WORKFLOWS.extend({ app_guid: text });
const RUN_ID = WORKFLOW_RUNS.pick("id");
const STORED_BLOCK = WORKFLOW_BLOCKS.pick("guid", "name").extend({ action_guid: text });

function toRecord(raw: RawRow): WorkflowRecord {
  const row = ROW.decode(raw);
  return { id: row.id, guid: row.guid, appId: row.app_id, appGuid: row.app_guid, name: row.name, slug: row.slug, ...audited(row) };
}

function toRunBlock(raw: RawRow): RunBlockRecord {
  const row = WORKFLOW_RUN_BLOCKS.decode(raw);
  return {
    blockGuid: row.block_guid,
    name: row.name,
    actionGuid: row.action_guid,
    actionName: row.action_name,
    dataGuid: row.data_guid,
    output: row.output,
  };
}
