import { Guid } from "../../api/common";
import { type RawRow, flag, integer, nullable, oneOf, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import {
  type ConnectionModels,
  PROVIDER_CATALOG,
  type ProviderRecord,
  type ProviderStore,
  type ProviderType,
  catalogId,
  catalogType,
} from "./providers";
import { type Audited, type Caller, type Page, RECORD_COLUMNS, audited, newGuid, toFlag } from "./records";
import type { WorkspaceStore } from "./workspaces";

/**
 * A Model: an LLM on a provider type, linked to a Provider connection of the workspace (or to none).
 * Its credential stays in the table: a record never carries it, and only the create response echoes
 * the key the caller submitted.
 */
export interface ModelRecord extends Audited {
  id: number;
  guid: string;
  llm: string;
  workspaceId: number;
  /** The provider type (catalog name) and its catalog id. */
  provider: ProviderType;
  providerId: number;
  /** The linked connection, or null when there is none (or it was deleted). */
  workspaceModelProviderId: number | null;
  providerGuid: string | null;
  url: string | null;
  default: boolean;
}

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

export class ModelStore implements ConnectionModels {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly providers: ProviderStore; readonly workspaces: WorkspaceStore },
  ) {}

  /** A page of the workspace's non-deleted Models, oldest first (the route answers a bare array). */
  list(caller: Caller, page: Page): ModelRecord[] {
    return this.db
      .all(
        `${SELECT} WHERE m.workspace_id = ? AND m.deleted_at IS NULL ORDER BY m.id LIMIT ? OFFSET ?`,
        caller.workspaceId,
        page.limit,
        page.skip,
      )
      .map(toRecord);
  }

  /**
   * Creates a Model. `provider` is a provider type in any case, or the GUID of a connection of the
   * workspace (404 `Provider not found` when it does not resolve): the Model takes that connection's type
   * and links to it. Given a type, it links to the workspace's connection of that type (the default one if
   * several, else the newest), or to none. Spec: not shown which of the two `provider` is; the emulator's rule.
   */
  create(
    caller: Caller,
    input: { llm: string; provider: string; key: string; url?: string | null | undefined; default?: boolean | undefined },
  ): ModelRecord {
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
  createOnConnection(caller: Caller, connection: ProviderRecord, input: { llm: string; key: string; url: string | null }): ModelRecord {
    return this.insert(caller, { ...input, provider: connection.provider, connectionId: connection.id, createdByConnection: true });
  }

  /** A non-deleted Model of the caller's workspace; anything else is 404 `Model not found`. */
  get(caller: Caller, guid: string): ModelRecord {
    const row = this.db.get(`${SELECT} WHERE m.guid = ? AND m.workspace_id = ? AND m.deleted_at IS NULL`, guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Model not found");
    return toRecord(row);
  }

  update(caller: Caller, guid: string, input: { llm: string }): ModelRecord {
    const model = this.get(caller, guid);
    this.db.run(
      "UPDATE models SET llm = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      input.llm,
      this.db.clock.iso(),
      caller.userId,
      model.id,
    );
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): ModelRecord {
    const model = this.get(caller, guid);
    this.db.run("UPDATE models SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), model.id);
    return model;
  }

  /** A connection is being deleted: the Model it created goes with it, the others lose their link. */
  detachConnection(caller: Caller, connectionId: number): void {
    const stamp = this.db.clock.iso();
    this.db.run(
      "UPDATE models SET deleted_at = ? WHERE workspace_id = ? AND created_by_provider_id = ? AND deleted_at IS NULL",
      stamp,
      caller.workspaceId,
      connectionId,
    );
    this.db.run(
      "UPDATE models SET workspace_model_provider_id = NULL, updated_at = ? WHERE workspace_id = ? AND workspace_model_provider_id = ? AND deleted_at IS NULL",
      stamp,
      caller.workspaceId,
      connectionId,
    );
  }

  /** The provider type and connection a Model's `provider` names. */
  private linkFor(caller: Caller, provider: string): { type: ProviderType; connection: ProviderRecord | undefined } {
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
  ): ModelRecord {
    this.store.workspaces.reserve(caller, "models");
    const stamp = this.db.clock.iso();
    const id = this.db.run(
      `INSERT INTO models (guid, workspace_id, llm, provider, key, url, is_default, workspace_model_provider_id, created_by_provider_id,
                           created_at, updated_at, created_by_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      newGuid(),
      caller.workspaceId,
      input.llm,
      input.provider,
      input.key,
      input.url,
      toFlag(input.default),
      input.connectionId,
      input.createdByConnection ? input.connectionId : null,
      stamp,
      stamp,
      caller.userId,
    );
    return toRecord(this.db.get(`${SELECT} WHERE m.id = ?`, id)!);
  }
}

// The credential column is left out on purpose: no record carries it.
const SELECT = `SELECT m.id, m.guid, m.workspace_id, m.llm, m.provider, m.url, m.is_default, m.workspace_model_provider_id,
                       m.created_at, m.updated_at, m.created_by_id, m.last_updated_by_id, p.guid AS provider_guid
                FROM models m LEFT JOIN providers p ON p.id = m.workspace_model_provider_id`;

/** What SELECT reads: every column but the credential and the soft-delete mark, and the linked connection's GUID. */
const ROW = MODELS.pick(
  "id",
  "guid",
  "workspace_id",
  "llm",
  "provider",
  "url",
  "is_default",
  "workspace_model_provider_id",
  "created_at",
  "updated_at",
  "created_by_id",
  "last_updated_by_id",
).extend({ provider_guid: nullable(text) });

function toRecord(raw: RawRow): ModelRecord {
  const row = ROW.decode(raw);
  return {
    id: row.id,
    guid: row.guid,
    llm: row.llm,
    workspaceId: row.workspace_id,
    provider: row.provider,
    providerId: catalogId(row.provider),
    workspaceModelProviderId: row.workspace_model_provider_id,
    providerGuid: row.provider_guid,
    url: row.url,
    default: row.is_default,
    ...audited(row),
  };
}
