import type { App, ActionSummary } from "../../api/apps";
import { AppCreate, AppUpdate } from "../../api/apps";
import type { ActionRecord } from "../store/actions";
import type { AppRecord } from "../store/apps";
import { type RouteModule, envelope, guidParam, parseBody, parsePage, presentAudit } from "./wire";

export const presentApp = (app: AppRecord): App => ({
  guid: app.guid,
  name: app.name,
  description: app.description,
  slug: app.slug,
  ...presentAudit(app),
});

export const presentActionSummary = (action: ActionRecord): ActionSummary => ({
  guid: action.guid,
  name: action.name,
  action_type: action.actionType,
  model: action.model,
  ...presentAudit(action),
});

/** `/apps` and the App's Actions (the other relationship routes sit with their kinds). */
export const appRoutes: RouteModule = (app, store) => {
  app.get("/apps", async (request) => {
    const page = parsePage(request);
    return envelope(store.apps.list(request.caller, page), page, presentApp);
  });

  app.post("/apps", async (request) => presentApp(store.apps.create(request.caller, parseBody(AppCreate, request))));

  app.get("/apps/:guid", async (request) => presentApp(store.apps.get(request.caller, guidParam(request))));

  app.put("/apps/:guid", async (request) => {
    const guid = guidParam(request);
    return presentApp(store.apps.update(request.caller, guid, parseBody(AppUpdate, request)));
  });

  app.delete("/apps/:guid", async (request) => presentApp(store.apps.softDelete(request.caller, guidParam(request))));

  app.get("/apps/:guid/actions", async (request) => {
    const page = parsePage(request);
    return store.actions.listByApp(request.caller, guidParam(request), page).map(presentActionSummary);
  });
};
