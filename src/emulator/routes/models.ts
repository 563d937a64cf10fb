import type { Model, ModelCreated } from "../../api/models";
import { ModelCreate, ModelUpdate } from "../../api/models";
import type { ModelRecord } from "../store/models";
import { type RouteModule, deleted, guidParam, parseBody, parsePage, presentAudit } from "./wire";

/** The public Model: the provider type and linked connection, never the credential. */
export const presentModel = (model: ModelRecord): Model => ({
  guid: model.guid,
  llm: model.llm,
  provider_name: model.provider,
  provider_guid: model.providerGuid,
  default: model.default,
  deleted: false,
  ...presentAudit(model),
});

/** The spec's create response: persistence-shaped and camelCase, echoing the submitted `key`. */
const presentCreatedModel = (model: ModelRecord, key: string): ModelCreated => ({
  id: model.id,
  guid: model.guid,
  llm: model.llm,
  workspaceId: model.workspaceId,
  workspaceModelProviderId: model.workspaceModelProviderId,
  providerId: model.providerId,
  url: model.url,
  default: model.default,
  deleted: false,
  createdAt: model.createdAt,
  updatedAt: model.updatedAt,
  createdById: model.createdById,
  lastUpdatedById: model.lastUpdatedById,
  key,
});

export const modelRoutes: RouteModule = (app, store) => {
  // A bare array: clients stop when a page is shorter than `limit`.
  app.get("/models", async (request) => store.models.list(request.caller, parsePage(request)).map(presentModel));

  app.post("/models", async (request) => {
    const body = parseBody(ModelCreate, request);
    return presentCreatedModel(store.models.create(request.caller, body), body.key);
  });

  app.get("/models/:guid", async (request) => presentModel(store.models.get(request.caller, guidParam(request))));

  app.put("/models/:guid", async (request) => {
    const guid = guidParam(request);
    return presentModel(store.models.update(request.caller, guid, parseBody(ModelUpdate, request)));
  });

  // Spec: not shown; the emulator answers the delete message the spec shows for Providers.
  app.delete("/models/:guid", async (request) => deleted("Model", store.models.softDelete(request.caller, guidParam(request)).guid));
};
