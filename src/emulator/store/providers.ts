import type { ProviderCreate, ProviderUpdate } from "../../api/providers";
import { RecordTable, type StoredRecord, flag, integer, json, nullable, oneOf, table, text } from "./columns";
import { storeModule } from "./module";
import type { Database } from "./database";
import { BadRequestError, RecordNotFoundError } from "./errors";
import { type Caller, RECORD_COLUMNS, createdBy, newGuid, updatedBy } from "./records";
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

/**
 * What a connection does to the Models on it (`ModelStore` provides it). Declared here, not imported,
 * because models.ts needs the provider catalog: the arrow goes from models to providers only.
 */
export interface ConnectionModels {
  createOnConnection(caller: Caller, connection: StoredProvider, input: { llm: string; key: string; url: string | null }): unknown;
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

const RECORDS = new RecordTable(PROVIDERS, { derived: { default: ["providers.is_default", flag] }, hidden: ["key", "metadata"] });

/** A Provider connection. The credential stays in its table and is never part of a record (nor the metadata). */
export type StoredProvider = StoredRecord<typeof RECORDS>;

export class ProviderStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly models: ConnectionModels; readonly workspaces: WorkspaceStore },
  ) {}

  /** Every non-deleted connection of the workspace, oldest first (the route has no pagination). */
  list(caller: Caller): StoredProvider[] {
    return RECORDS.list(this.db, { workspaceId: caller.workspaceId, deletedAt: null });
  }

  /**
   * Creates a connection and, when `model` is given, its initial Model in the same transaction.
   * Spec: not shown; the emulator names the connection `name` when given, else after its provider type,
   * and keeps `default` as given (several defaults may coexist).
   */
  create(caller: Caller, input: ProviderCreate): StoredProvider {
    const type = catalogType(input.provider);
    return this.db.transaction(() => {
      this.store.workspaces.reserve(caller, "providers");
      const id = RECORDS.insert(this.db, {
        ...createdBy(caller, this.db.clock.iso()),
        guid: newGuid(),
        provider: type,
        key: input.key,
        name: input.name,
        nickname: input.name ?? type,
        url: input.url,
        isDefault: input.default ?? false,
        metadata: input.metadata,
      });
      const connection = RECORDS.find(this.db, { id })!;
      if (input.model !== undefined) {
        this.store.models.createOnConnection(caller, connection, { llm: input.model, key: input.key, url: input.url ?? null });
      }
      return connection;
    });
  }

  /** A non-deleted connection of the caller's workspace; anything else is 404 `Provider not found`. */
  get(caller: Caller, guid: string): StoredProvider {
    return this.live(caller, { guid });
  }

  /** A non-deleted connection of the caller's workspace by its numeric id (`workspaceModelProviderId`); else 404 `Provider not found`. */
  getById(caller: Caller, id: number): StoredProvider {
    return this.live(caller, { id });
  }

  /** The connection a new Model of this type links to: the default one if any, else the newest; or none. */
  findForType(caller: Caller, provider: ProviderType): StoredProvider | undefined {
    return RECORDS.find(this.db, { workspaceId: caller.workspaceId, provider, deletedAt: null }, [{ desc: "isDefault" }, { desc: "id" }]);
  }

  /** Only `nickname` and `default` change; key, url and metadata cannot (spec). */
  update(caller: Caller, guid: string, input: ProviderUpdate): StoredProvider {
    const connection = this.get(caller, guid);
    RECORDS.update(this.db, connection.id, {
      nickname: input.nickname,
      isDefault: input.default,
      ...updatedBy(caller, this.db.clock.iso()),
    });
    return this.get(caller, guid);
  }

  /**
   * Soft delete. Spec: not shown; the emulator also deletes the Model this connection's `model` field
   * created and un-links every other Model that was linked to it.
   */
  softDelete(caller: Caller, guid: string): StoredProvider {
    return this.db.transaction(() => {
      const connection = this.get(caller, guid);
      RECORDS.update(this.db, connection.id, { deletedAt: this.db.clock.iso() });
      this.store.models.detachConnection(caller, connection.id);
      return connection;
    });
  }

  /** The non-deleted connection of the caller's workspace with this GUID or id; else 404 `Provider not found`. */
  private live(caller: Caller, which: { guid: string } | { id: number }): StoredProvider {
    const connection = RECORDS.find(this.db, { ...which, workspaceId: caller.workspaceId, deletedAt: null });
    if (!connection) throw new RecordNotFoundError("Provider not found");
    return connection;
  }
}

/** Opened by the Store as `store.providers` (./module.ts). */
export const providerStore = storeModule(ProviderStore, [PROVIDERS]);
