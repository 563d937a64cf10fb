import { z } from "zod";
import { collect, type EncodedPath, type GmsClient, paginateUntilShort, path } from "../client";
import { type FindCreated, UnnamedAuditFields, Guid, HttpUrl, Timestamp } from "./common";

/** A Model as GET, list and PUT return it: no credential. */
export const Model = z.object({
  guid: Guid,
  llm: z.string(),
  // Spec: "provider name (nullable), provider GUID (nullable)" without their wire names: the emulator's.
  /** The provider type (catalog name). */
  provider_name: z.string().nullable().optional(),
  /** The linked Provider connection, if any. */
  provider_guid: Guid.nullable().optional(),
  default: z.boolean(),
  deleted: z.boolean(),
  ...UnnamedAuditFields,
});
export type Model = z.infer<typeof Model>;

/**
 * What POST /models answers: the persistence-shaped record, camelCase, numeric ids, and (the spec's
 * quirk) the submitted `key`. Treat it as a secret: never log or expose it.
 */
export const ModelCreated = z.object({
  id: z.number().int(),
  guid: Guid,
  llm: z.string(),
  workspaceId: z.number().int(),
  workspaceModelProviderId: z.number().int().nullable(),
  providerId: z.number().int().nullable(),
  url: z.string().nullable(),
  default: z.boolean(),
  deleted: z.boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  createdById: z.string(),
  lastUpdatedById: z.string().nullable(),
  key: z.string(),
});
export type ModelCreated = z.infer<typeof ModelCreated>;

export const ModelCreate = z.object({
  llm: z.string().min(1),
  /**
   * A provider type of the catalog, in any case (an unknown one answers 400), or the GUID of a Provider
   * connection of the workspace (404 when there is none), whose type the Model takes and to which it is linked.
   */
  provider: z.string().min(1),
  key: z.string().min(1),
  url: HttpUrl.nullable().optional(),
  default: z.boolean().default(false),
});
export type ModelCreate = z.infer<typeof ModelCreate>;

/** PUT changes `llm` only; other fields are ignored. */
export const ModelUpdate = z.object({ llm: z.string().min(1) });
export type ModelUpdate = z.infer<typeof ModelUpdate>;

/** A Model as the code uses it. */
export type ModelRecord = {
  guid: string;
  llm: string;
  /** The provider type (catalog name), when the service says. */
  providerName: string | null | undefined;
  /** The linked Provider connection, if any. */
  providerGuid: string | null | undefined;
  default: boolean;
  createdAt: string | undefined;
  updatedAt: string | undefined;
};

export const toModelRecord = (model: Model): ModelRecord => ({
  guid: model.guid,
  llm: model.llm,
  providerName: model.provider_name,
  providerGuid: model.provider_guid,
  default: model.default,
  createdAt: model.created_at,
  updatedAt: model.updated_at,
});

/**
 * The only fields of the create response that are read; zod drops the rest, the echoed key included. The
 * connection's numeric id is optional: a create whose answer was lost reads the public record, without it.
 */
const ModelCreatedLink = ModelCreated.pick({ guid: true, workspaceModelProviderId: true }).partial({ workspaceModelProviderId: true });
export type ModelCreatedLink = z.infer<typeof ModelCreatedLink>;

const recordPath = (guid: string): EncodedPath => path`/models/${guid}`;

export const modelsApi = {
  /** The Model's own path (to delete an abandoned create). */
  recordPath,
  /** Bare arrays with no `has_next_page`: paged until a short page. */
  async list(client: GmsClient): Promise<ModelRecord[]> {
    return (await collect(paginateUntilShort(client, { path: path`/models`, item: Model }))).map(toModelRecord);
  },
  /**
   * Answers the GUID and the linked connection's numeric id only (the id is left out when a lost answer was
   * looked up): the response is the persistence record and echoes the submitted key, so nothing else of it
   * is parsed and the key never reaches a caller.
   */
  async create(client: GmsClient, body: z.input<typeof ModelCreate>, findCreated: FindCreated): Promise<ModelCreatedLink> {
    return client.create({ path: path`/models`, body, schema: ModelCreatedLink, findCreated, identity: [body.llm, body.provider] });
  },
  async get(client: GmsClient, guid: string): Promise<ModelRecord> {
    return toModelRecord(await client.request({ method: "GET", path: recordPath(guid), schema: Model }));
  },
  /** PUT changes `llm` only and answers the public record. */
  async update(client: GmsClient, guid: string, body: ModelUpdate): Promise<ModelRecord> {
    return toModelRecord(await client.request({ method: "PUT", path: recordPath(guid), body, schema: Model }));
  },
  async delete(client: GmsClient, guid: string): Promise<void> {
    await client.request({ method: "DELETE", path: recordPath(guid), schema: z.unknown() });
  },
};
