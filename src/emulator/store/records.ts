/** What every stored record shares: identity, audit fields, the stamps of a create or an update, and paging. */
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

/** Lowercase words joined by dashes: "Customer Support!" -> "customer-support". */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return slug || "untitled";
}
