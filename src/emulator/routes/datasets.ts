/** `/datasets`, served from src/api/datasets.ts's entries. */
import { datasetEndpoints } from "../../api/datasets";
import type { DatasetItemRecord, DatasetRecord } from "../store/datasets";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

// The store's names for the linked records (`appGuid`, `dataGuid`) as the entries name them (`app`, `data`).
const dataset = (record: DatasetRecord) => ({ ...record, app: record.appGuid });
const item = (record: DatasetItemRecord) => ({ ...record, data: record.dataGuid });

// Spec: not shown; the emulator answers Dataset get and update with the Dataset's five create fields.
export const datasetRoutes: RouteModule = (app, store) => {
  serve(app, datasetEndpoints.list, ({ caller, page }) => {
    const { items, total } = store.datasets.list(caller, page);
    return { items: items.map(dataset), total };
  });
  serve(app, datasetEndpoints.create, ({ caller, body }) =>
    dataset(store.datasets.create(caller, { name: body.name, description: body.description, appGuid: body.app, dataGuids: body.data })),
  );
  serve(app, datasetEndpoints.get, ({ caller, params }) => dataset(store.datasets.get(caller, params.guid!)));
  // `app` is parsed and dropped: the existing App relationship is retained (spec).
  serve(app, datasetEndpoints.update, ({ caller, params, body }) =>
    dataset(store.datasets.update(caller, params.guid!, { name: body.name, description: body.description, dataGuids: body.data })),
  );
  serve(app, datasetEndpoints.delete, ({ caller, params }) => deleted("Dataset", store.datasets.softDelete(caller, params.guid!).guid));
  serve(app, datasetEndpoints.ofApp, ({ caller, params, page }) => store.datasets.listByApp(caller, params.app!, page).map(dataset));
  serve(app, datasetEndpoints.items, ({ caller, params, page }) => {
    const { items, total } = store.datasets.items(caller, params.guid!, page);
    return { items: items.map(item), total };
  });
  serve(app, datasetEndpoints.data, ({ caller, params, page }) => store.datasets.linkedData(caller, params.guid!, page));
};
