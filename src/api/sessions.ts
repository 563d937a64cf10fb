/** Sessions: they group the Data of related Action runs; a run names one as `session`. */
import { z } from "zod";
import { DataCodec } from "./data";
import { DeleteMessage, Guid, PageQuery, UnnamedAuditFields } from "./common";
import { endpoint } from "./endpoint";
import { wire } from "./wire";

/**
 * A Session. Spec: the name of the field carrying the Action GUID is not shown; the emulator answers
 * `action`, the name create takes it under.
 */
export const Session = wire(
  z.object({
    guid: Guid,
    name: z.string().nullable(),
    action: Guid,
    ext_user_id: z.string().nullable(),
    ...UnnamedAuditFields,
  }),
);
/** A Session as the code uses it. */
export type Session = z.output<typeof Session>;

/** The request takes the external user ID as `extUserId` (already the package's name), the response answers it as `ext_user_id` (spec). */
export const SessionCreate = wire(
  z.object({
    action: Guid,
    name: z.string().min(1).nullable().optional(),
    extUserId: z.string().min(1).nullable().optional(),
  }),
);
export type SessionCreate = z.output<typeof SessionCreate>;

/** `name` is required; `extUserId` left out keeps the one the Session has, null clears it. */
export const SessionUpdate = wire(
  z.object({
    name: z.string().min(1),
    extUserId: z.string().min(1).nullable().optional(),
  }),
);
export type SessionUpdate = z.output<typeof SessionUpdate>;

/** `GET /sessions`: the page plus an optional filter on the external user ID (query names are not renamed). */
export const SessionListQuery = PageQuery.extend({ extUserId: z.string().optional() });
export type SessionListQuery = z.infer<typeof SessionListQuery>;

export const sessionEndpoints = {
  /** Also takes the `extUserId` query filter, which the emulator's route reads itself. */
  list: endpoint({ method: "GET", path: "/sessions", response: Session, list: "envelope", query: SessionListQuery }),
  /** Spec: guid, name, Action GUID, ext_user_id. */
  create: endpoint({ method: "POST", path: "/sessions", body: SessionCreate, response: Session }),
  get: endpoint({ method: "GET", path: "/sessions/{guid}", response: Session }),
  /** Spec: response not shown; the emulator answers the updated Session. */
  update: endpoint({ method: "PUT", path: "/sessions/{guid}", body: SessionUpdate, response: Session, shown: false }),
  /** Spec: response not shown; the emulator answers `{ message: "Session <guid> deleted" }`. */
  delete: endpoint({ method: "DELETE", path: "/sessions/{guid}", response: DeleteMessage, shown: false }),
  /** The Session's Data, an envelope. */
  data: endpoint({ method: "GET", path: "/sessions/{guid}/data", response: DataCodec, list: "envelope" }),
};
