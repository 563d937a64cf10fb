/** What every stored record shares: identity, audit fields, JSON columns and paging. */
import { randomUUID } from "node:crypto";
import { nullable, text } from "./columns";

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
 * keeps its row with `deleted_at` set). Spread into each table's description.
 */
export const RECORD_COLUMNS = {
  created_at: text,
  updated_at: text,
  created_by_id: text,
  last_updated_by_id: nullable(text),
  deleted_at: nullable(text),
} as const;

/** A decoded row's audit columns as record fields. */
export const audited = (row: {
  created_at: string;
  updated_at: string;
  created_by_id: string;
  last_updated_by_id: string | null;
}): Audited => ({
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  createdById: row.created_by_id,
  lastUpdatedById: row.last_updated_by_id,
});

export const newGuid = (): string => randomUUID();

/** The fields every new record of the caller's workspace starts with: the workspace and the creation stamps. */
export const createdBy = (caller: Caller, stamp: string) => ({
  workspaceId: caller.workspaceId,
  createdAt: stamp,
  updatedAt: stamp,
  createdById: caller.userId,
});

/** The stamps of an update by the caller. */
export const updatedBy = (caller: Caller, stamp: string) => ({ updatedAt: stamp, lastUpdatedById: caller.userId });

/** JSON columns: stored as text, `null` stays SQL NULL (read back by `json` of ./columns). */
export const toJson = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

/** SQLite stores booleans as 0/1 (read back by `flag` of ./columns). */
export const toFlag = (value: boolean | null | undefined): number => (value ? 1 : 0);

/** Lowercase words joined by dashes: "Customer Support!" -> "customer-support". */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return slug || "untitled";
}
