/** The Provider connection endpoints: the workspace's connections to model providers (credentials are write-only). */
import { z } from "zod";
import { DeleteMessage, Guid, HttpUrl, UnnamedAuditFields } from "./common";
import { endpoint } from "./endpoint";
import { wire } from "./wire";

// The Model and Provider Connection resource kinds import the URL schema from here.
export { HttpUrl } from "./common";

/** A Provider connection as every Provider route returns it. The credential is never part of it. */
export const Provider = wire(
  z.object({
    guid: Guid,
    name: z.string().nullable(),
    nickname: z.string(),
    url: z.string().nullable(),
    default: z.boolean(),
    ...UnnamedAuditFields,
  }),
);
/** A Provider connection as the code uses it. */
export type ProviderRecord = z.output<typeof Provider>;

export const ProviderCreate = wire(
  z.object({
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
  }),
);
export type ProviderCreate = z.output<typeof ProviderCreate>;

/** Only `nickname` and `default` can change; key, url, metadata and the rest are ignored. PUT requires `nickname` every time. */
export const ProviderUpdate = wire(
  z.object({
    nickname: z.string().min(1),
    default: z.boolean().optional(),
  }),
);
export type ProviderUpdate = z.output<typeof ProviderUpdate>;

export const providerEndpoints = {
  /** A bare array with no pagination or filters: one request answers every connection. */
  list: endpoint({ method: "GET", path: "/providers", response: z.array(Provider) }),
  create: endpoint({ method: "POST", path: "/providers", body: ProviderCreate, response: Provider }),
  get: endpoint({ method: "GET", path: "/providers/{guid}", response: Provider }),
  update: endpoint({ method: "PUT", path: "/providers/{guid}", body: ProviderUpdate, response: Provider }),
  /** `{ message: "Model provider <provider_guid> deleted" }`. */
  delete: endpoint({ method: "DELETE", path: "/providers/{guid}", response: DeleteMessage }),
};
