import type { Provider } from "../../api/providers";
import { ProviderCreate, ProviderUpdate } from "../../api/providers";
import type { ProviderRecord } from "../store/providers";
import { type RouteModule, deleted, guidParam, parseBody, presentAudit } from "./wire";

/** The public Provider connection: never the credential. */
export const presentProvider = (connection: ProviderRecord): Provider => ({
  guid: connection.guid,
  name: connection.name,
  nickname: connection.nickname,
  url: connection.url,
  default: connection.default,
  ...presentAudit(connection),
});

/** `/providers`: the workspace's Provider connections (credentials are write-only). */
export const providerRoutes: RouteModule = (app, store) => {
  // The spec: no pagination or filters, so skip and limit are ignored.
  app.get("/providers", async (request) => store.providers.list(request.caller).map(presentProvider));

  app.post("/providers", async (request) => presentProvider(store.providers.create(request.caller, parseBody(ProviderCreate, request))));

  app.get("/providers/:guid", async (request) => presentProvider(store.providers.get(request.caller, guidParam(request))));

  app.put("/providers/:guid", async (request) => {
    const guid = guidParam(request);
    return presentProvider(store.providers.update(request.caller, guid, parseBody(ProviderUpdate, request)));
  });

  app.delete("/providers/:guid", async (request) =>
    deleted("Model provider", store.providers.softDelete(request.caller, guidParam(request)).guid),
  );
};
