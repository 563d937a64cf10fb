import { z } from "zod";
import { type RawRow, integer, json, nullable, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, RECORD_COLUMNS, audited, newGuid } from "./records";
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
 * lists them under their App. Other stores resolve Action GUIDs here.
 */
export interface ActionRecord extends Audited {
  id: number;
  guid: string;
  appId: number;
  appGuid: string;
  name: string;
  actionType: string;
  model: string | null;
  prompt: string;
  /** The prompt's `{{variable}}` names: a run's input gives each of them, or is a string when there is at most one. */
  variables: string[];
  /** The environments the Action is deployed to (runs name one of them). */
  environments: string[];
}

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
      appGuid: string;
      name: string;
      prompt: string;
      model?: string | null;
      actionType?: string;
      guid?: string;
      environments?: string[] | undefined;
    },
  ): ActionRecord {
    const app = this.store.apps.get(caller, input.appGuid);
    const stamp = this.db.clock.iso();
    const id = this.db.run(
      `INSERT INTO actions (guid, workspace_id, app_id, name, action_type, model, prompt, created_at, updated_at, created_by_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      input.guid ?? newGuid(),
      caller.workspaceId,
      app.id,
      input.name,
      input.actionType ?? "prompt",
      input.model ?? null,
      input.prompt,
      stamp,
      stamp,
      caller.userId,
    );
    for (const environment of input.environments ?? []) {
      this.db.run("INSERT OR IGNORE INTO action_environments (action_id, name) VALUES (?, ?)", id, environment);
    }
    return this.byId(id);
  }

  /** The Actions of an App (404 when the App is missing or deleted). */
  listByApp(caller: Caller, appGuid: string, page: Page): ActionRecord[] {
    const app = this.store.apps.get(caller, appGuid);
    return this.db
      .all(`${SELECT} WHERE a.app_id = ? AND a.deleted_at IS NULL ORDER BY a.id LIMIT ? OFFSET ?`, app.id, page.limit, page.skip)
      .map(toRecord);
  }

  /** An Action of the caller's workspace whose App is not deleted; otherwise 404 `Action not found`. */
  get(caller: Caller, guid: string): ActionRecord {
    const row = this.db.get(
      `${SELECT} WHERE a.guid = ? AND a.workspace_id = ? AND a.deleted_at IS NULL AND p.deleted_at IS NULL`,
      guid,
      caller.workspaceId,
    );
    if (!row) throw new RecordNotFoundError("Action not found");
    return toRecord(row);
  }

  private byId(id: number): ActionRecord {
    return toRecord(this.db.get(`${SELECT} WHERE a.id = ?`, id)!);
  }
}

const ENVIRONMENTS = "SELECT json_group_array(name) FROM (SELECT name FROM action_environments WHERE action_id = a.id ORDER BY id)";
const SELECT = `SELECT a.*, p.guid AS app_guid, (${ENVIRONMENTS}) AS environments FROM actions a JOIN apps p ON p.id = a.app_id`;

const Names = z.array(z.string());
const ROW = ACTIONS.extend({ app_guid: text, environments: json((value) => Names.safeParse(value)) });

function toRecord(raw: RawRow): ActionRecord {
  const row = ROW.decode(raw);
  const environments = row.environments;
  return {
    id: row.id,
    guid: row.guid,
    appId: row.app_id,
    appGuid: row.app_guid,
    name: row.name,
    actionType: row.action_type,
    model: row.model,
    prompt: row.prompt,
    variables: templateVariables(row.prompt),
    // An Action that declares no environment (fixtures without `environments`, older databases) is deployed to the default one.
    environments: environments.length > 0 ? environments : [DEFAULT_ENVIRONMENT],
    ...audited(row),
  };
}
