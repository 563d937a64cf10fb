import type { Session } from "../../api/sessions";
import { SessionCreate, SessionListQuery, SessionUpdate } from "../../api/sessions";
import type { SessionRecord } from "../store/sessions";
import { presentData } from "./data";
import { type RouteModule, deleted, envelope, guidParam, parse, parseBody, parsePage, presentAudit } from "./wire";

export const presentSession = (session: SessionRecord): Session => ({
  guid: session.guid,
  name: session.name,
  action: session.actionGuid,
  ext_user_id: session.extUserId,
  ...presentAudit(session),
});

/** `/sessions` and `/sessions/{guid}/data`. */
export const sessionRoutes: RouteModule = (app, store) => {
  app.get("/sessions", async (request) => {
    const query = parse(SessionListQuery, request.query, "query");
    return envelope(store.sessions.list(request.caller, { extUserId: query.extUserId }, query), query, presentSession);
  });

  app.post("/sessions", async (request) => {
    const body = parseBody(SessionCreate, request);
    return presentSession(store.sessions.create(request.caller, { actionGuid: body.action, name: body.name, extUserId: body.extUserId }));
  });

  app.get("/sessions/:guid", async (request) => presentSession(store.sessions.get(request.caller, guidParam(request))));

  // Spec: not shown; the emulator answers the updated Session.
  app.put("/sessions/:guid", async (request) => {
    const guid = guidParam(request);
    return presentSession(store.sessions.update(request.caller, guid, parseBody(SessionUpdate, request)));
  });

  // Spec: not shown; the emulator answers `{ message: "Session <guid> deleted" }`.
  app.delete("/sessions/:guid", async (request) => deleted("Session", store.sessions.softDelete(request.caller, guidParam(request)).guid));

  app.get("/sessions/:guid/data", async (request) => {
    const page = parsePage(request);
    return envelope(store.data.listBySession(request.caller, guidParam(request), page), page, presentData);
  });
};
