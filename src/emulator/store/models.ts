import { Guid } from "../../api/common";
import type { ModelCreate } from "../../api/models";
import { RecordTable, type StoredRecord, flag, integer, nullable, oneOf, table, text } from "./columns";
import { storeModule } from "./module";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import {
  type ConnectionModels,
  PROVIDER_CATALOG,
  type StoredProvider,
  type ProviderStore,
  type ProviderType,
  catalogId,
  catalogType,
} from "./providers";
import { type Caller, type Page, RECORD_COLUMNS, createdBy, newGuid, updatedBy } from "./records";
import type { WorkspaceStore } from "./workspaces";

/** The `models` table; `key` (the credential) is never part of a record. */
export const MODELS = table("models", {
  id: integer,
  guid: text,
  workspace_id: integer,
  llm: text,
  provider: oneOf(PROVIDER_CATALOG),
  key: text,
  url: nullable(text),
  is_default: flag,
  workspace_model_provider_id: nullable(integer),
  /** The connection whose `model` field created this Model (deleted with it), else null. */
  created_by_provider_id: nullable(integer),
  ...RECORD_COLUMNS,
});

const RECORDS = new RecordTable(MODELS, {
  joins: "LEFT JOIN providers p ON p.id = models.workspace_model_provider_id",
  derived: {
    provider_name: ["models.provider", oneOf(PROVIDER_CATALOG)],
    provider_guid: ["p.guid", nullable(text)],
    default: ["models.is_default", flag],
    deleted: ["models.deleted_at IS NOT NULL", flag],
  },
  hidden: ["key"],
});

/**
 * A Model: an LLM on a provider type (`provider`, also as the wire's `providerName`, and its catalog id
 * `providerId`), linked to a Provider connection of the workspace (`workspaceModelProviderId`, `providerGuid`) or
 * to none. Its credential stays in the table: a record never carries it, and only the create response echoes
 * the key the caller submitted.
 */
export type StoredModel = ReturnType<typeof withCatalogId>;

export class ModelStore implements ConnectionModels {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly providers: ProviderStore; readonly workspaces: WorkspaceStore },
  ) {}

  /** A page of the workspace's non-deleted Models, oldest first (the route answers a bare array). */
  list(caller: Caller, page: Page): StoredModel[] {
    return RECORDS.page(this.db, { workspaceId: caller.workspaceId, deletedAt: null }, page).items.map(withCatalogId);
  }

  /**
   * Creates a Model. `provider` is a provider type in any case, or the GUID of a connection of the
   * workspace (404 `Provider not found` when it does not resolve): the Model takes that connection's type
   * and links to it. Given a type, it links to the workspace's connection of that type (the default one if
   * several, else the newest), or to none. Spec: not shown which of the two `provider` is; the emulator's rule.
   */
  create(caller: Caller, input: ModelCreate): StoredModel {
    return this.db.transaction(() => {
      const { type, connection } = this.linkFor(caller, input.provider);
      return this.insert(caller, {
        ...input,
        provider: type,
        url: input.url ?? null,
        connectionId: connection?.id ?? null,
        createdByConnection: false,
      });
    });
  }

  /** The initial Model a connection's `model` field asks for, linked to that connection (same type and key). */
  createOnConnection(caller: Caller, connection: StoredProvider, input: { llm: string; key: string; url: string | null }): StoredModel {
    return this.insert(caller, { ...input, provider: connection.provider, connectionId: connection.id, createdByConnection: true });
  }

  /** A non-deleted Model of the caller's workspace; anything else is 404 `Model not found`. */
  get(caller: Caller, guid: string): StoredModel {
    const model = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
    if (!model) throw new RecordNotFoundError("Model not found");
    return withCatalogId(model);
  }

  update(caller: Caller, guid: string, input: { llm: string }): StoredModel {
    const model = this.get(caller, guid);
    RECORDS.update(this.db, model.id, { llm: input.llm, ...updatedBy(caller, this.db.clock.iso()) });
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): StoredModel {
    const model = this.get(caller, guid);
    RECORDS.update(this.db, model.id, { deletedAt: this.db.clock.iso() });
    return model;
  }

  /** A connection is being deleted: the Model it created goes with it, the others lose their link. */
  detachConnection(caller: Caller, connectionId: number): void {
    const stamp = this.db.clock.iso();
    RECORDS.updateAll(
      this.db,
      { workspaceId: caller.workspaceId, createdByProviderId: connectionId, deletedAt: null },
      { deletedAt: stamp },
    );
    RECORDS.updateAll(
      this.db,
      { workspaceId: caller.workspaceId, workspaceModelProviderId: connectionId, deletedAt: null },
      { workspaceModelProviderId: null, updatedAt: stamp },
    );
  }

  /** The provider type and connection a Model's `provider` names. */
  private linkFor(caller: Caller, provider: string): { type: ProviderType; connection: StoredProvider | undefined } {
    if (Guid.safeParse(provider).success) {
      const connection = this.store.providers.get(caller, provider);
      return { type: connection.provider, connection };
    }
    const type = catalogType(provider);
    return { type, connection: this.store.providers.findForType(caller, type) };
  }

  private insert(
    caller: Caller,
    input: {
      llm: string;
      provider: ProviderType;
      key: string;
      url: string | null;
      default?: boolean | undefined;
      connectionId: number | null;
      createdByConnection: boolean;
    },
  ): StoredModel {
    this.store.workspaces.reserve(caller, "models");
    const id = RECORDS.insert(this.db, {
      ...createdBy(caller, this.db.clock.iso()),
      guid: newGuid(),
      llm: input.llm,
      provider: input.provider,
      key: input.key,
      url: input.url,
      isDefault: input.default ?? false,
      workspaceModelProviderId: input.connectionId,
      createdByProviderId: input.createdByConnection ? input.connectionId : null,
    });
    return withCatalogId(RECORDS.find(this.db, { id })!);
  }
}

/** The stored Model with its provider type's catalog id. */
const withCatalogId = (model: StoredRecord<typeof RECORDS>) => ({ ...model, providerId: catalogId(model.provider) });

/** Opened by the Store as `store.models` (./module.ts). */
export const modelStore = storeModule(ModelStore, [MODELS]);
