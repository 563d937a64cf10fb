import { integer, nullable, RecordTable, type StoredRecord, table, text } from "./columns";
import { storeModule } from "./module";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Audited, type Caller, type Page, type Paged, RECORD_COLUMNS, createdBy, updatedBy, newGuid, slugify } from "./records";
import type { WorkspaceStore } from "./workspaces";

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

const RECORDS = new RecordTable(APPS);
/** An App as the store keeps it: its row in the package's names (a field is its column). */
export type StoredApp = StoredRecord<typeof RECORDS>;

/** The fields an App is created or updated with: any column but those the store sets itself. */
type AppFields = Partial<Omit<StoredApp, "id" | "guid" | "workspaceId" | "slug" | keyof Audited | "deletedAt">>;

export class AppStore {
  /** The next slug suffix to try per workspace and name (see uniqueSlug). */
  private readonly nextSuffix = new Map<string, number>();

  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly workspaces: WorkspaceStore },
  ) {}

  /** Non-deleted Apps of the workspace, oldest first. */
  list(caller: Caller, page: Page): Paged<StoredApp> {
    return RECORDS.page(this.db, { workspaceId: caller.workspaceId, deletedAt: null }, page);
  }

  /**
   * Creates an App; 429 when the workspace allowance is used up. The slug is generated from the name and made
   * unique in the workspace. Every field given is stored: a new plain field needs only its column.
   */
  create(caller: Caller, input: AppFields & { name: string; guid?: string }): StoredApp {
    return this.db.transaction(() => {
      this.store.workspaces.reserve(caller, "apps");
      const stamp = this.db.clock.iso();
      const id = RECORDS.insert(this.db, {
        ...createdBy(caller, stamp),
        ...input,
        guid: input.guid ?? newGuid(),
        slug: this.uniqueSlug(caller, slugify(input.name)),
      });
      return RECORDS.find(this.db, { id })!;
    });
  }

  /** A non-deleted App of the caller's workspace; anything else is 404 `App not found`. */
  get(caller: Caller, guid: string): StoredApp {
    const app = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
    if (!app) throw new RecordNotFoundError("App not found");
    return app;
  }

  /** Updates the fields given (a null clears one, an undefined one keeps its value). */
  update(caller: Caller, guid: string, input: AppFields): StoredApp {
    const app = this.get(caller, guid);
    RECORDS.update(this.db, app.id, { ...input, ...updatedBy(caller, this.db.clock.iso()) });
    return this.get(caller, guid);
  }

  /** Soft delete: the App is returned once more, then answers 404 everywhere. */
  softDelete(caller: Caller, guid: string): StoredApp {
    const app = this.get(caller, guid);
    RECORDS.update(this.db, app.id, { deletedAt: this.db.clock.iso() });
    return app;
  }

  /**
   * `base`, or `base-N` with the first free N from 2. The suffixes are handed out in order, so the one after the
   * last this process gave for the name is tried first (one lookup in the (workspace, slug) index: the
   * ten-thousandth App of one name costs what the second did); without it (a restart, or a slug someone took by
   * naming an App `support-5`), where the taken ones end is found by doubling then halving N, one lookup each.
   */
  private uniqueSlug(caller: Caller, base: string): string {
    const slugOf = (n: number) => (n === 1 ? base : `${base}-${n}`);
    const taken = (n: number) =>
      this.db.get("SELECT 1 AS n FROM apps WHERE workspace_id = ? AND slug = ?", caller.workspaceId, slugOf(n)) !== undefined;
    const key = `${caller.workspaceId}\n${base}`;
    const hint = this.nextSuffix.get(key);
    let free: number;
    if (hint !== undefined && !taken(hint) && taken(hint - 1)) free = hint;
    else if (!taken(1)) free = 1;
    else {
      let low = 1;
      let high = 2;
      while (taken(high)) [low, high] = [high, high * 2];
      while (high - low > 1) {
        const middle = Math.floor((low + high) / 2);
        if (taken(middle)) low = middle;
        else high = middle;
      }
      free = high;
    }
    this.nextSuffix.set(key, free + 1);
    return slugOf(free);
  }
}

/** Opened by the Store as `store.apps` (./module.ts). */
export const appStore = storeModule(AppStore, [APPS]);
