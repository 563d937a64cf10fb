/** `/models`, served from src/api/models.ts's entries. */
import { type ModelRecord, modelEndpoints } from "../../api/models";
import type { ModelRecord as StoredModel } from "../store/models";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

/** The stored Model under the wire's names for its provider type (`provider_name`); a record the store answers is never deleted. */
const publicModel = (model: StoredModel): ModelRecord & StoredModel => ({ ...model, providerName: model.provider, deleted: false });

export const modelRoutes: RouteModule = (app, store) => {
  const endpoints = modelEndpoints;
  // A bare array: clients stop when a page is shorter than `limit`.
  serve(app, endpoints.list, ({ caller, page }) => store.models.list(caller, page).map(publicModel));
  // The spec's create response: persistence-shaped and camelCase, echoing the submitted `key`.
  serve(app, endpoints.create, ({ caller, body }) => ({ ...publicModel(store.models.create(caller, body)), key: body.key }));
  serve(app, endpoints.get, ({ caller, params }) => publicModel(store.models.get(caller, params.guid!)));
  serve(app, endpoints.update, ({ caller, params, body }) => publicModel(store.models.update(caller, params.guid!, body)));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Model", store.models.softDelete(caller, params.guid!).guid));
};
