/** Sessions: they group the Data of related Action runs; a run names one as `session`. */
import { z } from "zod";
import { Guid, PageQuery, UnnamedAuditFields } from "./common";

/**
 * A Session. Spec: the name of the field carrying the Action GUID is not shown; the emulator answers
 * `action`, the name create takes it under.
 */
export const Session = z.object({
  guid: Guid,
  name: z.string().nullable(),
  action: Guid,
  ext_user_id: z.string().nullable(),
  ...UnnamedAuditFields,
});
export type Session = z.infer<typeof Session>;

/** The request takes the external user ID as `extUserId`, the response answers it as `ext_user_id` (spec). */
export const SessionCreate = z.object({
  action: Guid,
  name: z.string().min(1).nullable().optional(),
  extUserId: z.string().min(1).nullable().optional(),
});
export type SessionCreate = z.infer<typeof SessionCreate>;

/** `name` is required; `extUserId` left out keeps the one the Session has, null clears it. */
export const SessionUpdate = z.object({
  name: z.string().min(1),
  extUserId: z.string().min(1).nullable().optional(),
});
export type SessionUpdate = z.infer<typeof SessionUpdate>;

/** `GET /sessions`: the page plus an optional filter on the external user ID. */
export const SessionListQuery = PageQuery.extend({ extUserId: z.string().optional() });
export type SessionListQuery = z.infer<typeof SessionListQuery>;
