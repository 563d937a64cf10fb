/**
 * `/data` and `/apps/{guid}/data`, served from src/api/data.ts's entries: a record answers its public fields only
 * (relationships, prompt parts and the run link stay inside), as the entry's codec keeps them.
 */
import { dataEndpoints } from "../../api/data";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

export const dataRoutes: RouteModule = (app, store) => {
  const endpoints = dataEndpoints;
  serve(app, endpoints.list, ({ caller, page }) => store.data.list(caller, page));
  serve(app, endpoints.create, ({ caller, body }) => store.data.create(caller, body));
  serve(app, endpoints.get, ({ caller, params }) => store.data.get(caller, params.guid!));
  serve(app, endpoints.update, ({ caller, params, body }) => store.data.update(caller, params.guid!, body));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Data", store.data.softDelete(caller, params.guid!).guid));
  serve(app, endpoints.ofApp, ({ caller, params, page }) => store.data.listByApp(caller, params.guid!, page));
};
