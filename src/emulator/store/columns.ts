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

/** One column: its declared type, whether it may hold NULL, and how a stored value becomes a field and back. */
export interface Column<T> {
  readonly type: SqlType;
  readonly nullable: boolean;
  /** The field for a stored value, or `INVALID` when the value does not fit the column. */
  readonly decode: (value: unknown) => T | typeof INVALID;
  /** The stored value of a field (a method, so that a column of any `T` is a `Column<unknown>`). */
  encode(value: T): SqlInput;
}

export const INVALID: unique symbol = Symbol("invalid");

const column = <T>(
  type: SqlType,
  decode: (value: unknown) => T | typeof INVALID,
  encode: (value: T) => SqlInput = (value) => value as SqlInput,
): Column<T> => ({ type, nullable: false, decode, encode });

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
export const flag: Column<boolean> = column(
  "INTEGER",
  (value) => {
    const n = toInteger(value);
    return n === 0 ? false : n === 1 ? true : INVALID;
  },
  Number,
);

/** TEXT holding one of `values` (a closed set the code switches on). */
export const oneOf = <const V extends readonly string[]>(values: V): Column<V[number]> =>
  column("TEXT", (value) => (typeof value === "string" && values.includes(value) ? (value as V[number]) : INVALID));

/**
 * TEXT holding JSON, parsed; `check` (e.g. a zod schema's `safeParse`) validates the parsed value, and
 * without it the value is `unknown` for the caller to narrow.
 */
export function json<T = unknown>(check?: (value: unknown) => { success: true; data: T } | { success: false }): Column<T> {
  return column(
    "TEXT",
    (value) => {
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
    },
    JSON.stringify,
  );
}

/** The same column, NULL allowed (read as `null`). */
export const nullable = <T>(inner: Column<T>): Column<T | null> => ({
  type: inner.type,
  nullable: true,
  decode: (value) => (value === null || value === undefined ? null : inner.decode(value)),
  encode: (value) => (value === null ? null : inner.encode(value)),
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
  /** Each column, the field it decodes to, and its codec. */
  private readonly entries: (readonly [column: string, field: string, codec: Column<unknown>])[];

  constructor(
    /** The table (or query) named in errors. */
    readonly source: string,
    readonly columns: C,
    /** The field a column decodes to (RecordTable: its camelCase); default the column's own name. */
    fieldOf: (column: string) => string = (column) => column,
  ) {
    this.entries = Object.entries(columns).map(([column, codec]) => [column, fieldOf(column), codec] as const);
  }

  decode(row: RawRow): RowOf<C> {
    const out: Record<string, unknown> = {};
    for (const [name, field, col] of this.entries) {
      const value = col.decode(row[name]);
      if (value === INVALID) {
        const id = row.id ?? row.guid;
        throw new StoredRowError(
          `${this.source}${id === undefined ? "" : ` row ${String(id)}`}: column ${name} holds ${describe(row[name])}, ` +
            `expected ${col.type}${col.nullable ? "" : " NOT NULL"}`,
        );
      }
      out[field] = value;
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
  exists(sql: DatabaseSync): boolean {
    return sql.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(this.name) !== undefined;
  }

  /**
   * The statement creating the table as described, for a store module's table that no migration creates
   * (./module.ts): each column with its type and NULL rule, `id` the key the rows are numbered by, `guid` unique.
   */
  creation(): string {
    const columns = Object.entries(this.columns).map(
      ([name, col]) =>
        `${name} ${col.type}${name === "id" ? " PRIMARY KEY AUTOINCREMENT" : col.nullable ? "" : " NOT NULL"}${name === "guid" ? " UNIQUE" : ""}`,
    );
    return `CREATE TABLE ${this.name} (${columns.join(", ")})`;
  }

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

/** A row in the package's names: the record a store returns and a route's codec encodes. */
export type TableRecord<C extends Columns> = Camelized<RowOf<C>>;

/** A record of a table with derived fields. */
type ViewRecord<C extends Columns, J extends Columns> = TableRecord<Omit<C, keyof J> & J>;

/** The record a RecordTable reads, e.g. `StoredRecord<typeof RECORDS>` beside a store's `RECORDS`. */
export type StoredRecord<T extends { record(row: RawRow): unknown }> = ReturnType<T["record"]>;

/** The queries a RecordTable runs: the store's Database (./database.ts). */
export interface RecordSql {
  run(query: string, ...params: SqlInput[]): number;
  get(query: string, ...params: SqlInput[]): RawRow | undefined;
  all(query: string, ...params: SqlInput[]): RawRow[];
  paged(
    from: string,
    args: SqlInput[],
    page: { skip: number; limit: number },
    options: { select: string; order: string },
  ): { rows: RawRow[]; total: number };
}

/**
 * Fields a table's records carry besides its columns, each an SQL expression (over the table and its `joins`)
 * and its codec: a linked row's GUID under the name the wire gives it (`app: ["p.guid", text]`), or a value
 * computed from the row (`deleted: ["experiments.deleted_at IS NOT NULL", flag]`).
 */
export type Derived<J extends Columns> = { readonly [K in keyof J]: readonly [sql: string, column: J[K]] };

/** An order of records: fields, each ascending unless given as `{ desc: field }`. */
export type Order<R> = ((keyof R & string) | { desc: keyof R & string })[];

/** Which records: fields equal to their values (null: IS NULL), undefined ones ignored. */
export type Where<R> = { readonly [K in keyof R]?: R[K] | undefined };

/**
 * A table's rows as records in the package's names, written and read generically: a store whose fields are
 * its columns writes no INSERT, UPDATE, SELECT or row mapper, so a plain field is its column in the description
 * (and the migration that adds it). Records may carry derived fields (`derived`: linked GUIDs, computed values)
 * and leave out hidden columns; queries name fields in the package's names, and a key that is no column is left
 * out of a write.
 */
export class RecordTable<C extends Columns, J extends Columns = {}, H extends keyof C & string = never> {
  private readonly codec: RowCodec<Omit<Omit<C, H>, keyof J> & J>;
  /** Each field's SQL (`table.column`, or a derived field's expression), codec, and column when it is one of the table's. */
  private readonly fields: Map<string, { sql: string; codec: Column<unknown>; column?: string }>;
  private readonly select: string;
  private readonly from: string;
  /**
   * Statement texts by the shape of the call that needs them (which fields a `where` names and which of those are
   * null, the order, which fields a write sets): a shape is composed once, and every later call of it passes the
   * same string to the Database, whose statement cache then finds it without hashing a new text.
   */
  private readonly texts = new Map<string, string>();

  constructor(
    readonly table: Table<C>,
    /** `hidden`: columns written but never read, such as a credential no record may carry. */
    view: { joins?: string; derived?: Derived<J>; hidden?: readonly H[] } = {},
  ) {
    const derived: [string, readonly [string, Column<unknown>]][] = Object.entries(view.derived ?? {});
    const hidden = new Set<string>(view.hidden);
    const read = Object.entries(table.columns).filter(([column]) => !hidden.has(column));
    this.codec = new RowCodec(
      table.name,
      Object.fromEntries([...read, ...derived.map(([name, [, codec]]) => [name, codec] as const)]) as never,
      camelCase,
    );
    this.fields = new Map([
      ...Object.entries(table.columns).map(
        ([column, codec]) => [camelCase(column), { sql: `${table.name}.${column}`, codec, column }] as const,
      ),
      ...derived.map(([name, [sql, codec]]) => [camelCase(name), { sql, codec }] as const),
    ]);
    this.select = [...read.map(([column]) => `${table.name}.${column}`), ...derived.map(([name, [sql]]) => `${sql} AS "${name}"`)].join(
      ", ",
    );
    this.from = `FROM ${table.name}${view.joins ? ` ${view.joins}` : ""}`;
  }

  /** The decoded row in the package's names. */
  record(row: RawRow): ViewRecord<Omit<C, H>, J> {
    return this.codec.decode(row) as ViewRecord<Omit<C, H>, J>;
  }

  /** The first record that matches (by `order`), if any. */
  find(
    db: RecordSql,
    where: Where<ViewRecord<Omit<C, H>, J>>,
    order?: Order<ViewRecord<Omit<C, H>, J>>,
  ): ViewRecord<Omit<C, H>, J> | undefined {
    const shape = `find ${whereShape(where)}${orderShape(order)}`;
    let query = this.texts.get(shape);
    if (query === undefined) {
      query = `SELECT ${this.select} ${this.from} WHERE ${this.condition(where)} ORDER BY ${this.orderBy(order)} LIMIT 1`;
      this.texts.set(shape, query);
    }
    const row = db.get(query, ...this.arguments(where));
    return row && this.record(row);
  }

  /** Every record that matches, in `order` (by default by id). */
  list(db: RecordSql, where: Where<ViewRecord<Omit<C, H>, J>>, order?: Order<ViewRecord<Omit<C, H>, J>>): ViewRecord<Omit<C, H>, J>[] {
    const shape = `list ${whereShape(where)}${orderShape(order)}`;
    let query = this.texts.get(shape);
    if (query === undefined) {
      query = `SELECT ${this.select} ${this.from} WHERE ${this.condition(where)} ORDER BY ${this.orderBy(order)}`;
      this.texts.set(shape, query);
    }
    return db.all(query, ...this.arguments(where)).map((row) => this.record(row));
  }

  /** One page of the records that match, in `order`, and the count of all of them. */
  page(
    db: RecordSql,
    where: Where<ViewRecord<Omit<C, H>, J>>,
    page: { skip: number; limit: number },
    order?: Order<ViewRecord<Omit<C, H>, J>>,
  ): { items: ViewRecord<Omit<C, H>, J>[]; total: number } {
    const { rows, total } = db.paged(`${this.from} WHERE ${this.condition(where)}`, this.arguments(where), page, {
      select: this.select,
      order: this.orderBy(order),
    });
    return { items: rows.map((row) => this.record(row)), total };
  }

  /** `INSERT` of the given fields (the others take their column's default); returns the new row's id. */
  insert(db: RecordSql, values: Partial<TableRecord<C>>): number {
    const columns = this.columnsOf(values);
    const shape = `insert ${columns.map(([column]) => column).join(",")}`;
    let query = this.texts.get(shape);
    if (query === undefined) {
      const placeholders = columns.map(() => "?").join(", ");
      query = `INSERT INTO ${this.table.name} (${columns.map(([column]) => column).join(", ")}) VALUES (${placeholders})`;
      this.texts.set(shape, query);
    }
    return db.run(query, ...columns.map(([, value]) => value));
  }

  /** `UPDATE … SET` of the given fields (an undefined one keeps its value, a null one is cleared) of row `id`. */
  update(db: RecordSql, id: number, values: Partial<TableRecord<C>>): void {
    this.set(db, { id }, values);
  }

  /** The same of every row that matches (by the table's own columns). */
  updateAll(db: RecordSql, where: Where<TableRecord<C>>, values: Partial<TableRecord<C>>): void {
    this.set(db, where, values);
  }

  private set(db: RecordSql, where: Where<Record<string, unknown>>, values: Partial<TableRecord<C>>): void {
    const columns = this.columnsOf(values);
    if (columns.length === 0) return;
    const shape = `update ${columns.map(([column]) => column).join(",")} ${whereShape(where)}`;
    let query = this.texts.get(shape);
    if (query === undefined) {
      query = `UPDATE ${this.table.name} SET ${columns.map(([column]) => `${column} = ?`).join(", ")} WHERE ${this.condition(where)}`;
      this.texts.set(shape, query);
    }
    db.run(query, ...columns.map(([, value]) => value), ...this.arguments(where));
  }

  /** The condition of a `where` (its shape: which fields are named, which of them null). */
  private condition(where: Where<Record<string, unknown>>): string {
    const terms: string[] = [];
    for (const name in where) {
      const value = where[name];
      if (value !== undefined) terms.push(`${this.field(name).sql} ${value === null ? "IS NULL" : "= ?"}`);
    }
    return terms.length === 0 ? "1" : terms.join(" AND ");
  }

  /** The values a `where`'s condition binds, in its order: each non-null field's stored value. */
  private arguments(where: Where<Record<string, unknown>>): SqlInput[] {
    const args: SqlInput[] = [];
    for (const name in where) {
      const value = where[name];
      if (value !== undefined && value !== null) args.push(this.field(name).codec.encode(value));
    }
    return args;
  }

  /** By the fields given, else by id (creation order). */
  private orderBy(order: Order<Record<string, unknown>> = ["id"]): string {
    return order.map((name) => (typeof name === "string" ? this.field(name).sql : `${this.field(name.desc).sql} DESC`)).join(", ");
  }

  private field(name: string) {
    const field = this.fields.get(name);
    if (field === undefined) throw new Error(`${this.table.name} has no field ${name}`);
    return field;
  }

  /** The given fields that are columns, with their stored values. */
  private columnsOf(values: Partial<TableRecord<C>>): [string, SqlInput][] {
    const columns: [string, SqlInput][] = [];
    for (const name in values) {
      const value = (values as Record<string, unknown>)[name];
      const field = this.fields.get(name);
      if (value !== undefined && field?.column !== undefined) columns.push([field.column, field.codec.encode(value)]);
    }
    return columns;
  }
}

/** Which fields a `where` names and which of them are null: what its condition's text depends on. */
function whereShape(where: Readonly<Record<string, unknown>>): string {
  let shape = "";
  for (const name in where) {
    const value = where[name];
    if (value !== undefined) shape += value === null ? `${name}=null,` : `${name},`;
  }
  return shape;
}

/** An order as a key (none: the default). */
const orderShape = (order: Order<Record<string, unknown>> | undefined): string =>
  order === undefined ? "" : ` order ${order.map((name) => (typeof name === "string" ? name : `-${name.desc}`)).join(",")}`;

/** A `SELECT count(*) AS n` row. */
export const COUNT = new RowCodec("count", { n: integer });
