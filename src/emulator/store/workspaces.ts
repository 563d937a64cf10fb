import { z } from "zod";
import type { UsageEntry, WorkspaceCreate } from "../../api/workspaces";
import { RecordTable, type StoredRecord, flag, integer, json, nullable, oneOf, table, text } from "./columns";
import type { Database } from "./database";
import { BadRequestError, FeatureLimitReachedError, RecordNotFoundError } from "./errors";
import { type Caller, type Page, type Paged, RECORD_COLUMNS, newGuid, updatedBy } from "./records";

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

/** Workspaces with their members: `member` is the user ID of one (the user who created it, and no other). */
const RECORDS = new RecordTable(WORKSPACES, {
  joins: "JOIN workspace_members m ON m.workspace_id = workspaces.id",
  derived: { member: ["m.user_id", text], deleted: ["workspaces.deleted_at IS NOT NULL", flag] },
});
const MEMBERS = new RecordTable(WORKSPACE_MEMBERS);
const KEYS = new RecordTable(API_KEYS);

/** A workspace, its limits with the defaults filled in. */
export type StoredWorkspace = ReturnType<typeof withDefaults>;

const KEY_CALLER = API_KEYS.pick("workspace_id", "user_id");
const KEY = API_KEYS.pick("key");
const USED = FEATURE_USAGE.pick("used");
const LIMITS = WORKSPACES.pick("limits");

export class WorkspaceStore {
  /**
   * Callers by API key, for `authenticate`, which every request makes. Filled outside transactions only (never
   * from a write that may yet roll back) and emptied by each of this store's writes to a workspace or a key, the
   * only writes to those tables.
   */
  private readonly callers = new Map<string, Readonly<Caller>>();

  constructor(private readonly db: Database) {}

  /** Creates a workspace with an API key that selects it (fixtures and the CLI; not a public route). */
  createWithKey(input: { name: string; slug: string; apiKey: string; limits?: Limits; guid?: string }): Caller {
    this.callers.clear();
    return this.db.transaction(() => {
      this.refuseTakenKey(input.apiKey);
      const userId = newGuid();
      const workspace = this.insert(userId, input);
      KEYS.insert(this.db, { key: input.apiKey, workspaceId: workspace.id, userId, createdAt: this.db.clock.iso() });
      return { workspaceId: workspace.id, userId };
    });
  }

  /** The caller an API key stands for, or undefined when the key is unknown or its workspace deleted. */
  authenticate(apiKey: string): Caller | undefined {
    const cached = this.callers.get(apiKey);
    if (cached !== undefined) return { ...cached };
    const found = this.db.get(
      `SELECT k.workspace_id, k.user_id FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
       WHERE k.key = ? AND w.deleted_at IS NULL`,
      apiKey,
    );
    if (!found) return undefined;
    const row = KEY_CALLER.decode(found);
    const caller = { workspaceId: row.workspace_id, userId: row.user_id };
    if (!this.db.sql.isTransaction) this.callers.set(apiKey, Object.freeze({ ...caller }));
    return caller;
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
    this.callers.clear();
    const key = KEYS.find(this.db, { key: apiKey }, ["key"]);
    if (!key) return false;
    const workspace = RECORDS.find(this.db, { id: key.workspaceId });
    if (workspace?.deletedAt) RECORDS.update(this.db, workspace.id, { deletedAt: null, updatedAt: this.db.clock.iso() });
    return true;
  }

  /** Gives the workspace that `existingKey` selects one more key, for the same user (the CLI's `--api-key-file` or GMS_EMULATOR_API_KEY). */
  addKey(existingKey: string, apiKey: string): Caller {
    const caller = this.authenticate(existingKey);
    if (!caller) throw new RecordNotFoundError("Workspace not found");
    this.refuseTakenKey(apiKey);
    this.callers.clear();
    KEYS.insert(this.db, { key: apiKey, workspaceId: caller.workspaceId, userId: caller.userId, createdAt: this.db.clock.iso() });
    return caller;
  }

  current(caller: Caller): StoredWorkspace {
    const workspace = RECORDS.find(this.db, { id: caller.workspaceId, deletedAt: null });
    if (!workspace) throw new RecordNotFoundError("Workspace not found");
    return withDefaults(workspace);
  }

  list(caller: Caller, page: Page): Paged<StoredWorkspace> {
    const { items, total } = RECORDS.page(this.db, { member: caller.userId, deletedAt: null }, page);
    return { items: items.map(withDefaults), total };
  }

  create(caller: Caller, input: WorkspaceCreate): StoredWorkspace {
    this.callers.clear();
    return this.db.transaction(() => this.insert(caller.userId, input));
  }

  /** A workspace the caller is a member of; any other answers 404. */
  get(caller: Caller, guid: string): StoredWorkspace {
    const workspace = RECORDS.find(this.db, { guid, member: caller.userId, deletedAt: null });
    if (!workspace) throw new RecordNotFoundError("Workspace not found");
    return withDefaults(workspace);
  }

  update(caller: Caller, guid: string, input: { name: string }): StoredWorkspace {
    const workspace = this.get(caller, guid);
    this.callers.clear();
    RECORDS.update(this.db, workspace.id, { name: input.name, ...updatedBy(caller, this.db.clock.iso()) });
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): StoredWorkspace {
    const workspace = this.get(caller, guid);
    const stamp = this.db.clock.iso();
    this.callers.clear();
    RECORDS.update(this.db, workspace.id, { deletedAt: stamp, updatedAt: stamp });
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
    // What `current` finds (the live workspace with its member), reading its limits only: every create asks.
    const found = this.db.get(
      `SELECT workspaces.limits FROM workspaces JOIN workspace_members m ON m.workspace_id = workspaces.id
       WHERE workspaces.id = ? AND workspaces.deleted_at IS NULL LIMIT 1`,
      caller.workspaceId,
    );
    if (!found) throw new RecordNotFoundError("Workspace not found");
    const limit = LIMITS.decode(found).limits?.[feature] ?? DEFAULT_LIMITS[feature];
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

  private refuseTakenKey(apiKey: string): void {
    if (KEYS.find(this.db, { key: apiKey }, ["key"])) throw new BadRequestError("API key is already assigned to a workspace");
  }

  private count(workspaceId: number, feature: Feature): number {
    const found = this.db.get("SELECT used FROM feature_usage WHERE workspace_id = ? AND feature = ?", workspaceId, feature);
    return found ? USED.decode(found).used : 0;
  }

  private insert(userId: string, input: { name: string; slug: string; limits?: Limits; guid?: string }): StoredWorkspace {
    if (RECORDS.find(this.db, { slug: input.slug, deletedAt: null })) {
      throw new BadRequestError(`Workspace slug '${input.slug}' is already taken`);
    }
    const stamp = this.db.clock.iso();
    const id = RECORDS.insert(this.db, {
      guid: input.guid ?? newGuid(),
      name: input.name,
      slug: input.slug,
      limits: input.limits ?? {},
      createdAt: stamp,
      updatedAt: stamp,
      createdById: userId,
    });
    MEMBERS.insert(this.db, { workspaceId: id, userId });
    return withDefaults(RECORDS.find(this.db, { id })!);
  }
}

/** The stored workspace with the default limits where it sets none. */
const withDefaults = (workspace: StoredRecord<typeof RECORDS>) => ({ ...workspace, limits: { ...DEFAULT_LIMITS, ...workspace.limits } });
