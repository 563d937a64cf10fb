/**
 * The emulator database's schema history: ordered migrations, the Nth bringing a database from schema
 * version N-1 to N. The version is SQLite's `PRAGMA user_version`; `migrate` (run by `Database` at open)
 * applies every migration the file lacks, all in one transaction with the version bump, so a file is
 * either fully migrated or untouched. A file whose version is newer than `MIGRATIONS.length` is refused
 * and left as it is.
 *
 * Files written before versioning (release 0.1.0 and the code up to this change) have version 0 with their
 * tables present: migrations 1 and 2 are written `IF NOT EXISTS`, so they adopt such a file (whatever tables
 * of theirs it already has) and then the Store checks every table against its description. Migrations from
 * 3 on run only on versioned files and need no such guard.
 *
 * How to add a column (or make any other change to what is stored):
 *   1. Append a migration to `MIGRATIONS` (never edit or reorder one that has shipped: a user's file may
 *      hold it already), e.g. `{ name: "apps.color", sql: "ALTER TABLE apps ADD COLUMN color TEXT NOT NULL DEFAULT 'none'" }`.
 *      A NOT NULL column needs a DEFAULT, which is what the rows already stored get; a column that is not
 *      NOT NULL reads as NULL on them. A change ALTER TABLE cannot make (a type, a constraint, dropping a
 *      column) rebuilds the table: CREATE TABLE new_x, INSERT INTO new_x SELECT … FROM x, DROP TABLE x,
 *      ALTER TABLE new_x RENAME TO x, then the indexes and triggers again (foreign keys are off while
 *      migrations run and `foreign_key_check` must pass before the commit).
 *   2. Add the column to the table's description (the `table(...)` next to its store, e.g. `APPS` in
 *      apps.ts), with the same type and NULL rule; its rows then decode the new field. A new table gets a
 *      description of its own, listed in `TABLES` (./index.ts) or by its store module (./module.ts); a new
 *      counted feature needs its `feature_usage` triggers in the migration (see migration 2).
 *
 * A new kind's table needs no migration: the Store creates a store module's table from its description when
 * the migrations have not (./module.ts, `Table.creation`), with `id` its key and `guid` unique. The first
 * change to such a table is then a migration that first creates it as it was described until then
 * (`CREATE TABLE IF NOT EXISTS ...`: a new database runs the migrations before the Store creates anything),
 * then changes it. The tables of the kinds that came before keep the migrations that made them.
 *   3. Nothing more for a plain field: the store's RecordTable (./columns.ts) writes and reads every described
 *      column, so a create or update given the field stores it and the record carries it.
 *   4. Run test/emulator/storage-versions.test.ts: it checks that a new database and each stored fixture
 *      (test/fixtures/state-v0.1.0, test/fixtures/db-pre-versioning) migrate to the descriptions. When the
 *      change ships in a release, add that release's fixture (test/fixtures/state-v0.1.0/README.md).
 */
import type { DatabaseSync } from "node:sqlite";

export interface Migration {
  /** What it changes, for errors and the reader. */
  readonly name: string;
  /** Statements to run, or a function for changes SQL alone cannot express (it must not commit). */
  readonly sql: string | ((sql: DatabaseSync) => void);
}

/** The columns each record table ends with, as release 0.1.0 declared them (frozen: do not change). */
const RECORD_COLUMNS_V1 =
  "created_at TEXT NOT NULL, updated_at TEXT NOT NULL, created_by_id TEXT NOT NULL, last_updated_by_id TEXT, deleted_at TEXT";

/** The tables counted per workspace by `feature_usage` when migration 2 was written (frozen). */
const COUNTED_V2 = ["apps", "workflows", "datasets", "evals", "experiments", "skills", "models", "providers", "context_sources"];

const usageTriggers = (feature: string): string => {
  const bump = (side: "NEW" | "OLD", delta: 1 | -1) =>
    `INSERT INTO feature_usage (workspace_id, feature, used) VALUES (${side}.workspace_id, '${feature}', ${delta})
       ON CONFLICT (workspace_id, feature) DO UPDATE SET used = used + ${delta};`;
  const moved = `AFTER UPDATE OF deleted_at, workspace_id ON ${feature}`;
  return `
    CREATE TRIGGER IF NOT EXISTS ${feature}_usage_insert AFTER INSERT ON ${feature} WHEN NEW.deleted_at IS NULL
    BEGIN ${bump("NEW", 1)} END;
    CREATE TRIGGER IF NOT EXISTS ${feature}_usage_delete AFTER DELETE ON ${feature} WHEN OLD.deleted_at IS NULL
    BEGIN ${bump("OLD", -1)} END;
    CREATE TRIGGER IF NOT EXISTS ${feature}_usage_leave ${moved} WHEN OLD.deleted_at IS NULL
    BEGIN ${bump("OLD", -1)} END;
    CREATE TRIGGER IF NOT EXISTS ${feature}_usage_enter ${moved} WHEN NEW.deleted_at IS NULL
    BEGIN ${bump("NEW", 1)} END;`;
};

/** Every migration, in order: index 0 is version 1. Append only. */
export const MIGRATIONS: readonly Migration[] = [
  {
    name: "the schema of release 0.1.0",
    sql: `
      CREATE TABLE IF NOT EXISTS workspaces (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        slug TEXT NOT NULL,
        limits TEXT,
        ${RECORD_COLUMNS_V1}
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
      CREATE TABLE IF NOT EXISTS apps (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        name TEXT NOT NULL,
        description TEXT,
        slug TEXT NOT NULL,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS apps_workspace ON apps (workspace_id, deleted_at);
      CREATE INDEX IF NOT EXISTS apps_slug ON apps (workspace_id, slug);
      CREATE TABLE IF NOT EXISTS actions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        app_id INTEGER NOT NULL REFERENCES apps(id),
        name TEXT NOT NULL,
        action_type TEXT NOT NULL,
        model TEXT,
        prompt TEXT NOT NULL,
        ${RECORD_COLUMNS_V1}
      );
      CREATE TABLE IF NOT EXISTS data (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        action_id INTEGER NOT NULL REFERENCES actions(id),
        app_id INTEGER NOT NULL REFERENCES apps(id),
        run_id TEXT,
        input TEXT NOT NULL,
        output TEXT NOT NULL,
        full_prompt_sent TEXT,
        system_message TEXT,
        prompt_template TEXT,
        model TEXT,
        model_provider TEXT,
        num_input_tokens INTEGER,
        num_output_tokens INTEGER,
        latency REAL,
        metadata TEXT,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS data_workspace ON data (workspace_id, deleted_at);
      CREATE INDEX IF NOT EXISTS data_app ON data (app_id, deleted_at);
      CREATE TABLE IF NOT EXISTS files (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        mime_type TEXT NOT NULL,
        size INTEGER NOT NULL,
        content BLOB NOT NULL,
        ${RECORD_COLUMNS_V1}
      );
      CREATE TABLE IF NOT EXISTS file_signing_key (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        secret BLOB NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS providers (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        provider TEXT NOT NULL,
        key TEXT NOT NULL,
        name TEXT,
        nickname TEXT NOT NULL,
        url TEXT,
        is_default INTEGER NOT NULL DEFAULT 0,
        metadata TEXT,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS providers_workspace ON providers (workspace_id, deleted_at);
      CREATE TABLE IF NOT EXISTS models (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        llm TEXT NOT NULL,
        provider TEXT NOT NULL,
        key TEXT NOT NULL,
        url TEXT,
        is_default INTEGER NOT NULL DEFAULT 0,
        workspace_model_provider_id INTEGER REFERENCES providers(id),
        created_by_provider_id INTEGER REFERENCES providers(id),
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS models_workspace ON models (workspace_id, deleted_at);
      CREATE TABLE IF NOT EXISTS skills (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        metadata TEXT,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS skills_workspace ON skills (workspace_id, deleted_at);
      CREATE TABLE IF NOT EXISTS eval_types (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL UNIQUE,
        description TEXT,
        created_at TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS evals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        name TEXT NOT NULL,
        action_id INTEGER NOT NULL REFERENCES actions(id),
        action_guid TEXT NOT NULL,
        version TEXT,
        eval_types TEXT NOT NULL,
        dataset_guid TEXT,
        dataset_name TEXT,
        sampling_rate REAL,
        alert_on_fail INTEGER NOT NULL DEFAULT 0,
        data_type TEXT NOT NULL,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS evals_workspace ON evals (workspace_id, deleted_at);
      CREATE TABLE IF NOT EXISTS workflows (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        app_id INTEGER NOT NULL REFERENCES apps(id),
        name TEXT NOT NULL,
        slug TEXT NOT NULL,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS workflows_app ON workflows (app_id, deleted_at);
      CREATE TABLE IF NOT EXISTS workflow_blocks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        workflow_id INTEGER NOT NULL REFERENCES workflows(id),
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        action_id INTEGER NOT NULL REFERENCES actions(id),
        ${RECORD_COLUMNS_V1}
      );
      CREATE TABLE IF NOT EXISTS workflow_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        workflow_id INTEGER NOT NULL REFERENCES workflows(id),
        ${RECORD_COLUMNS_V1}
      );
      CREATE TABLE IF NOT EXISTS workflow_run_blocks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        run_id INTEGER NOT NULL REFERENCES workflow_runs(id),
        position INTEGER NOT NULL,
        block_guid TEXT NOT NULL,
        name TEXT NOT NULL,
        action_guid TEXT NOT NULL,
        action_name TEXT NOT NULL,
        data_guid TEXT NOT NULL,
        output TEXT NOT NULL,
        ${RECORD_COLUMNS_V1}
      );
      CREATE TABLE IF NOT EXISTS datasets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        app_id INTEGER REFERENCES apps(id),
        name TEXT NOT NULL,
        description TEXT,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS datasets_workspace ON datasets (workspace_id, deleted_at);
      CREATE TABLE IF NOT EXISTS dataset_items (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        dataset_id INTEGER NOT NULL REFERENCES datasets(id),
        data_guid TEXT,
        input TEXT NOT NULL,
        output TEXT NOT NULL,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS dataset_items_dataset ON dataset_items (dataset_id, deleted_at);
      CREATE TABLE IF NOT EXISTS experiments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        app_id INTEGER NOT NULL REFERENCES apps(id),
        name TEXT NOT NULL,
        primary_action_id INTEGER NOT NULL REFERENCES actions(id),
        secondary_action_id INTEGER NOT NULL REFERENCES actions(id),
        status TEXT NOT NULL,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS experiments_workspace ON experiments (workspace_id, deleted_at);
      CREATE TABLE IF NOT EXISTS contexts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        created_by_id TEXT NOT NULL,
        deleted_at TEXT
      );
      CREATE TABLE IF NOT EXISTS documents (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        context_id INTEGER NOT NULL REFERENCES contexts(id),
        context_source_id INTEGER REFERENCES context_sources(id),
        content TEXT NOT NULL,
        filter TEXT,
        metadata TEXT NOT NULL,
        embedding TEXT,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS documents_context ON documents (context_id, deleted_at);
      CREATE INDEX IF NOT EXISTS documents_source ON documents (context_source_id, deleted_at);
      CREATE TABLE IF NOT EXISTS context_sources (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        context_id INTEGER NOT NULL REFERENCES contexts(id),
        name TEXT NOT NULL,
        url TEXT NOT NULL,
        loader_id TEXT NOT NULL,
        loader_config TEXT NOT NULL,
        splitter_config TEXT NOT NULL,
        indexing_status TEXT NOT NULL,
        indexed_at TEXT,
        indexing_metadata TEXT,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS context_sources_context ON context_sources (context_id, deleted_at);
    `,
  },
  {
    name: "what was added after 0.1.0 and before versioning: action environments, sessions, generations, feedback, fine-tunes, usage counts",
    sql: `
      -- A table of its own rather than a column: databases written before runs existed keep their actions table.
      CREATE TABLE IF NOT EXISTS action_environments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        action_id INTEGER NOT NULL REFERENCES actions(id),
        name TEXT NOT NULL,
        UNIQUE (action_id, name)
      );
      CREATE TABLE IF NOT EXISTS sessions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        action_id INTEGER NOT NULL REFERENCES actions(id),
        name TEXT,
        ext_user_id TEXT,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS sessions_workspace ON sessions (workspace_id, deleted_at);
      -- A record's Session: a table of its own, so that databases written before Sessions existed keep their data table.
      CREATE TABLE IF NOT EXISTS data_sessions (
        data_id INTEGER PRIMARY KEY REFERENCES data(id),
        session_id INTEGER NOT NULL REFERENCES sessions(id)
      );
      CREATE INDEX IF NOT EXISTS data_sessions_session ON data_sessions (session_id);
      CREATE TABLE IF NOT EXISTS generations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        action_id INTEGER NOT NULL REFERENCES actions(id),
        data_id INTEGER NOT NULL REFERENCES data(id),
        cache_key TEXT NOT NULL,
        output TEXT NOT NULL,
        experiment_id INTEGER REFERENCES experiments(id),
        variant TEXT,
        forced INTEGER NOT NULL DEFAULT 0,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS generations_cache ON generations (action_id, cache_key);
      CREATE INDEX IF NOT EXISTS generations_experiment ON generations (experiment_id, forced);
      CREATE TABLE IF NOT EXISTS feedback (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        data_id INTEGER NOT NULL REFERENCES data(id),
        type TEXT NOT NULL,
        value TEXT NOT NULL,
        source TEXT NOT NULL,
        metadata TEXT,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS feedback_workspace ON feedback (workspace_id, deleted_at);
      CREATE TABLE IF NOT EXISTS finetunes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guid TEXT NOT NULL UNIQUE,
        workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
        app_id INTEGER NOT NULL REFERENCES apps(id),
        dataset_id INTEGER REFERENCES datasets(id),
        training_dataset_id INTEGER NOT NULL REFERENCES datasets(id),
        provider_id INTEGER NOT NULL REFERENCES providers(id),
        name TEXT NOT NULL,
        data_ids TEXT NOT NULL,
        base_model TEXT NOT NULL,
        outcome TEXT NOT NULL,
        failure_reason TEXT,
        finishes_at TEXT NOT NULL,
        ${RECORD_COLUMNS_V1}
      );
      CREATE INDEX IF NOT EXISTS finetunes_workspace ON finetunes (workspace_id, deleted_at);
      CREATE INDEX IF NOT EXISTS finetunes_app ON finetunes (app_id, deleted_at);
      -- Live rows per workspace and counted table, kept by triggers (WorkspaceStore.reserve and usage read it).
      CREATE TABLE IF NOT EXISTS feature_usage (
        workspace_id INTEGER NOT NULL,
        feature TEXT NOT NULL,
        used INTEGER NOT NULL,
        PRIMARY KEY (workspace_id, feature)
      ) WITHOUT ROWID;
      ${COUNTED_V2.map(usageTriggers).join("\n")}
      DELETE FROM feature_usage;
      ${COUNTED_V2.map(
        (feature) => `INSERT INTO feature_usage (workspace_id, feature, used)
        SELECT workspace_id, '${feature}', count(*) FROM ${feature} WHERE deleted_at IS NULL GROUP BY workspace_id;`,
      ).join("\n")}
    `,
  },
];

/** The schema version this code writes and reads: the number of migrations. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The file's schema version is newer than this code knows: it was written by a newer pulumi-gms. */
export class DatabaseVersionError extends Error {
  override readonly name = "DatabaseVersionError";
  constructor(
    readonly path: string,
    /** The file's `user_version`. */
    readonly found: number,
    /** The newest version this code knows. */
    readonly known: number,
  ) {
    super(
      `The emulator database ${path} has schema version ${found}, but this pulumi-gms knows schema versions up to ${known}: ` +
        "it was written by a newer pulumi-gms. Use that newer pulumi-gms, or start the emulator with another --db file. " +
        "The file was not changed.",
    );
  }
}

/** The file holds tables, but not the emulator's (version 0 and no `workspaces` table). */
export class ForeignDatabaseError extends Error {
  override readonly name = "ForeignDatabaseError";
  constructor(readonly path: string) {
    super(
      `${path} is a SQLite database but not an emulator database (no schema version it knows, no workspaces table); start the emulator with another --db file.`,
    );
  }
}

export const schemaVersion = (sql: DatabaseSync): number =>
  (sql.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;

/** Refuses a file newer than `migrations` knows, or a version-0 file holding other tables; reads only. */
export function checkVersion(sql: DatabaseSync, path: string, migrations: readonly Migration[] = MIGRATIONS): number {
  const version = schemaVersion(sql);
  if (version > migrations.length) throw new DatabaseVersionError(path, version, migrations.length);
  if (version < 0) throw new ForeignDatabaseError(path);
  if (version === 0) {
    const tables = sql.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as {
      name: string;
    }[];
    if (tables.length > 0 && !tables.some((entry) => entry.name === "workspaces")) throw new ForeignDatabaseError(path);
  }
  return version;
}

/**
 * Brings the file to `migrations.length`: checks it (`checkVersion`), then runs the migrations it lacks and
 * sets `user_version`, in one transaction with foreign keys off (a table rebuild needs that) and
 * `foreign_key_check` passing before the commit. Returns the versions before and after.
 */
export function migrate(sql: DatabaseSync, path: string, migrations: readonly Migration[] = MIGRATIONS): { from: number; to: number } {
  const from = checkVersion(sql, path, migrations);
  const to = migrations.length;
  if (from === to) return { from, to };
  sql.exec("PRAGMA foreign_keys = OFF");
  try {
    sql.exec("BEGIN IMMEDIATE");
    try {
      for (let version = from + 1; version <= to; version++) {
        const migration = migrations[version - 1]!;
        try {
          if (typeof migration.sql === "string") sql.exec(migration.sql);
          else migration.sql(sql);
        } catch (error) {
          throw new Error(`Migration ${version} (${migration.name}) of ${path} failed: ${(error as Error).message}`, { cause: error });
        }
      }
      const broken = sql.prepare("PRAGMA foreign_key_check").all();
      if (broken.length > 0)
        throw new Error(`Migrating ${path} to version ${to} leaves ${broken.length} rows whose foreign keys name no row`);
      sql.exec(`PRAGMA user_version = ${to}`);
      sql.exec("COMMIT");
    } catch (error) {
      if (sql.isTransaction) sql.exec("ROLLBACK");
      throw error;
    }
  } finally {
    sql.exec("PRAGMA foreign_keys = ON");
  }
  return { from, to };
}
