/** `/providers`: the workspace's Provider connections (credentials are write-only), served from src/api/providers.ts's entries. */
import { providerEndpoints } from "../../api/providers";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

export const providerRoutes: RouteModule = (app, store) => {
  const endpoints = providerEndpoints;
  // The spec: no pagination or filters, so skip and limit are ignored.
  serve(app, endpoints.list, ({ caller }) => store.providers.list(caller));
  serve(app, endpoints.create, ({ caller, body }) => store.providers.create(caller, body));
  serve(app, endpoints.get, ({ caller, params }) => store.providers.get(caller, params.guid!));
  serve(app, endpoints.update, ({ caller, params, body }) => store.providers.update(caller, params.guid!, body));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Model provider", store.providers.softDelete(caller, params.guid!).guid));
};
