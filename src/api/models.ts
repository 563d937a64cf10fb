import { z } from "zod";
import { UnnamedAuditFields, Guid, HttpUrl, Timestamp } from "./common";

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
  /** A provider type of the catalog; an unknown one answers 400. */
  provider: z.string().min(1),
  key: z.string().min(1),
  url: HttpUrl.nullable().optional(),
  default: z.boolean().default(false),
});
export type ModelCreate = z.infer<typeof ModelCreate>;

/** PUT changes `llm` only; other fields are ignored. */
export const ModelUpdate = z.object({ llm: z.string().min(1) });
export type ModelUpdate = z.infer<typeof ModelUpdate>;
