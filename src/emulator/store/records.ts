/** What every stored record shares: identity, audit fields, JSON columns and paging. */
import { randomUUID } from "node:crypto";

/** Who is calling: the workspace the API key selects and the user it belongs to. */
export interface Caller {
  workspaceId: number;
  userId: string;
}

export interface Page {
  skip: number;
  limit: number;
}

/** A page of records plus the count of all matching records. */
export interface Paged<T> {
  items: T[];
  total: number;
}

/** The audit fields of a record. */
export interface Audited {
  createdAt: string;
  updatedAt: string;
  createdById: string;
  lastUpdatedById: string | null;
}

/**
 * The columns every kind's table ends with: the audit fields and the soft-delete mark (a deleted record
 * keeps its row with `deleted_at` set).
 */
export const RECORD_COLUMNS =
  "created_at TEXT NOT NULL, updated_at TEXT NOT NULL, created_by_id TEXT NOT NULL, last_updated_by_id TEXT, deleted_at TEXT";

/** A row's audit columns as record fields. */
export const audited = (row: Record<string, unknown>): Audited => ({
  createdAt: row.created_at as string,
  updatedAt: row.updated_at as string,
  createdById: row.created_by_id as string,
  lastUpdatedById: (row.last_updated_by_id as string | null) ?? null,
});

export const newGuid = (): string => randomUUID();

/** JSON columns: stored as text, `null` stays SQL NULL. */
export const toJson = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));
export const fromJson = <T>(text: unknown): T | null => (typeof text === "string" ? (JSON.parse(text) as T) : null);

/** SQLite stores booleans as 0/1. */
export const toFlag = (value: boolean | null | undefined): number => (value ? 1 : 0);
export const fromFlag = (value: unknown): boolean => value === 1 || value === 1n;

/** Lowercase words joined by dashes: "Customer Support!" -> "customer-support". */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return slug || "untitled";
}
