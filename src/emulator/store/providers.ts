import { type RawRow, flag, integer, json, nullable, oneOf, table, text } from "./columns";
import type { Database } from "./database";
import { BadRequestError, RecordNotFoundError } from "./errors";
import { type Audited, type Caller, RECORD_COLUMNS, audited, newGuid, toFlag, toJson } from "./records";
import type { WorkspaceStore } from "./workspaces";

/**
 * The provider types a connection or a Model can name, in catalog order: a type's numeric id (the
 * `providerId` of a Model create response) is its position plus one.
 * Spec: not shown; the emulator's catalog.
 */
export const PROVIDER_CATALOG = [
  "openai",
  "anthropic",
  "azure",
  "google",
  "mistral",
  "cohere",
  "groq",
  "together",
  "fireworks",
  "bedrock",
  "ollama",
] as const;
export type ProviderType = (typeof PROVIDER_CATALOG)[number];

/**
 * The catalog type a name stands for, written in any case ("OpenAI" is `openai`); an unknown type is 400
 * `Invalid provider '<x>'`. Spec: not shown; users write the names as the makers do.
 */
export function catalogType(provider: string): ProviderType {
  const type = provider.toLowerCase();
  if (!(PROVIDER_CATALOG as readonly string[]).includes(type)) throw new BadRequestError(`Invalid provider '${provider}'`);
  return type as ProviderType;
}

/** The catalog id of a provider type (the `providerId` of a Model create response). */
export const catalogId = (type: ProviderType): number => PROVIDER_CATALOG.indexOf(type) + 1;

/** A Provider connection. The credential stays in its table and is never part of a record. */
export interface ProviderRecord extends Audited {
  id: number;
  guid: string;
  /** The provider type (a catalog name). */
  provider: ProviderType;
  name: string | null;
  nickname: string;
  url: string | null;
  default: boolean;
}

export interface ProviderCreateInput {
  provider: string;
  key: string;
  url?: string | null | undefined;
  name?: string | null | undefined;
  default?: boolean | null | undefined;
  /** The `llm` of a Model to create on this connection. */
  model?: string | undefined;
  metadata?: { name: string; value?: unknown }[] | undefined;
}

/**
 * What a connection does to the Models on it (`ModelStore` provides it). Declared here, not imported,
 * because models.ts needs the provider catalog: the arrow goes from models to providers only.
 */
export interface ConnectionModels {
  createOnConnection(caller: Caller, connection: ProviderRecord, input: { llm: string; key: string; url: string | null }): unknown;
  detachConnection(caller: Caller, connectionId: number): void;
}

/** The `providers` table: connections, their credential (`key`, never part of a record) included. */
export const PROVIDERS = table("providers", {
  id: integer,
  guid: text,
  workspace_id: integer,
  provider: oneOf(PROVIDER_CATALOG),
  key: text,
  name: nullable(text),
  nickname: text,
  url: nullable(text),
  is_default: flag,
  /** As submitted at create (`[{ name, value }]`); kept, never answered. */
  metadata: nullable(json()),
  ...RECORD_COLUMNS,
});

export class ProviderStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly models: ConnectionModels; readonly workspaces: WorkspaceStore },
  ) {}

  /** Every non-deleted connection of the workspace, oldest first (the route has no pagination). */
  list(caller: Caller): ProviderRecord[] {
    return this.db
      .all("SELECT * FROM providers WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY id", caller.workspaceId)
      .map(toRecord);
  }

  /**
   * Creates a connection and, when `model` is given, its initial Model in the same transaction.
   * Spec: not shown; the emulator names the connection `name` when given, else after its provider type,
   * and keeps `default` as given (several defaults may coexist).
   */
  create(caller: Caller, input: ProviderCreateInput): ProviderRecord {
    const type = catalogType(input.provider);
    return this.db.transaction(() => {
      this.store.workspaces.reserve(caller, "providers");
      const stamp = this.db.clock.iso();
      const id = this.db.run(
        `INSERT INTO providers (guid, workspace_id, provider, key, name, nickname, url, is_default, metadata, created_at, updated_at, created_by_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        newGuid(),
        caller.workspaceId,
        type,
        input.key,
        input.name ?? null,
        input.name ?? type,
        input.url ?? null,
        toFlag(input.default),
        toJson(input.metadata),
        stamp,
        stamp,
        caller.userId,
      );
      const connection = toRecord(this.db.get("SELECT * FROM providers WHERE id = ?", id)!);
      if (input.model !== undefined) {
        this.store.models.createOnConnection(caller, connection, { llm: input.model, key: input.key, url: input.url ?? null });
      }
      return connection;
    });
  }

  /** A non-deleted connection of the caller's workspace; anything else is 404 `Provider not found`. */
  get(caller: Caller, guid: string): ProviderRecord {
    const row = this.db.get("SELECT * FROM providers WHERE guid = ? AND workspace_id = ? AND deleted_at IS NULL", guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Provider not found");
    return toRecord(row);
  }

  /** A non-deleted connection of the caller's workspace by its numeric id (`workspaceModelProviderId`); else 404 `Provider not found`. */
  getById(caller: Caller, id: number): ProviderRecord {
    const row = this.db.get("SELECT * FROM providers WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL", id, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Provider not found");
    return toRecord(row);
  }

  /** The connection a new Model of this type links to: the default one if any, else the newest; or none. */
  findForType(caller: Caller, provider: ProviderType): ProviderRecord | undefined {
    const row = this.db.get(
      "SELECT * FROM providers WHERE workspace_id = ? AND provider = ? AND deleted_at IS NULL ORDER BY is_default DESC, id DESC LIMIT 1",
      caller.workspaceId,
      provider,
    );
    return row && toRecord(row);
  }

  /** Only `nickname` and `default` change; key, url and metadata cannot (spec). */
  update(caller: Caller, guid: string, input: { nickname: string; default?: boolean | undefined }): ProviderRecord {
    const connection = this.get(caller, guid);
    this.db.run(
      "UPDATE providers SET nickname = ?, is_default = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      input.nickname,
      toFlag(input.default ?? connection.default),
      this.db.clock.iso(),
      caller.userId,
      connection.id,
    );
    return this.get(caller, guid);
  }

  /**
   * Soft delete. Spec: not shown; the emulator also deletes the Model this connection's `model` field
   * created and un-links every other Model that was linked to it.
   */
  softDelete(caller: Caller, guid: string): ProviderRecord {
    return this.db.transaction(() => {
      const connection = this.get(caller, guid);
      this.db.run("UPDATE providers SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), connection.id);
      this.store.models.detachConnection(caller, connection.id);
      return connection;
    });
  }
}

function toRecord(raw: RawRow): ProviderRecord {
  const row = PROVIDERS.decode(raw);
  return {
    id: row.id,
    guid: row.guid,
    provider: row.provider,
    name: row.name,
    nickname: row.nickname,
    url: row.url,
    default: row.is_default,
    ...audited(row),
  };
}
