/** `/models`, served from src/api/models.ts's entries. */
import { modelEndpoints } from "../../api/models";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

export const modelRoutes: RouteModule = (app, store) => {
  const endpoints = modelEndpoints;
  // A bare array: clients stop when a page is shorter than `limit`.
  serve(app, endpoints.list, ({ caller, page }) => store.models.list(caller, page));
  // The spec's create response: persistence-shaped and camelCase, echoing the submitted `key`.
  serve(app, endpoints.create, ({ caller, body }) => ({ ...store.models.create(caller, body), key: body.key }));
  serve(app, endpoints.get, ({ caller, params }) => store.models.get(caller, params.guid!));
  serve(app, endpoints.update, ({ caller, params, body }) => store.models.update(caller, params.guid!, body));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Model", store.models.softDelete(caller, params.guid!).guid));
};
