import type { Dataset, DatasetItem } from "../../api/datasets";
import { DatasetCreate, DatasetUpdate } from "../../api/datasets";
import type { DatasetItemRecord, DatasetRecord } from "../store/datasets";
import { presentData } from "./data";
import { type RouteModule, deleted, envelope, guidParam, params, parseBody, parsePage } from "./wire";

export const presentDataset = (dataset: DatasetRecord): Dataset => ({
  guid: dataset.guid,
  name: dataset.name,
  description: dataset.description,
  app: dataset.appGuid,
  created_by_id: dataset.createdById,
});

export const presentDatasetItem = (item: DatasetItemRecord): DatasetItem => ({
  guid: item.guid,
  input: item.input,
  output: item.output,
  data: item.dataGuid,
  created_at: item.createdAt,
});

/** `/datasets`. */
// Spec: not shown; the emulator answers Dataset get and update with the Dataset's five create fields.
export const datasetRoutes: RouteModule = (app, store) => {
  app.get("/datasets", async (request) => {
    const page = parsePage(request);
    return envelope(store.datasets.list(request.caller, page), page, presentDataset);
  });

  app.post("/datasets", async (request) => {
    const body = parseBody(DatasetCreate, request);
    return presentDataset(
      store.datasets.create(request.caller, { name: body.name, description: body.description, appGuid: body.app, dataGuids: body.data }),
    );
  });

  app.get("/datasets/:guid", async (request) => presentDataset(store.datasets.get(request.caller, guidParam(request))));

  app.put("/datasets/:guid", async (request) => {
    const guid = guidParam(request);
    // `app` is parsed and dropped: the existing App relationship is retained (spec).
    const body = parseBody(DatasetUpdate, request);
    const input = { name: body.name, description: body.description, dataGuids: body.datapoints };
    return presentDataset(store.datasets.update(request.caller, guid, input));
  });

  // Spec: not shown; the emulator answers `{ message: "Dataset <guid> deleted" }`.
  app.delete("/datasets/:guid", async (request) => deleted("Dataset", store.datasets.softDelete(request.caller, guidParam(request)).guid));

  app.get("/datasets/app/:app", async (request) => {
    const { app: appGuid } = params(request, "app");
    return store.datasets.listByApp(request.caller, appGuid, parsePage(request)).map(presentDataset);
  });

  app.get("/datasets/:guid/items", async (request) => {
    const guid = guidParam(request);
    const page = parsePage(request);
    return envelope(store.datasets.items(request.caller, guid, page), page, presentDatasetItem);
  });

  app.get("/datasets/:guid/data", async (request) => {
    const guid = guidParam(request);
    return store.datasets.linkedData(request.caller, guid, parsePage(request)).map(presentData);
  });
};
