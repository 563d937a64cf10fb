/** The Model endpoints: LLMs of the workspace on a provider type, linked to a Provider connection or to none. */
import { z } from "zod";
import { DeleteMessage, Guid, HttpUrl, Timestamp, UnnamedAuditFields } from "./common";
import { endpoint } from "./endpoint";
import { wire } from "./wire";

/** A Model as GET, list and PUT return it: no credential. */
export const Model = wire(
  z.object({
    guid: Guid,
    llm: z.string(),
    // Spec: "provider name (nullable), provider GUID (nullable)" without their wire names: the emulator's.
    /** The provider type (catalog name), when the service says. */
    provider_name: z.string().nullable().optional(),
    /** The linked Provider connection, if any. */
    provider_guid: Guid.nullable().optional(),
    default: z.boolean(),
    deleted: z.boolean(),
    ...UnnamedAuditFields,
  }),
);
/** A Model as the code uses it. */
export type ModelRecord = z.output<typeof Model>;

/**
 * What POST /models answers: the persistence-shaped record, camelCase on the wire too, numeric ids, and (the
 * spec's quirk) the submitted `key`. Treat it as a secret: never log or expose it.
 */
const ModelCreatedWire = z.object({
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
export const ModelCreated = wire(ModelCreatedWire);
export type ModelCreated = z.output<typeof ModelCreated>;

/**
 * The only fields of the create response the client reads; zod drops the rest, the echoed key included. The
 * connection's numeric id is optional: a create whose answer was lost reads the public record, without it.
 */
export const ModelCreatedLink = wire(
  ModelCreatedWire.pick({ guid: true, workspaceModelProviderId: true }).partial({ workspaceModelProviderId: true }),
);

export const ModelCreate = wire(
  z.object({
    llm: z.string().min(1),
    /**
     * A provider type of the catalog, in any case (an unknown one answers 400), or the GUID of a Provider
     * connection of the workspace (404 when there is none), whose type the Model takes and to which it is linked.
     */
    provider: z.string().min(1),
    key: z.string().min(1),
    url: HttpUrl.nullable().optional(),
    /** The service's default is false (left out, it is not sent). */
    default: z.boolean().optional(),
  }),
);
export type ModelCreate = z.output<typeof ModelCreate>;

/** PUT changes `llm` only; other fields are ignored. */
export const ModelUpdate = wire(z.object({ llm: z.string().min(1) }));

export const modelEndpoints = {
  /** Bare arrays with no `has_next_page`: paged until a short page. */
  list: endpoint({ method: "GET", path: "/models", response: Model, list: "bare" }),
  /** The persistence-shaped record, echoing the submitted key (the client reads `ModelCreatedLink` of it only). */
  create: endpoint({ method: "POST", path: "/models", body: ModelCreate, response: ModelCreated }),
  get: endpoint({ method: "GET", path: "/models/{guid}", response: Model }),
  update: endpoint({ method: "PUT", path: "/models/{guid}", body: ModelUpdate, response: Model }),
  /** Spec: response not shown; the emulator answers `{ message: "Model <guid> deleted" }` (the Providers' shape). */
  delete: endpoint({ method: "DELETE", path: "/models/{guid}", response: DeleteMessage, shown: false }),
};
