import { z } from "zod";
import { RecordTable, type StoredRecord, flag, integer, json, nullable, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Caller, type Page, RECORD_COLUMNS, createdBy, newGuid } from "./records";
import type { AppStore } from "./apps";

/**
 * Where an Action runs when a run names no environment, and where an Action that declares none is
 * deployed. Spec: neither is shown; `Production` is the first environment the spec names.
 */
export const DEFAULT_ENVIRONMENT = "Production";

/** A `{{variable}}` placeholder of a prompt template (the name without the braces and blanks). */
export const PLACEHOLDER = /\{\{\s*([^{}]+?)\s*\}\}/g;

/** The distinct variable names of a prompt template, in the order they first appear. */
export const templateVariables = (prompt: string): string[] => [...new Set(Array.from(prompt.matchAll(PLACEHOLDER), (match) => match[1]!))];

/**
 * Actions cannot be created through the public interface: the emulator loads them from fixtures and
 * lists them under their App. Other stores resolve Action GUIDs here. An Action carries its App's GUID
 * (`app`), the prompt's `{{variable}}` names (`variables`: a run's input gives each of them, or is a string
 * when there is at most one) and the environments it is deployed to (runs name one of them).
 */
export type StoredAction = ReturnType<typeof withVariables>;

export const ACTIONS = table("actions", {
  id: integer,
  guid: text,
  workspace_id: integer,
  app_id: integer,
  name: text,
  action_type: text,
  model: nullable(text),
  prompt: text,
  ...RECORD_COLUMNS,
});

/** The environments an Action is deployed to (a table of its own: databases written before runs existed keep their actions table). */
export const ACTION_ENVIRONMENTS = table("action_environments", { id: integer, action_id: integer, name: text });

const Names = z.array(z.string());
const ENVIRONMENTS = new RecordTable(ACTION_ENVIRONMENTS);

const RECORDS = new RecordTable(ACTIONS, {
  joins: "JOIN apps p ON p.id = actions.app_id",
  derived: {
    app: ["p.guid", text],
    app_deleted: ["p.deleted_at IS NOT NULL", flag],
    environments: [
      "(SELECT json_group_array(name) FROM (SELECT name FROM action_environments WHERE action_id = actions.id ORDER BY id))",
      json((value) => Names.safeParse(value)),
    ],
  },
});

export class ActionStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly apps: AppStore },
  ) {}

  /** Fixture loading only. Without `environments` the Action is deployed to {@link DEFAULT_ENVIRONMENT} only. */
  create(
    caller: Caller,
    input: {
      app: string;
      name: string;
      prompt: string;
      model?: string | null;
      actionType?: string;
      guid?: string;
      environments?: string[] | undefined;
    },
  ): StoredAction {
    const app = this.store.apps.get(caller, input.app);
    const id = RECORDS.insert(this.db, {
      ...createdBy(caller, this.db.clock.iso()),
      guid: input.guid ?? newGuid(),
      appId: app.id,
      name: input.name,
      actionType: input.actionType ?? "prompt",
      model: input.model,
      prompt: input.prompt,
    });
    for (const name of new Set(input.environments)) ENVIRONMENTS.insert(this.db, { actionId: id, name });
    return withVariables(RECORDS.find(this.db, { id })!);
  }

  /** The Actions of an App (404 when the App is missing or deleted). */
  listByApp(caller: Caller, appGuid: string, page: Page): StoredAction[] {
    const app = this.store.apps.get(caller, appGuid);
    return RECORDS.page(this.db, { appId: app.id, deletedAt: null }, page).items.map(withVariables);
  }

  /** An Action of the caller's workspace whose App is not deleted; otherwise 404 `Action not found`. */
  get(caller: Caller, guid: string): StoredAction {
    const action = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null, appDeleted: false });
    if (!action) throw new RecordNotFoundError("Action not found");
    return withVariables(action);
  }
}

/** The stored Action with its prompt's variables and, when it declares none, the default environment. */
const withVariables = (action: StoredRecord<typeof RECORDS>) => ({
  ...action,
  variables: templateVariables(action.prompt),
  // An Action that declares no environment (fixtures without `environments`, older databases) is deployed to the default one.
  environments: action.environments.length > 0 ? action.environments : [DEFAULT_ENVIRONMENT],
});
