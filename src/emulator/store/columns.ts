/**
 * Row codecs: a table's columns described once, as a typed list, from which both the row type and the
 * decoding of what SQLite returns derive. A row is decoded (each value checked against its column's
 * storage type and converted: 0/1 to a boolean, JSON text to a value), never cast; a value of the wrong
 * type is a `StoredRowError` naming the table, the row and the column, not a record with a wrong field.
 *
 * The description is of the schema as the last migration leaves it (./migrations.ts holds the history);
 * `Table.mismatches` compares it with a database, and the Store refuses to start on any difference.
 */
import { type Camelized, camelCase } from "../../api/wire";
import type { DatabaseSync, SQLInputValue as SqlInput } from "node:sqlite";

/** SQLite's storage classes as column types are declared in this project's tables. */
export type SqlType = "INTEGER" | "TEXT" | "REAL" | "BLOB";

/** One column: its declared type, whether it may hold NULL, and how a stored value becomes a field. */
export interface Column<T> {
  readonly type: SqlType;
  readonly nullable: boolean;
  /** The field for a stored value, or `INVALID` when the value does not fit the column. */
  readonly decode: (value: unknown) => T | typeof INVALID;
}

export const INVALID: unique symbol = Symbol("invalid");

const column = <T>(type: SqlType, decode: (value: unknown) => T | typeof INVALID): Column<T> => ({ type, nullable: false, decode });

const toInteger = (value: unknown): number | typeof INVALID => {
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : INVALID;
  if (typeof value === "bigint") return value >= Number.MIN_SAFE_INTEGER && value <= Number.MAX_SAFE_INTEGER ? Number(value) : INVALID;
  return INVALID;
};

/** INTEGER: a whole number. */
export const integer: Column<number> = column("INTEGER", toInteger);

/** REAL: a number (SQLite may hand back a whole one). */
export const real: Column<number> = column("REAL", (value) =>
  typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : INVALID,
);

/** TEXT. */
export const text: Column<string> = column("TEXT", (value) => (typeof value === "string" ? value : INVALID));

/** BLOB: bytes. */
export const blob: Column<Uint8Array> = column("BLOB", (value) => (value instanceof Uint8Array ? value : INVALID));

/** A boolean stored as INTEGER 0 or 1. */
export const flag: Column<boolean> = column("INTEGER", (value) => {
  const n = toInteger(value);
  return n === 0 ? false : n === 1 ? true : INVALID;
});

/** TEXT holding one of `values` (a closed set the code switches on). */
export const oneOf = <const V extends readonly string[]>(values: V): Column<V[number]> =>
  column("TEXT", (value) => (typeof value === "string" && values.includes(value) ? (value as V[number]) : INVALID));

/**
 * TEXT holding JSON, parsed; `check` (e.g. a zod schema's `safeParse`) validates the parsed value, and
 * without it the value is `unknown` for the caller to narrow.
 */
export function json<T = unknown>(check?: (value: unknown) => { success: true; data: T } | { success: false }): Column<T> {
  return column("TEXT", (value) => {
    if (typeof value !== "string") return INVALID;
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return INVALID;
    }
    if (!check) return parsed as T;
    const result = check(parsed);
    return result.success ? result.data : INVALID;
  });
}

/** The same column, NULL allowed (read as `null`). */
export const nullable = <T>(inner: Column<T>): Column<T | null> => ({
  type: inner.type,
  nullable: true,
  decode: (value) => (value === null || value === undefined ? null : inner.decode(value)),
});

export type Columns = Record<string, Column<unknown>>;

/** The decoded row of a column list. */
export type RowOf<C extends Columns> = { -readonly [K in keyof C]: C[K] extends Column<infer T> ? T : never };

/** A row of the stored value of a record: what a query returns, to be decoded. */
export type RawRow = Record<string, unknown>;

/** A stored row that does not fit its description (the database was edited, or a migration is missing). */
export class StoredRowError extends Error {
  override readonly name = "StoredRowError";
}

const describe = (value: unknown): string =>
  value === null || value === undefined
    ? "NULL"
    : typeof value === "string"
      ? `TEXT ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`
      : value instanceof Uint8Array
        ? `BLOB of ${value.length} bytes`
        : `${typeof value} ${String(value)}`;

/** Decodes the rows of one query shape: a table's columns, some of them, or with joined columns added. */
export class RowCodec<C extends Columns> {
  private readonly entries: [string, Column<unknown>][];

  constructor(
    /** The table (or query) named in errors. */
    readonly source: string,
    readonly columns: C,
  ) {
    this.entries = Object.entries(columns);
  }

  decode(row: RawRow): RowOf<C> {
    const out: Record<string, unknown> = {};
    for (const [name, col] of this.entries) {
      const value = col.decode(row[name]);
      if (value === INVALID) {
        const id = row.id ?? row.guid;
        throw new StoredRowError(
          `${this.source}${id === undefined ? "" : ` row ${String(id)}`}: column ${name} holds ${describe(row[name])}, ` +
            `expected ${col.type}${col.nullable ? "" : " NOT NULL"}`,
        );
      }
      out[name] = value;
    }
    return out as RowOf<C>;
  }

  /** Only these columns (a query that selects fewer). */
  pick<K extends keyof C & string>(...names: K[]): RowCodec<Pick<C, K>> {
    return new RowCodec(this.source, Object.fromEntries(names.map((name) => [name, this.columns[name]])) as Pick<C, K>);
  }

  /** These columns besides (a query that joins or computes more). */
  extend<E extends Columns>(extra: E): RowCodec<Omit<C, keyof E> & E> {
    return new RowCodec(this.source, { ...this.columns, ...extra } as Omit<C, keyof E> & E);
  }
}

/** A table's description: its name and every column it has after the last migration. */
export class Table<C extends Columns = Columns> extends RowCodec<C> {
  constructor(
    readonly name: string,
    columns: C,
  ) {
    super(name, columns);
  }

  /**
   * How the table in `sql` differs from this description: a missing table, a missing column, another
   * declared type or another NULL rule. Columns the description does not name are allowed.
   */
  mismatches(sql: DatabaseSync): string[] {
    const info = sql.prepare(`SELECT name, type, "notnull" AS not_null, pk FROM pragma_table_info(?)`).all(this.name) as {
      name: string;
      type: string;
      not_null: number;
      pk: number;
    }[];
    if (info.length === 0) return [`table ${this.name} is missing`];
    const problems: string[] = [];
    for (const [name, col] of Object.entries(this.columns)) {
      const found = info.find((entry) => entry.name === name);
      if (!found) problems.push(`${this.name}.${name} is missing`);
      else if (found.type.toUpperCase() !== col.type) problems.push(`${this.name}.${name} is ${found.type}, expected ${col.type}`);
      else if (!found.pk && (found.not_null === 1) === col.nullable) {
        problems.push(
          `${this.name}.${name} is ${found.not_null ? "NOT NULL" : "nullable"}, expected ${col.nullable ? "nullable" : "NOT NULL"}`,
        );
      }
    }
    return problems;
  }
}

export const table = <const C extends Columns>(name: string, columns: C): Table<C> => new Table(name, columns);

/** A value as its column stores it: a flag as 0/1, a JSON column's value as its text. */
const stored = (value: unknown): SqlInput =>
  typeof value === "boolean"
    ? Number(value)
    : value !== null && typeof value === "object" && !(value instanceof Uint8Array)
      ? JSON.stringify(value)
      : (value as SqlInput);

/** A table's row in the package's names: the record a store returns and a route's codec encodes. */
export type RecordOf<C extends Columns> = Camelized<RowOf<C>>;

/**
 * A table's rows as records in the package's names, written and read generically: a store whose fields are
 * its columns writes no INSERT, UPDATE or row mapper, so a plain field is its column in the description (and
 * the migration that adds it). `values` name columns in the package's names; a key that is no column is left out.
 */
export class RecordTable<C extends Columns> {
  private readonly byField: Map<string, string>;

  constructor(readonly table: Table<C>) {
    this.byField = new Map(Object.keys(table.columns).map((column) => [camelCase(column), column]));
  }

  /** The decoded row in the package's names. */
  record(row: RawRow): RecordOf<C> {
    const decoded = this.table.decode(row) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(decoded).map(([column, value]) => [camelCase(column), value])) as RecordOf<C>;
  }

  /** `INSERT` of the given fields (the others take their column's default); returns the new row's id. */
  insert(db: { run(query: string, ...params: SqlInput[]): number }, values: Partial<RecordOf<C>>): number {
    const columns = this.columnsOf(values);
    const placeholders = columns.map(() => "?").join(", ");
    return db.run(
      `INSERT INTO ${this.table.name} (${columns.map(([column]) => column).join(", ")}) VALUES (${placeholders})`,
      ...columns.map(([, value]) => value),
    );
  }

  /** `UPDATE … SET` of the given fields (an undefined one keeps its value, a null one is cleared) of row `id`. */
  update(db: { run(query: string, ...params: SqlInput[]): number }, id: number, values: Partial<RecordOf<C>>): void {
    const columns = this.columnsOf(values);
    if (columns.length === 0) return;
    db.run(
      `UPDATE ${this.table.name} SET ${columns.map(([column]) => `${column} = ?`).join(", ")} WHERE id = ?`,
      ...columns.map(([, value]) => value),
      id,
    );
  }

  private columnsOf(values: Partial<RecordOf<C>>): [string, SqlInput][] {
    return Object.entries(values)
      .filter(([field, value]) => value !== undefined && this.byField.has(field))
      .map(([field, value]) => [this.byField.get(field)!, stored(value)]);
  }
}

/** A `SELECT count(*) AS n` row. */
export const COUNT = new RowCodec("count", { n: integer });
