import type { ActionRecord } from "./actions";
import { type RawRow, integer, table, text } from "./columns";
import type { Database } from "./database";
import { BadRequestError, RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, newGuid } from "./records";
import type { ActionStore } from "./actions";
import type { AppStore } from "./apps";
import type { WorkspaceStore } from "./workspaces";

export interface ExperimentRecord extends Audited {
  id: number;
  guid: string;
  name: string;
  appId: number;
  appGuid: string;
  primaryActionGuid: string;
  secondaryActionGuid: string;
  status: string;
}

/** Which of an Experiment's two Actions served a prompt. */
export type Variant = "primary" | "secondary";

// Spec: status values not shown; the emulator creates Experiments as `active` and never moves them.
const INITIAL_STATUS = "active";

export const EXPERIMENTS = table("experiments", {
  id: integer,
  guid: text,
  workspace_id: integer,
  app_id: integer,
  name: text,
  primary_action_id: integer,
  secondary_action_id: integer,
  status: text,
  ...RECORD_COLUMNS,
});

/** Experiments compare two Actions, both of the Experiment's App. */
export class ExperimentStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly actions: ActionStore; readonly apps: AppStore; readonly workspaces: WorkspaceStore },
  ) {}

  list(caller: Caller, page: Page): Paged<ExperimentRecord> {
    const from = `${FROM} WHERE e.workspace_id = ? AND e.deleted_at IS NULL`;
    const { rows, total } = this.db.paged(from, [caller.workspaceId], page, { select: COLUMNS, order: "e.id" });
    return { items: rows.map(toRecord), total };
  }

  /** 404 for a missing App or Action, 400 when an Action is of another App, 429 past the allowance. */
  create(
    caller: Caller,
    input: { name: string; appGuid: string; primaryActionGuid: string; secondaryActionGuid: string },
  ): ExperimentRecord {
    return this.db.transaction(() => {
      const app = this.store.apps.get(caller, input.appGuid);
      const [primary, secondary] = this.actionsOf(caller, app.id, input.primaryActionGuid, input.secondaryActionGuid);
      this.store.workspaces.reserve(caller, "experiments");
      const stamp = this.db.clock.iso();
      const id = this.db.run(
        `INSERT INTO experiments (guid, workspace_id, app_id, name, primary_action_id, secondary_action_id, status,
           created_at, updated_at, created_by_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        newGuid(),
        caller.workspaceId,
        app.id,
        input.name,
        primary.id,
        secondary.id,
        INITIAL_STATUS,
        stamp,
        stamp,
        caller.userId,
      );
      return toRecord(this.db.get(`${SELECT} WHERE e.id = ?`, id)!);
    });
  }

  /** A non-deleted Experiment of the caller's workspace; otherwise 404 `Experiment not found`. */
  get(caller: Caller, guid: string): ExperimentRecord {
    const row = this.db.get(`${SELECT} WHERE e.guid = ? AND e.workspace_id = ? AND e.deleted_at IS NULL`, guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Experiment not found");
    return toRecord(row);
  }

  /** Renames and/or reassigns Actions; new Actions must belong to the Experiment's App. */
  update(
    caller: Caller,
    guid: string,
    input: { name?: string | undefined; primaryActionGuid?: string | undefined; secondaryActionGuid?: string | undefined },
  ): ExperimentRecord {
    const experiment = this.get(caller, guid);
    const [primary, secondary] = this.actionsOf(
      caller,
      experiment.appId,
      input.primaryActionGuid ?? experiment.primaryActionGuid,
      input.secondaryActionGuid ?? experiment.secondaryActionGuid,
    );
    this.db.run(
      "UPDATE experiments SET name = ?, primary_action_id = ?, secondary_action_id = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      input.name ?? experiment.name,
      primary.id,
      secondary.id,
      this.db.clock.iso(),
      caller.userId,
      experiment.id,
    );
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): ExperimentRecord {
    const experiment = this.get(caller, guid);
    this.db.run("UPDATE experiments SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), experiment.id);
    return experiment;
  }

  /**
   * The side of the Experiment an Action is on (primary when it is both); 400 when it is neither, as for a
   * forced Action (spec: status not shown).
   */
  variantOf(experiment: ExperimentRecord, actionGuid: string): Variant {
    if (actionGuid === experiment.primaryActionGuid) return "primary";
    if (actionGuid === experiment.secondaryActionGuid) return "secondary";
    throw new BadRequestError("Action is not one of the Experiment's Actions");
  }

  /** Resolves both Actions (404 each) and then checks both belong to the App. */
  private actionsOf(caller: Caller, appId: number, primaryGuid: string, secondaryGuid: string): [ActionRecord, ActionRecord] {
    const primary = this.store.actions.get(caller, primaryGuid);
    const secondary = this.store.actions.get(caller, secondaryGuid);
    // Spec: the status for Actions of another App is not shown; the emulator answers 400.
    if (primary.appId !== appId || secondary.appId !== appId) throw new BadRequestError("Both Actions must belong to the App");
    return [primary, secondary];
  }
}

const COLUMNS = "e.*, p.guid AS app_guid, a1.guid AS primary_action_guid, a2.guid AS secondary_action_guid";
const FROM = `FROM experiments e JOIN apps p ON p.id = e.app_id
  JOIN actions a1 ON a1.id = e.primary_action_id JOIN actions a2 ON a2.id = e.secondary_action_id`;
const SELECT = `SELECT ${COLUMNS} ${FROM}`;

const ROW = EXPERIMENTS.extend({ app_guid: text, primary_action_guid: text, secondary_action_guid: text });

function toRecord(raw: RawRow): ExperimentRecord {
  const row = ROW.decode(raw);
  return {
    id: row.id,
    guid: row.guid,
    name: row.name,
    appId: row.app_id,
    appGuid: row.app_guid,
    primaryActionGuid: row.primary_action_guid,
    secondaryActionGuid: row.secondary_action_guid,
    status: row.status,
    ...audited(row),
  };
}
