import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { Clock } from "../clock";
import { COUNT } from "./columns";
import { DatabaseVersionError, MIGRATIONS, type Migration, checkVersion, migrate, schemaVersion } from "./migrations";
import type { Page } from "./records";

const MAX_CACHED_STATEMENTS = 1000;

export type SqlValue = SQLInputValue;
export type Row = Record<string, SqlValue>;

/**
 * The SQLite connection (built-in `node:sqlite`). `:memory:` gives a throw-away database; a file path
 * keeps everything across restarts. Opening brings the file's schema up to date (./migrations.ts): a file
 * written by a newer pulumi-gms is refused before anything is written to it.
 */
export class Database {
  readonly sql: DatabaseSync;
  private depth = 0;
  /**
   * Prepared statements by SQL text. A `StatementSync` is reset and rebound on every `run`/`get`/`all`, and
   * those run to completion synchronously, so one statement per text serves every caller. Texts are the
   * stores' own (values are always bound); the cap only guards against a store composing texts freely.
   */
  private readonly statements = new Map<string, StatementSync>();

  constructor(
    readonly path: string,
    /** The service's clock, which every store stamps its records by (see ../clock). */
    readonly clock: Clock = new Clock(),
    /** The schema history to bring the file to (tests give their own; default: ./migrations.ts). */
    migrations: readonly Migration[] = MIGRATIONS,
  ) {
    if (path !== ":memory:" && existsSync(path)) refuseNewer(path, migrations);
    this.sql = new DatabaseSync(path);
    try {
      checkVersion(this.sql, path, migrations); // reads only: a refused file is not switched to WAL either
      if (path !== ":memory:") {
        this.sql.exec("PRAGMA journal_mode = WAL");
        this.sql.exec("PRAGMA synchronous = NORMAL");
      }
      migrate(this.sql, path, migrations);
      this.sql.exec("PRAGMA foreign_keys = ON");
    } catch (error) {
      this.sql.close();
      throw error;
    }
  }

  /** The file's schema version (`PRAGMA user_version`): after opening, the number of migrations. */
  get schemaVersion(): number {
    return schemaVersion(this.sql);
  }

  /**
   * The rows of a query, undecoded. The stores decode every row they read with their table's description
   * (./columns.ts) and leave `T` at `Row`; naming another `T` is a cast, for tests' ad-hoc queries only.
   */
  all<T = Row>(query: string, ...params: SqlValue[]): T[] {
    return this.prepared(query).all(...params) as T[];
  }

  get<T = Row>(query: string, ...params: SqlValue[]): T | undefined {
    return this.prepared(query).get(...params) as T | undefined;
  }

  /** One page of `SELECT select from ORDER BY order`, plus the count of every row `from` (`FROM … WHERE …`) matches. */
  paged<T = Row>(from: string, args: SqlValue[], page: Page, options: { select?: string; order: string }): { rows: T[]; total: number } {
    const total = COUNT.decode(this.get(`SELECT count(*) AS n ${from}`, ...args)!).n;
    const rows = this.all<T>(
      `SELECT ${options.select ?? "*"} ${from} ORDER BY ${options.order} LIMIT ? OFFSET ?`,
      ...args,
      page.limit,
      page.skip,
    );
    return { rows, total };
  }

  /** Runs a statement and returns the rowid it inserted. */
  run(query: string, ...params: SqlValue[]): number {
    return Number(this.prepared(query).run(...params).lastInsertRowid);
  }

  /** Runs `fn` atomically; nested calls join the outer transaction through savepoints. */
  transaction<T>(fn: () => T): T {
    const savepoint = `sp${this.depth}`;
    this.sql.exec(this.depth === 0 ? "BEGIN IMMEDIATE" : `SAVEPOINT ${savepoint}`);
    this.depth++;
    try {
      const result = fn();
      this.depth--;
      this.sql.exec(this.depth === 0 ? "COMMIT" : `RELEASE ${savepoint}`);
      return result;
    } catch (error) {
      this.depth--;
      this.sql.exec(this.depth === 0 ? "ROLLBACK" : `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
      throw error;
    }
  }

  close(): void {
    this.statements.clear();
    if (this.sql.isOpen) this.sql.close();
  }

  private prepared(query: string): StatementSync {
    let statement = this.statements.get(query);
    if (!statement) {
      if (this.statements.size >= MAX_CACHED_STATEMENTS) this.statements.clear();
      statement = this.sql.prepare(query);
      this.statements.set(query, statement);
    }
    return statement;
  }
}

/**
 * Refuses a file written by a newer pulumi-gms before anything opens it for writing: the version is read
 * from the file header (`user_version` is bytes 60-63), so the file and its folder are left exactly as they
 * were (even a read-only connection would add -wal and -shm files beside a WAL file). When a non-empty
 * -wal file may hold a newer header, a read-only connection reads it instead.
 */
function refuseNewer(path: string, migrations: readonly Migration[]): void {
  const wal = `${path}-wal`;
  if (!(existsSync(wal) && statSync(wal).size > 0)) {
    const header = Buffer.alloc(100);
    const fd = openSync(path, "r");
    let read: number;
    try {
      read = readSync(fd, header, 0, 100, 0);
    } finally {
      closeSync(fd);
    }
    if (read < 100 || header.toString("latin1", 0, 16) !== "SQLite format 3\0") return; // empty, or not SQLite: the open says so
    const version = header.readInt32BE(60);
    if (version > migrations.length) throw new DatabaseVersionError(path, version, migrations.length);
    return;
  }
  const probe = new DatabaseSync(path, { readOnly: true });
  try {
    checkVersion(probe, path, migrations);
  } finally {
    probe.close();
  }
}
