/** `/sessions` and `/sessions/{guid}/data`, served from src/api/sessions.ts's entries. */
import { SessionListQuery, sessionEndpoints } from "../../api/sessions";
import { serve } from "./serve";
import { type RouteModule, deleted, parse } from "./wire";

export const sessionRoutes: RouteModule = (app, store) => {
  const endpoints = sessionEndpoints;
  serve(app, endpoints.list, ({ caller, page, request }) => {
    const { extUserId } = parse(SessionListQuery, request.query, "query");
    return store.sessions.list(caller, { extUserId }, page);
  });
  serve(app, endpoints.create, ({ caller, body }) => store.sessions.create(caller, body));
  serve(app, endpoints.get, ({ caller, params }) => store.sessions.get(caller, params.guid!));
  serve(app, endpoints.update, ({ caller, params, body }) => store.sessions.update(caller, params.guid!, body));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Session", store.sessions.softDelete(caller, params.guid!).guid));
  serve(app, endpoints.data, ({ caller, params, page }) => store.data.listBySession(caller, params.guid!, page));
};
