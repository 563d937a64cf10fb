/**
 * The emulator's database is versioned (`PRAGMA user_version`, src/emulator/store/migrations.ts): a new
 * file gets every migration; a file written before versions existed (release 0.1.0, and the code up to
 * the change that added them) is recognised, migrated and served with its data; a migration adding a
 * column gives stored rows its default; a file of a newer version is refused and left byte for byte.
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator";
import {
  DatabaseVersionError,
  ForeignDatabaseError,
  MIGRATIONS,
  type Migration,
  SCHEMA_VERSION,
  Store,
  StoredRowError,
  TABLES,
} from "../../src/emulator/store";
import { APPS } from "../../src/emulator/store/apps";
import { STORE_MODULES } from "../../src/emulator/store/modules";
import { nullable, text } from "../../src/emulator/store/columns";
import { callOverHttp } from "./harness";

const digest = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const FIXTURES = join(__dirname, "..", "fixtures");
const V010 = join(FIXTURES, "state-v0.1.0");
const PRE_VERSIONING = join(FIXTURES, "db-pre-versioning");

const work = mkdtempSync(join(tmpdir(), "gms-storage-versions-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// The fixtures stand for files users keep: the tests open copies only.
const FIXTURE_FILES = [join(V010, "emulator.sqlite"), join(PRE_VERSIONING, "emulator.sqlite")];
const fixtureDigests = FIXTURE_FILES.map((file) => digest(file));
afterAll(() => expect(FIXTURE_FILES.map((file) => digest(file))).toEqual(fixtureDigests));

let count = 0;
/** A copy of a fixture database in the throw-away folder (the fixture itself is never opened). */
const copyOf = (file: string): string => {
  const copy = join(work, `copy-${++count}.sqlite`);
  copyFileSync(file, copy);
  return copy;
};
const fresh = (): string => join(work, `new-${++count}.sqlite`);

const versionOf = (file: string): number => {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
  } finally {
    db.close();
  }
};

/** What a schema holds: every table's columns (name, type, NULL rule, default), every index and trigger. */
function schemaOf(file: string): unknown {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const objects = db
      .prepare("SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
      .all() as { type: string; name: string; tbl_name: string }[];
    return objects.map((object) => ({
      ...object,
      columns:
        object.type === "table"
          ? db.prepare('SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid').all(object.name)
          : undefined,
    }));
  } finally {
    db.close();
  }
}

/** Rows per table, to show a migration kept every row. */
function rowCounts(file: string): Record<string, number> {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {
      name: string;
    }[];
    return Object.fromEntries(
      tables.map(({ name }) => [name, (db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n]),
    );
  } finally {
    db.close();
  }
}

const emulators: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.splice(0).map((emulator) => emulator.close()));
});
const serve = async (db: string, apiKey: string) => {
  const emulator = await startEmulator({ port: 0, db, apiKey });
  emulators.push(emulator);
  return emulator;
};

describe("a new database", () => {
  it("gets every migration: its version is the number of migrations and every table is as described", () => {
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
    const file = fresh();
    const store = new Store(file);
    expect(store.db.schemaVersion).toBe(MIGRATIONS.length);
    expect(TABLES.flatMap((table) => table.mismatches(store.db.sql))).toEqual([]);
    store.close();
    expect(versionOf(file)).toBe(MIGRATIONS.length);
    const memory = new Store(":memory:");
    expect(memory.db.schemaVersion).toBe(MIGRATIONS.length);
    memory.close();
  });

  it("is not migrated again when reopened", () => {
    const file = fresh();
    new Store(file).close();
    const before = schemaOf(file);
    const store = new Store(file);
    expect(store.db.schemaVersion).toBe(MIGRATIONS.length);
    store.close();
    expect(schemaOf(file)).toEqual(before);
  });
});

describe("a store module's table that no migration created (a new kind's)", () => {
  const moduleTables = Object.values(STORE_MODULES).flatMap((module) => module.tables);

  it("is created from its description when the Store opens, at the same version, and serves its store", async () => {
    const file = fresh();
    new Store(file).close();
    const db = new DatabaseSync(file);
    db.exec("DROP TABLE skills");
    db.close();
    const { store } = await serve(file, "created-table-key");
    expect(store.db.schemaVersion).toBe(MIGRATIONS.length);
    expect(TABLES.flatMap((table) => table.mismatches(store.db.sql))).toEqual([]);
    const caller = store.workspaces.authenticate("created-table-key")!;
    const skill = store.skills.createConfigured(caller, { name: "search", type: "web" });
    expect(store.skills.get(caller, skill.guid)).toMatchObject({ name: "search", type: "web" });
  });

  it("is described by each store module's tables as the migrations made them", () => {
    expect(moduleTables.map((table) => table.name)).toContain("apps");
    for (const table of moduleTables) {
      const db = new DatabaseSync(":memory:");
      db.exec(table.creation());
      expect(table.mismatches(db), table.name).toEqual([]);
      db.close();
    }
  });
});

describe("the database release 0.1.0 wrote (test/fixtures/state-v0.1.0)", () => {
  const fixture = JSON.parse(readFileSync(join(V010, "fixture.json"), "utf8")) as { apiKey: string; db: string };
  const state = JSON.parse(readFileSync(join(V010, "state.json"), "utf8")) as {
    resources: { type: string; id: string; outputs: Record<string, unknown> }[];
  };
  const idOf = (kind: string) => state.resources.find((resource) => resource.type === `pulumi-nodejs:dynamic/gms:${kind}`)!;

  it("has no version and the tables of migration 1 only", () => {
    expect(versionOf(join(V010, fixture.db))).toBe(0);
  });

  it("opens, migrates to the latest version keeping every row, and serves its objects", async () => {
    const file = copyOf(join(V010, fixture.db));
    const before = rowCounts(file);
    const emulator = await serve(file, fixture.apiKey);
    expect(emulator.store.db.schemaVersion).toBe(MIGRATIONS.length);

    const app = idOf("App");
    const got = await callOverHttp(emulator, "GET", `/apps/${app.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ guid: app.id, name: "Helpdesk", description: "Answers customer questions" });
    const workflow = idOf("Workflow");
    const flow = await callOverHttp(emulator, "GET", `/workflows/${workflow.id}`);
    expect(flow.status).toBe(200);
    expect(flow.body).toMatchObject({ guid: workflow.id, name: "Triage" });
    for (const kind of ["ProviderConnection", "Model"]) {
      const resource = idOf(kind);
      const path = kind === "Model" ? "/models" : "/providers";
      expect((await callOverHttp(emulator, "GET", `${path}/${resource.id}`)).status, kind).toBe(200);
    }
    // Usage is counted from the kept rows (feature_usage came with migration 2).
    const caller = emulator.store.workspaces.authenticate(fixture.apiKey)!;
    expect(emulator.store.workspaces.usage(caller).find((entry) => entry.feature === "apps")?.used).toBe(1);

    await emulator.close();
    emulators.splice(emulators.indexOf(emulator), 1);
    const after = rowCounts(file);
    for (const [table, rows] of Object.entries(before)) expect(after[table], table).toBeGreaterThanOrEqual(rows);
    // What the emulator adds at start (the signing key existed already; no objects are made).
    expect(after.apps).toBe(before.apps);
    expect(after.workflows).toBe(before.workflows);
    expect(versionOf(file)).toBe(MIGRATIONS.length);
  });

  it("ends with the schema a new database has", () => {
    const file = copyOf(join(V010, fixture.db));
    new Store(file).close();
    const made = fresh();
    new Store(made).close();
    expect(schemaOf(file)).toEqual(schemaOf(made));
  });
});

describe("a database written before versions existed (test/fixtures/db-pre-versioning, see its README)", () => {
  const fixture = JSON.parse(readFileSync(join(PRE_VERSIONING, "fixture.json"), "utf8")) as {
    apiKey: string;
    db: string;
    guids: Record<string, string> & { apps: string[]; workflows: string[] };
  };
  const { guids } = fixture;

  it("has no version and every table of migrations 1 and 2", () => {
    expect(versionOf(join(PRE_VERSIONING, fixture.db))).toBe(0);
    const tables = Object.keys(rowCounts(join(PRE_VERSIONING, fixture.db)));
    for (const table of ["sessions", "generations", "feedback", "finetunes", "feature_usage", "action_environments"])
      expect(tables).toContain(table);
  });

  it("opens, migrates keeping every row, and serves its objects", async () => {
    const file = copyOf(join(PRE_VERSIONING, fixture.db));
    const before = rowCounts(file);
    const emulator = await serve(file, fixture.apiKey);
    expect(emulator.store.db.schemaVersion).toBe(MIGRATIONS.length);

    const get = (path: string) => callOverHttp(emulator, "GET", path);
    for (const guid of guids.apps) expect((await get(`/apps/${guid}`)).status, `app ${guid}`).toBe(200);
    expect((await get(`/apps/${guids.apps[1]}`)).body).toMatchObject({ name: "Helpdesk", description: "Answers customer questions" });
    expect((await get(`/apps/${guids.deletedApp}`)).status).toBe(404);
    for (const guid of guids.workflows) expect((await get(`/workflows/${guid}`)).status, `workflow ${guid}`).toBe(200);
    expect((await get(`/workflows/${guids.workflows[0]}`)).body).toMatchObject({ name: "Triage" });
    expect((await get(`/providers/${guids.provider}`)).status).toBe(200);
    expect((await get(`/models/${guids.model}`)).status).toBe(200);

    // Every kind decodes from the migrated rows.
    const store = emulator.store;
    const caller = store.workspaces.authenticate(fixture.apiKey)!;
    expect(store.apps.list(caller, { skip: 0, limit: 10 }).items.map((app) => app.name)).toEqual(["Support", "Helpdesk"]);
    expect(store.actions.get(caller, guids.action!).environments).toEqual(["Production", "Staging"]);
    expect(store.workflows.get(caller, guids.workflows[0]!).app).toBe(guids.apps[0]);
    expect(store.providers.get(caller, guids.provider!)).toMatchObject({ provider: "openai", default: true, nickname: "OpenAI" });
    expect(store.models.get(caller, guids.model!)).toMatchObject({ llm: "gpt-4o-mini", provider: "openai", default: true });
    expect(store.sessions.get(caller, guids.session!)).toMatchObject({ name: "Chat", extUserId: "user-1" });
    expect(store.generations.get(caller, guids.generation!).actionGuid).toBe(guids.action);
    expect(store.feedback.get(caller, guids.feedback!)).toMatchObject({ type: "rating", value: 1, metadata: { by: "fixture" } });
    expect(store.datasets.items(caller, guids.dataset!, { skip: 0, limit: 100 }).total).toBe(10);
    expect(store.evals.get(caller, guids.eval!).evalTypes[0]).toMatchObject({ name: "Relevance" });
    expect(store.fineTunes.get(caller, guids.fineTune!)).toMatchObject({ status: "succeeded", dataIds: expect.any(Array) });
    expect(store.data.list(caller, { skip: 0, limit: 100 }).total).toBeGreaterThanOrEqual(10);
    expect(store.skills.list(caller)[0]).toMatchObject({ name: "Search", metadata: [{ name: "engine", value: "duck" }] });
    expect(store.contexts.list(caller)).toHaveLength(1);
    expect(store.workspaces.usage(caller).find((entry) => entry.feature === "apps")).toMatchObject({ used: 2, limit: 50 });

    await emulator.close();
    emulators.splice(emulators.indexOf(emulator), 1);
    const after = rowCounts(file);
    for (const [table, rows] of Object.entries(before)) expect(after[table], table).toBe(rows);
    expect(versionOf(file)).toBe(MIGRATIONS.length);
  });

  it("ends with the schema a new database has", () => {
    const file = copyOf(join(PRE_VERSIONING, fixture.db));
    new Store(file).close();
    const made = fresh();
    new Store(made).close();
    expect(schemaOf(file)).toEqual(schemaOf(made));
  });
});

describe("a migration that adds a column", () => {
  const addColor: Migration = { name: "apps.color", sql: "ALTER TABLE apps ADD COLUMN color TEXT NOT NULL DEFAULT 'none'" };
  const withColor = [...MIGRATIONS, addColor];
  const AppWithColor = APPS.extend({ color: text });

  it("gives the rows stored before it the default and new rows their value; the version is the new count", () => {
    const file = fresh();
    const before = new Store(file);
    const caller = before.workspaces.createWithKey({ name: "Colors", slug: "colors", apiKey: "gms_colors_key_0001" });
    const old = before.apps.create(caller, { name: "Old" });
    before.close();

    const store = new Store(file, { migrations: withColor });
    expect(store.db.schemaVersion).toBe(MIGRATIONS.length + 1);
    // The record type is unchanged: the stores read the columns they describe.
    expect(store.apps.get(caller, old.guid).name).toBe("Old");
    const added = store.apps.create(caller, { name: "New" });
    store.db.run("UPDATE apps SET color = ? WHERE guid = ?", "blue", added.guid);
    const inserted = store.db.run(
      `INSERT INTO apps (guid, workspace_id, name, slug, color, created_at, updated_at, created_by_id)
       VALUES ('44444444-4444-4444-8444-444444444444', ?, 'Inserted', 'inserted', 'red', 'now', 'now', ?)`,
      caller.workspaceId,
      caller.userId,
    );
    const colors = store.db.all("SELECT * FROM apps ORDER BY id").map((row) => AppWithColor.decode(row));
    expect(colors.map((row) => [row.name, row.color])).toEqual([
      ["Old", "none"],
      ["New", "blue"],
      ["Inserted", "red"],
    ]);
    expect(colors.at(-1)!.id).toBe(inserted);
    store.close();

    // Reopened with the same list: nothing to run. Reopened by code that knows one migration fewer: refused.
    const again = new Store(file, { migrations: withColor });
    expect(again.db.schemaVersion).toBe(MIGRATIONS.length + 1);
    again.close();
    expect(() => new Store(file)).toThrow(DatabaseVersionError);
  });

  it("adds a nullable column as NULL on stored rows", () => {
    const file = fresh();
    const first = new Store(file);
    const caller = first.workspaces.createWithKey({ name: "Notes", slug: "notes", apiKey: "gms_notes_key_0001" });
    first.apps.create(caller, { name: "Kept" });
    first.close();
    const store = new Store(file, { migrations: [...MIGRATIONS, { name: "apps.note", sql: "ALTER TABLE apps ADD COLUMN note TEXT" }] });
    const rows = store.db.all("SELECT * FROM apps").map((row) => APPS.extend({ note: nullable(text) }).decode(row));
    expect(rows.map((row) => row.note)).toEqual([null]);
    store.close();
  });

  it("runs in one transaction: a failing migration leaves the version and the rows as they were", () => {
    const file = fresh();
    const first = new Store(file);
    const caller = first.workspaces.createWithKey({ name: "Fail", slug: "fail", apiKey: "gms_fail_key_0001" });
    first.apps.create(caller, { name: "Kept" });
    first.close();
    const failing: Migration[] = [...MIGRATIONS, addColor, { name: "broken", sql: "ALTER TABLE no_such_table ADD COLUMN x TEXT" }];
    expect(() => new Store(file, { migrations: failing })).toThrow(/Migration 4 \(broken\).*no such table/);
    expect(versionOf(file)).toBe(MIGRATIONS.length);
    const db = new DatabaseSync(file, { readOnly: true });
    const columns = (db.prepare("SELECT name FROM pragma_table_info('apps')").all() as { name: string }[]).map((column) => column.name);
    db.close();
    expect(columns).not.toContain("color");
  });
});

describe("a database of a newer version", () => {
  /** A database as this code leaves it (WAL mode, closed cleanly), then marked one version ahead. */
  const newer = (journal: "WAL" | "DELETE"): string => {
    const file = fresh();
    const store = new Store(file);
    store.workspaces.createWithKey({ name: "Future", slug: "future", apiKey: "gms_future_key_0001" });
    store.close();
    const db = new DatabaseSync(file);
    db.exec(`PRAGMA journal_mode = ${journal}; PRAGMA user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    return file;
  };
  const siblings = (file: string) => readdirSync(work).filter((name) => name.startsWith(file.split("/").pop()!));

  it.each(["WAL", "DELETE"] as const)(
    "is refused with both versions and what to do, and left byte for byte (%s journal)",
    async (journal) => {
      const file = newer(journal);
      const digest0 = digest(file);
      const files0 = siblings(file);
      const expected = `has schema version ${MIGRATIONS.length + 1}, but this pulumi-gms knows schema versions up to ${MIGRATIONS.length}`;
      let error: unknown;
      try {
        new Store(file);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(DatabaseVersionError);
      expect((error as Error).message).toContain(expected);
      expect((error as Error).message).toContain("Use that newer pulumi-gms, or start the emulator with another --db file");
      await expect(startEmulator({ port: 0, db: file, apiKey: "gms_future_key_0001" })).rejects.toThrow(expected);
      expect(digest(file)).toBe(digest0);
      expect(siblings(file)).toEqual(files0);
      expect(versionOf(file)).toBe(MIGRATIONS.length + 1);
    },
  );
});

describe("a file that is not the emulator's", () => {
  it("is refused unchanged when it holds other tables and no version", () => {
    const file = fresh();
    const db = new DatabaseSync(file);
    db.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')");
    db.close();
    const digest0 = digest(file);
    expect(() => new Store(file)).toThrow(ForeignDatabaseError);
    expect(digest(file)).toBe(digest0);
  });

  it("is refused row by row when a stored row does not fit its description", () => {
    const file = fresh();
    const store = new Store(file);
    const caller = store.workspaces.createWithKey({ name: "Edit", slug: "edit", apiKey: "gms_edit_key_0001" });
    const app = store.apps.create(caller, { name: "Edited" });
    store.db.run("UPDATE apps SET slug = x'2a2a' WHERE id = ?", app.id);
    expect(() => store.apps.get(caller, app.guid)).toThrow(StoredRowError);
    expect(() => store.apps.get(caller, app.guid)).toThrow(`apps row ${app.id}: column slug holds BLOB of 2 bytes, expected TEXT NOT NULL`);
    store.close();
    expect(existsSync(file)).toBe(true);
  });
});
