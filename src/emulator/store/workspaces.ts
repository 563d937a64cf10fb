import type { Database } from "./database";
import { BadRequestError, FeatureLimitReachedError, RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, fromJson, newGuid, toJson } from "./records";

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

export class WorkspaceStore {
  constructor(private readonly db: Database) {
    db.sql.exec(`
      CREATE TABLE IF NOT EXISTS workspaces (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        slug TEXT NOT NULL,
        limits TEXT,
        ${RECORD_COLUMNS}
      );
      CREATE TABLE IF NOT EXISTS workspace_members (
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        user_id TEXT NOT NULL,
        PRIMARY KEY (workspace_id, user_id)
      );
      CREATE TABLE IF NOT EXISTS api_keys (
        key TEXT PRIMARY KEY,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        user_id TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
    `);
  }

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
    const row = this.db.get<{ workspace_id: number; user_id: string }>(
      `SELECT k.workspace_id, k.user_id FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
       WHERE k.key = ? AND w.deleted_at IS NULL`,
      apiKey,
    );
    return row && { workspaceId: row.workspace_id, userId: row.user_id };
  }

  /**
   * The first API key of the workspace with this slug, if any. With `includeDeleted`, a deleted one counts
   * too when no live one has the slug (the most recently deleted first).
   */
  keyOf(slug: string, options: { includeDeleted?: boolean } = {}): string | undefined {
    return this.db.get<{ key: string }>(
      `SELECT k.key FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
       WHERE w.slug = ? ${options.includeDeleted ? "" : "AND w.deleted_at IS NULL"}
       ORDER BY w.deleted_at IS NOT NULL, w.deleted_at DESC, k.created_at LIMIT 1`,
      slug,
    )?.key;
  }

  /**
   * Makes the workspace `apiKey` selects live again if it was deleted, records and key as they were;
   * false when the key is unknown. Not a public route (the spec has no restore): fixtures and the
   * default workspace declare workspaces that must exist at start, whatever a key holder deleted. The
   * slug is not checked again: a workspace created with it meanwhile shares it.
   */
  restoreByKey(apiKey: string): boolean {
    const row = this.db.get<{ workspace_id: number }>("SELECT workspace_id FROM api_keys WHERE key = ?", apiKey);
    if (!row) return false;
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
   * Keeps `feature_usage` (live rows per workspace and feature) up to date by triggers on every feature
   * table, so `reserve` and `usage` read one row instead of counting. Triggers rather than calls in each
   * store: every insert, soft delete, restore, bulk delete and hard delete is covered, whichever store or
   * statement makes it. Counts are rebuilt from the tables on each start (a file written before the
   * triggers existed stays right). Call once every feature table exists.
   */
  trackUsage(): void {
    const bump = (side: "NEW" | "OLD", feature: Feature, delta: 1 | -1) =>
      `INSERT INTO feature_usage (workspace_id, feature, used) VALUES (${side}.workspace_id, '${feature}', ${delta})
       ON CONFLICT (workspace_id, feature) DO UPDATE SET used = used + ${delta};`;
    this.db.transaction(() => {
      this.db.sql.exec(`
        CREATE TABLE IF NOT EXISTS feature_usage (
          workspace_id INTEGER NOT NULL,
          feature TEXT NOT NULL,
          used INTEGER NOT NULL,
          PRIMARY KEY (workspace_id, feature)
        ) WITHOUT ROWID;
        DELETE FROM feature_usage;
      `);
      for (const feature of FEATURES) {
        const live = (side: "NEW" | "OLD") => `WHEN ${side}.deleted_at IS NULL`;
        const moved = `AFTER UPDATE OF deleted_at, workspace_id ON ${feature}`;
        this.db.sql.exec(`
          CREATE TRIGGER IF NOT EXISTS ${feature}_usage_insert AFTER INSERT ON ${feature} ${live("NEW")}
          BEGIN ${bump("NEW", feature, 1)} END;
          CREATE TRIGGER IF NOT EXISTS ${feature}_usage_delete AFTER DELETE ON ${feature} ${live("OLD")}
          BEGIN ${bump("OLD", feature, -1)} END;
          CREATE TRIGGER IF NOT EXISTS ${feature}_usage_leave ${moved} ${live("OLD")}
          BEGIN ${bump("OLD", feature, -1)} END;
          CREATE TRIGGER IF NOT EXISTS ${feature}_usage_enter ${moved} ${live("NEW")}
          BEGIN ${bump("NEW", feature, 1)} END;
          INSERT INTO feature_usage (workspace_id, feature, used)
            SELECT workspace_id, '${feature}', count(*) FROM ${feature} WHERE deleted_at IS NULL GROUP BY workspace_id;
        `);
      }
    });
  }

  private count(workspaceId: number, feature: Feature): number {
    return (
      this.db.get<{ used: number }>("SELECT used FROM feature_usage WHERE workspace_id = ? AND feature = ?", workspaceId, feature)?.used ??
      0
    );
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

function toRecord(row: Record<string, unknown>): WorkspaceRecord {
  return {
    id: row.id as number,
    guid: row.guid as string,
    name: row.name as string,
    slug: row.slug as string,
    limits: { ...DEFAULT_LIMITS, ...fromJson<Limits>(row.limits) },
    ...audited(row),
  };
}
