import { type RawRow, integer, nullable, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, audited, newGuid, slugify } from "./records";
import type { WorkspaceStore } from "./workspaces";

export interface AppRecord extends Audited {
  id: number;
  guid: string;
  name: string;
  description: string | null;
  slug: string;
}

/** The `apps` table (./migrations.ts holds how it came to be). */
export const APPS = table("apps", {
  id: integer,
  guid: text,
  workspace_id: integer,
  name: text,
  description: nullable(text),
  slug: text,
  ...RECORD_COLUMNS,
});

export class AppStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly workspaces: WorkspaceStore },
  ) {}

  /** Non-deleted Apps of the workspace, oldest first. */
  list(caller: Caller, page: Page): Paged<AppRecord> {
    const { rows, total } = this.db.paged("FROM apps WHERE workspace_id = ? AND deleted_at IS NULL", [caller.workspaceId], page, {
      order: "id",
    });
    return { items: rows.map(toRecord), total };
  }

  /** Creates an App; 429 when the workspace allowance is used up. the slug is generated from the name and made unique in the workspace. */
  create(caller: Caller, input: { name: string; description?: string | null | undefined; guid?: string }): AppRecord {
    return this.db.transaction(() => {
      this.store.workspaces.reserve(caller, "apps");
      const stamp = this.db.clock.iso();
      const id = this.db.run(
        `INSERT INTO apps (guid, workspace_id, name, description, slug, created_at, updated_at, created_by_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        input.guid ?? newGuid(),
        caller.workspaceId,
        input.name,
        input.description ?? null,
        this.uniqueSlug(caller, slugify(input.name)),
        stamp,
        stamp,
        caller.userId,
      );
      return toRecord(this.db.get("SELECT * FROM apps WHERE id = ?", id)!);
    });
  }

  /** A non-deleted App of the caller's workspace; anything else is 404 `App not found`. */
  get(caller: Caller, guid: string): AppRecord {
    const row = this.db.get("SELECT * FROM apps WHERE guid = ? AND workspace_id = ? AND deleted_at IS NULL", guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("App not found");
    return toRecord(row);
  }

  update(caller: Caller, guid: string, input: { name?: string | undefined; description?: string | null | undefined }): AppRecord {
    const app = this.get(caller, guid);
    this.db.run(
      "UPDATE apps SET name = ?, description = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      input.name ?? app.name,
      input.description === undefined ? app.description : input.description,
      this.db.clock.iso(),
      caller.userId,
      app.id,
    );
    return this.get(caller, guid);
  }

  /** Soft delete: the App is returned once more, then answers 404 everywhere. */
  softDelete(caller: Caller, guid: string): AppRecord {
    const app = this.get(caller, guid);
    this.db.run("UPDATE apps SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), app.id);
    return app;
  }

  private uniqueSlug(caller: Caller, base: string): string {
    const taken = new Set(
      this.db
        // "base" and every "base-..." ('-' < '.'), as an index range.
        .all("SELECT slug FROM apps WHERE workspace_id = ? AND slug >= ? AND slug < ?", caller.workspaceId, base, `${base}.`)
        .map((row) => SLUG.decode(row).slug),
    );
    let slug = base;
    for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
    return slug;
  }
}

function toRecord(raw: RawRow): AppRecord {
  const row = APPS.decode(raw);
  return { id: row.id, guid: row.guid, name: row.name, description: row.description, slug: row.slug, ...audited(row) };
}

const SLUG = APPS.pick("slug");
