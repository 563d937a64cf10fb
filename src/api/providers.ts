import { z } from "zod";
import { UnnamedAuditFields, Guid, HttpUrl } from "./common";

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
