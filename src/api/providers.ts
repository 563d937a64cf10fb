import { z } from "zod";
import { type EncodedPath, type GmsClient, listBare, path } from "../client";
import { type FindCreated, UnnamedAuditFields, Guid, HttpUrl } from "./common";

// The Model and Provider Connection resource kinds import the URL schema from here.
export { HttpUrl } from "./common";

/** A Provider connection as every Provider route returns it. The credential is never part of it. */
export const Provider = z.object({
  guid: Guid,
  name: z.string().nullable(),
  nickname: z.string(),
  url: z.string().nullable(),
  default: z.boolean(),
  ...UnnamedAuditFields,
});
export type Provider = z.infer<typeof Provider>;

export const ProviderCreate = z.object({
  /** A provider type of the catalog (`openai`, `anthropic`, ...); an unknown one answers 400. */
  provider: z.string().min(1),
  /** Write-only credential. */
  key: z.string().min(1),
  url: HttpUrl.nullable().optional(),
  name: z.string().nullable().optional(),
  default: z.boolean().nullable().optional(),
  /** An initial Model (its `llm`) created on this connection. */
  model: z.string().min(1).optional(),
  metadata: z.array(z.object({ name: z.string(), value: z.unknown().optional() })).optional(),
  // The spec: "`providerId` is not accepted on create; use `provider`".
  providerId: z.undefined({ error: "providerId is not accepted; use provider" }).optional(),
});
export type ProviderCreate = z.infer<typeof ProviderCreate>;

/** Only `nickname` and `default` can change; key, url, metadata and the rest are ignored. */
export const ProviderUpdate = z.object({
  nickname: z.string().min(1),
  default: z.boolean().optional(),
});
export type ProviderUpdate = z.infer<typeof ProviderUpdate>;

/** A Provider connection as the code uses it. */
export type ProviderRecord = {
  guid: string;
  name: string | null;
  nickname: string;
  url: string | null;
  default: boolean;
  createdAt: string | undefined;
  updatedAt: string | undefined;
};

export const toProviderRecord = (provider: Provider): ProviderRecord => ({
  guid: provider.guid,
  name: provider.name,
  nickname: provider.nickname,
  url: provider.url,
  default: provider.default,
  createdAt: provider.created_at,
  updatedAt: provider.updated_at,
});

const recordPath = (guid: string): EncodedPath => path`/providers/${guid}`;

export const providersApi = {
  /** The connection's own path (to delete an abandoned create). */
  recordPath,
  /** A bare array with no paging. */
  async list(client: GmsClient): Promise<ProviderRecord[]> {
    return (await listBare(client, { path: path`/providers`, item: Provider })).map(toProviderRecord);
  },
  /** Create takes no nickname: the service derives one (set another with `update`). */
  async create(client: GmsClient, body: ProviderCreate, findCreated: FindCreated): Promise<ProviderRecord> {
    return toProviderRecord(
      await client.create({ path: path`/providers`, body, schema: Provider, findCreated, identity: [body.name, body.url] }),
    );
  },
  async get(client: GmsClient, guid: string): Promise<ProviderRecord> {
    return toProviderRecord(await client.request({ method: "GET", path: recordPath(guid), schema: Provider }));
  },
  /** PUT requires `nickname` every time, even when only `default` changes; it answers the connection. */
  async update(client: GmsClient, guid: string, body: ProviderUpdate): Promise<ProviderRecord> {
    return toProviderRecord(await client.request({ method: "PUT", path: recordPath(guid), body, schema: Provider }));
  },
  async delete(client: GmsClient, guid: string): Promise<void> {
    await client.request({ method: "DELETE", path: recordPath(guid), schema: z.unknown() });
  },
};
