import type { Variant } from "../../api/actions";
import type { ExperimentFields } from "../../api/experiments";
import type { StoredAction } from "./actions";
import { RecordTable, type StoredRecord, flag, integer, table, text } from "./columns";
import { storeModule } from "./module";
import type { Database } from "./database";
import { BadRequestError, RecordNotFoundError } from "./errors";
import { type Caller, type Page, type Paged, RECORD_COLUMNS, createdBy, updatedBy, newGuid } from "./records";
import type { ActionStore } from "./actions";
import type { AppStore } from "./apps";
import type { WorkspaceStore } from "./workspaces";

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

const RECORDS = new RecordTable(EXPERIMENTS, {
  joins: `JOIN apps p ON p.id = experiments.app_id
    JOIN actions a1 ON a1.id = experiments.primary_action_id JOIN actions a2 ON a2.id = experiments.secondary_action_id`,
  derived: {
    app: ["p.guid", text],
    primary_action: ["a1.guid", text],
    secondary_action: ["a2.guid", text],
    deleted: ["experiments.deleted_at IS NOT NULL", flag],
  },
});

/** An Experiment, its App and two Actions by GUID under the wire's names. */
export type StoredExperiment = StoredRecord<typeof RECORDS>;

/** Experiments compare two Actions, both of the Experiment's App. */
export class ExperimentStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly actions: ActionStore; readonly apps: AppStore; readonly workspaces: WorkspaceStore },
  ) {}

  list(caller: Caller, page: Page): Paged<StoredExperiment> {
    return RECORDS.page(this.db, { workspaceId: caller.workspaceId, deletedAt: null }, page);
  }

  /** 404 for a missing App or Action, 400 when an Action is of another App, 429 past the allowance. */
  create(caller: Caller, input: ExperimentFields): StoredExperiment {
    return this.db.transaction(() => {
      const app = this.store.apps.get(caller, input.app);
      const [primary, secondary] = this.actionsOf(caller, app.id, input.primaryAction, input.secondaryAction);
      this.store.workspaces.reserve(caller, "experiments");
      const stamp = this.db.clock.iso();
      const id = RECORDS.insert(this.db, {
        ...createdBy(caller, stamp),
        guid: newGuid(),
        appId: app.id,
        name: input.name,
        primaryActionId: primary.id,
        secondaryActionId: secondary.id,
        status: INITIAL_STATUS,
      });
      return RECORDS.find(this.db, { id })!;
    });
  }

  /** A non-deleted Experiment of the caller's workspace; otherwise 404 `Experiment not found`. */
  get(caller: Caller, guid: string): StoredExperiment {
    const experiment = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
    if (!experiment) throw new RecordNotFoundError("Experiment not found");
    return experiment;
  }

  /** Renames and/or reassigns Actions; new Actions must belong to the Experiment's App. */
  update(
    caller: Caller,
    guid: string,
    input: Partial<Pick<ExperimentFields, "name" | "primaryAction" | "secondaryAction">>,
  ): StoredExperiment {
    const experiment = this.get(caller, guid);
    const [primary, secondary] = this.actionsOf(
      caller,
      experiment.appId,
      input.primaryAction ?? experiment.primaryAction,
      input.secondaryAction ?? experiment.secondaryAction,
    );
    RECORDS.update(this.db, experiment.id, {
      name: input.name,
      primaryActionId: primary.id,
      secondaryActionId: secondary.id,
      ...updatedBy(caller, this.db.clock.iso()),
    });
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): StoredExperiment {
    const experiment = this.get(caller, guid);
    RECORDS.update(this.db, experiment.id, { deletedAt: this.db.clock.iso() });
    return experiment;
  }

  /**
   * The side of the Experiment an Action is on (primary when it is both); 400 when it is neither, as for a
   * forced Action (spec: status not shown).
   */
  variantOf(experiment: StoredExperiment, actionGuid: string): Variant {
    if (actionGuid === experiment.primaryAction) return "primary";
    if (actionGuid === experiment.secondaryAction) return "secondary";
    throw new BadRequestError("Action is not one of the Experiment's Actions");
  }

  /** Resolves both Actions (404 each) and then checks both belong to the App. */
  private actionsOf(caller: Caller, appId: number, primaryGuid: string, secondaryGuid: string): [StoredAction, StoredAction] {
    const primary = this.store.actions.get(caller, primaryGuid);
    const secondary = this.store.actions.get(caller, secondaryGuid);
    // Spec: the status for Actions of another App is not shown; the emulator answers 400.
    if (primary.appId !== appId || secondary.appId !== appId) throw new BadRequestError("Both Actions must belong to the App");
    return [primary, secondary];
  }
}

/** Opened by the Store as `store.experiments` (./module.ts). */
export const experimentStore = storeModule(ExperimentStore, [EXPERIMENTS]);
