import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { Clock } from "../clock";
import type { Page } from "./records";

const MAX_CACHED_STATEMENTS = 1000;

export type SqlValue = SQLInputValue;
export type Row = Record<string, SqlValue>;

/**
 * The SQLite connection (built-in `node:sqlite`). `:memory:` gives a throw-away database; a file path
 * keeps everything across restarts. Each kind's store creates its own tables on construction.
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
  ) {
    this.sql = new DatabaseSync(path);
    this.sql.exec("PRAGMA foreign_keys = ON");
    if (path !== ":memory:") {
      this.sql.exec("PRAGMA journal_mode = WAL");
      this.sql.exec("PRAGMA synchronous = NORMAL");
    }
  }

  all<T = Row>(query: string, ...params: SqlValue[]): T[] {
    return this.prepared(query).all(...params) as T[];
  }

  get<T = Row>(query: string, ...params: SqlValue[]): T | undefined {
    return this.prepared(query).get(...params) as T | undefined;
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
