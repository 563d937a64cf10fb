import { z } from "zod";
import { type RawRow, integer, json, nullable, oneOf, table, text } from "./columns";
import type { Database } from "./database";
import { BadRequestError, FeatureLimitReachedError, RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, newGuid, toJson } from "./records";

/**
 * Features a workspace can be limited on, each counted from the table of the same name (non-deleted
 * rows of the workspace). The spec leaves the list and the values out; these are the emulator's choice.
 */
export const FEATURES = [
  "apps",
  "workflows",
  "datasets",
  "evals",
  "experiments",
  "skills",
  "models",
  "providers",
  "context_sources",
] as const;
export type Feature = (typeof FEATURES)[number];
export type Limits = Partial<Record<Feature, number>>;

export const DEFAULT_LIMITS: Record<Feature, number> = {
  apps: 100,
  workflows: 1000,
  datasets: 1000,
  evals: 1000,
  experiments: 1000,
  skills: 1000,
  models: 1000,
  providers: 1000,
  context_sources: 1000,
};

export interface WorkspaceRecord extends Audited {
  id: number;
  guid: string;
  name: string;
  slug: string;
  limits: Record<Feature, number>;
}

export interface UsageEntry {
  feature: Feature;
  used: number;
  limit: number;
}

const LIMIT_NAMES: Record<Feature, string> = {
  apps: "App",
  workflows: "Workflow",
  datasets: "Dataset",
  evals: "Eval",
  experiments: "Experiment",
  skills: "Skill",
  models: "Model",
  providers: "Provider",
  context_sources: "Context Source",
};

/** A workspace's own limits (the defaults fill the rest): JSON of feature names to whole numbers. */
const StoredLimits = z.partialRecord(z.enum(FEATURES), z.number().int());

export const WORKSPACES = table("workspaces", {
  id: integer,
  guid: text,
  name: text,
  slug: text,
  limits: nullable(json((value) => StoredLimits.safeParse(value))),
  ...RECORD_COLUMNS,
});

export const WORKSPACE_MEMBERS = table("workspace_members", { workspace_id: integer, user_id: text });

export const API_KEYS = table("api_keys", { key: text, workspace_id: integer, user_id: text, created_at: text });

/** Live rows per workspace and counted table, kept by the triggers of migration 2. */
export const FEATURE_USAGE = table("feature_usage", { workspace_id: integer, feature: oneOf(FEATURES), used: integer });

const KEY_CALLER = API_KEYS.pick("workspace_id", "user_id");
const KEY = API_KEYS.pick("key");
const USED = FEATURE_USAGE.pick("used");

export class WorkspaceStore {
  constructor(private readonly db: Database) {}

  /** Creates a workspace with an API key that selects it (fixtures and the CLI; not a public route). */
  createWithKey(input: { name: string; slug: string; apiKey: string; limits?: Limits; guid?: string }): Caller {
    return this.db.transaction(() => {
      if (this.db.get("SELECT 1 FROM api_keys WHERE key = ?", input.apiKey)) {
        throw new BadRequestError("API key is already assigned to a workspace");
      }
      const userId = newGuid();
      const workspace = this.insert(userId, input);
      this.db.run(
        "INSERT INTO api_keys (key, workspace_id, user_id, created_at) VALUES (?, ?, ?, ?)",
        input.apiKey,
        workspace.id,
        userId,
        this.db.clock.iso(),
      );
      return { workspaceId: workspace.id, userId };
    });
  }

  /** The caller an API key stands for, or undefined when the key is unknown or its workspace deleted. */
  authenticate(apiKey: string): Caller | undefined {
    const found = this.db.get(
      `SELECT k.workspace_id, k.user_id FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
       WHERE k.key = ? AND w.deleted_at IS NULL`,
      apiKey,
    );
    if (!found) return undefined;
    const row = KEY_CALLER.decode(found);
    return { workspaceId: row.workspace_id, userId: row.user_id };
  }

  /**
   * The first API key of the workspace with this slug, if any. With `includeDeleted`, a deleted one counts
   * too when no live one has the slug (the most recently deleted first).
   */
  keyOf(slug: string, options: { includeDeleted?: boolean } = {}): string | undefined {
    const found = this.db.get(
      `SELECT k.key FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
       WHERE w.slug = ? ${options.includeDeleted ? "" : "AND w.deleted_at IS NULL"}
       ORDER BY w.deleted_at IS NOT NULL, w.deleted_at DESC, k.created_at LIMIT 1`,
      slug,
    );
    return found && KEY.decode(found).key;
  }

  /**
   * Makes the workspace `apiKey` selects live again if it was deleted, records and key as they were;
   * false when the key is unknown. Not a public route (the spec has no restore): fixtures and the
   * default workspace declare workspaces that must exist at start, whatever a key holder deleted. The
   * slug is not checked again: a workspace created with it meanwhile shares it.
   */
  restoreByKey(apiKey: string): boolean {
    const found = this.db.get("SELECT workspace_id FROM api_keys WHERE key = ?", apiKey);
    if (!found) return false;
    const row = KEY_CALLER.pick("workspace_id").decode(found);
    this.db.run(
      "UPDATE workspaces SET deleted_at = NULL, updated_at = ? WHERE id = ? AND deleted_at IS NOT NULL",
      this.db.clock.iso(),
      row.workspace_id,
    );
    return true;
  }

  /** Gives the workspace that `existingKey` selects one more key, for the same user (the CLI's `--api-key`). */
  addKey(existingKey: string, apiKey: string): Caller {
    const caller = this.authenticate(existingKey);
    if (!caller) throw new RecordNotFoundError("Workspace not found");
    if (this.db.get("SELECT 1 FROM api_keys WHERE key = ?", apiKey))
      throw new BadRequestError("API key is already assigned to a workspace");
    this.db.run(
      "INSERT INTO api_keys (key, workspace_id, user_id, created_at) VALUES (?, ?, ?, ?)",
      apiKey,
      caller.workspaceId,
      caller.userId,
      this.db.clock.iso(),
    );
    return caller;
  }

  current(caller: Caller): WorkspaceRecord {
    const row = this.db.get("SELECT * FROM workspaces WHERE id = ? AND deleted_at IS NULL", caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Workspace not found");
    return toRecord(row);
  }

  list(caller: Caller, page: Page): Paged<WorkspaceRecord> {
    const from = "FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id WHERE m.user_id = ? AND w.deleted_at IS NULL";
    const { rows, total } = this.db.paged(from, [caller.userId], page, { select: "w.*", order: "w.id" });
    return { items: rows.map(toRecord), total };
  }

  create(caller: Caller, input: { name: string; slug: string }): WorkspaceRecord {
    return this.db.transaction(() => this.insert(caller.userId, input));
  }

  /** A workspace the caller is a member of; any other answers 404. */
  get(caller: Caller, guid: string): WorkspaceRecord {
    const row = this.db.get(
      `SELECT w.* FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
       WHERE w.guid = ? AND m.user_id = ? AND w.deleted_at IS NULL`,
      guid,
      caller.userId,
    );
    if (!row) throw new RecordNotFoundError("Workspace not found");
    return toRecord(row);
  }

  update(caller: Caller, guid: string, input: { name: string }): WorkspaceRecord {
    const workspace = this.get(caller, guid);
    this.db.run(
      "UPDATE workspaces SET name = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      input.name,
      this.db.clock.iso(),
      caller.userId,
      workspace.id,
    );
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): WorkspaceRecord {
    const workspace = this.get(caller, guid);
    this.db.run(
      "UPDATE workspaces SET deleted_at = ?, updated_at = ? WHERE id = ?",
      this.db.clock.iso(),
      this.db.clock.iso(),
      workspace.id,
    );
    return workspace;
  }

  /** The same user acting in another workspace it belongs to (for the `/workspaces/{guid}/...` routes). */
  callerIn(caller: Caller, guid: string): Caller {
    return { workspaceId: this.get(caller, guid).id, userId: caller.userId };
  }

  usage(caller: Caller): UsageEntry[] {
    const { limits } = this.current(caller);
    return FEATURES.map((feature) => ({ feature, used: this.count(caller.workspaceId, feature), limit: limits[feature] }));
  }

  /** Throws 429 when creating one more record of `feature` would exceed the workspace allowance. */
  reserve(caller: Caller, feature: Feature): void {
    const limit = this.current(caller).limits[feature];
    const used = this.count(caller.workspaceId, feature);
    if (used >= limit) {
      throw new FeatureLimitReachedError(`${LIMIT_NAMES[feature]} limit reached: the workspace allows ${limit} and uses ${used}`);
    }
  }

  /**
   * Rebuilds `feature_usage` (live rows per workspace and feature) from the tables. Triggers on every
   * feature table (made by migration 2, ./migrations.ts) keep it up to date, so `reserve` and `usage` read
   * one row instead of counting; triggers rather than calls in each store, so every insert, soft delete,
   * restore, bulk delete and hard delete is covered, whichever store or statement makes it. The counts are
   * rebuilt on each start all the same (cheap, and right whatever edited the file). A feature added to
   * `FEATURES` needs a migration creating its triggers.
   */
  trackUsage(): void {
    this.db.transaction(() => {
      this.db.sql.exec("DELETE FROM feature_usage");
      for (const feature of FEATURES) {
        this.db.sql.exec(`INSERT INTO feature_usage (workspace_id, feature, used)
          SELECT workspace_id, '${feature}', count(*) FROM ${feature} WHERE deleted_at IS NULL GROUP BY workspace_id`);
      }
    });
  }

  private count(workspaceId: number, feature: Feature): number {
    const found = this.db.get("SELECT used FROM feature_usage WHERE workspace_id = ? AND feature = ?", workspaceId, feature);
    return found ? USED.decode(found).used : 0;
  }

  private insert(userId: string, input: { name: string; slug: string; limits?: Limits; guid?: string }): WorkspaceRecord {
    if (this.db.get("SELECT 1 FROM workspaces WHERE slug = ? AND deleted_at IS NULL", input.slug)) {
      throw new BadRequestError(`Workspace slug '${input.slug}' is already taken`);
    }
    const stamp = this.db.clock.iso();
    const id = this.db.run(
      `INSERT INTO workspaces (guid, name, slug, limits, created_at, updated_at, created_by_id)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      input.guid ?? newGuid(),
      input.name,
      input.slug,
      toJson(input.limits ?? {}),
      stamp,
      stamp,
      userId,
    );
    this.db.run("INSERT INTO workspace_members (workspace_id, user_id) VALUES (?, ?)", id, userId);
    return toRecord(this.db.get("SELECT * FROM workspaces WHERE id = ?", id)!);
  }
}

function toRecord(raw: RawRow): WorkspaceRecord {
  const row = WORKSPACES.decode(raw);
  return { id: row.id, guid: row.guid, name: row.name, slug: row.slug, limits: { ...DEFAULT_LIMITS, ...row.limits }, ...audited(row) };
}
