/** `/apps` and the App's Actions (the other relationship routes sit with their kinds), served from src/api/apps.ts's entries. */
import { appEndpoints } from "../../api/apps";
import { serve } from "./serve";
import type { RouteModule } from "./wire";

export const appRoutes: RouteModule = (app, store) => {
  serve(app, appEndpoints.list, ({ caller, page }) => store.apps.list(caller, page));
  serve(app, appEndpoints.create, ({ caller, body }) => store.apps.create(caller, body));
  serve(app, appEndpoints.get, ({ caller, params }) => store.apps.get(caller, params.guid!));
  serve(app, appEndpoints.update, ({ caller, params, body }) => store.apps.update(caller, params.guid!, body));
  serve(app, appEndpoints.delete, ({ caller, params }) => store.apps.softDelete(caller, params.guid!));
  serve(app, appEndpoints.actions, ({ caller, params, page }) => store.actions.listByApp(caller, params.guid!, page));
};
