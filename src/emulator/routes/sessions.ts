/** `/sessions` and `/sessions/{guid}/data`, served from src/api/sessions.ts's entries. */
import { SessionListQuery, sessionEndpoints } from "../../api/sessions";
import type { SessionRecord } from "../store/sessions";
import { serve } from "./serve";
import { type RouteModule, deleted, parse } from "./wire";

/** The stored Session under the name the wire gives its Action (`action`, the store's `actionGuid`). */
const session = (record: SessionRecord) => ({ ...record, action: record.actionGuid });

export const sessionRoutes: RouteModule = (app, store) => {
  const endpoints = sessionEndpoints;
  serve(app, endpoints.list, ({ caller, page, request }) => {
    const { extUserId } = parse(SessionListQuery, request.query, "query");
    const { items, total } = store.sessions.list(caller, { extUserId }, page);
    return { items: items.map(session), total };
  });
  serve(app, endpoints.create, ({ caller, body }) =>
    session(store.sessions.create(caller, { actionGuid: body.action, name: body.name, extUserId: body.extUserId })),
  );
  serve(app, endpoints.get, ({ caller, params }) => session(store.sessions.get(caller, params.guid!)));
  serve(app, endpoints.update, ({ caller, params, body }) => session(store.sessions.update(caller, params.guid!, body)));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Session", store.sessions.softDelete(caller, params.guid!).guid));
  serve(app, endpoints.data, ({ caller, params, page }) => store.data.listBySession(caller, params.guid!, page));
};
