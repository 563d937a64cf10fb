import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import type { Page } from "./records";

export type SqlValue = SQLInputValue;
export type Row = Record<string, SqlValue>;

/**
 * The SQLite connection (built-in `node:sqlite`). `:memory:` gives a throw-away database; a file path
 * keeps everything across restarts. Each kind's store creates its own tables on construction.
 */
export class Database {
  readonly sql: DatabaseSync;
  private depth = 0;

  constructor(readonly path: string) {
    this.sql = new DatabaseSync(path);
    this.sql.exec("PRAGMA foreign_keys = ON");
    if (path !== ":memory:") {
      this.sql.exec("PRAGMA journal_mode = WAL");
      this.sql.exec("PRAGMA synchronous = NORMAL");
    }
  }

  all<T = Row>(query: string, ...params: SqlValue[]): T[] {
    return this.sql.prepare(query).all(...params) as T[];
  }

  get<T = Row>(query: string, ...params: SqlValue[]): T | undefined {
    return this.sql.prepare(query).get(...params) as T | undefined;
  }

  /** One page of `SELECT select from ORDER BY order`, plus the count of every row `from` (`FROM … WHERE …`) matches. */
  paged<T = Row>(from: string, args: SqlValue[], page: Page, options: { select?: string; order: string }): { rows: T[]; total: number } {
    const total = this.get<{ n: number }>(`SELECT count(*) AS n ${from}`, ...args)!.n;
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
    return Number(this.sql.prepare(query).run(...params).lastInsertRowid);
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
    if (this.sql.isOpen) this.sql.close();
  }
}
