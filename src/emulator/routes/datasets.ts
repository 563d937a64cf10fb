/** `/datasets`, served from src/api/datasets.ts's entries. */
import { datasetEndpoints } from "../../api/datasets";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

// Spec: not shown; the emulator answers Dataset get and update with the Dataset's five create fields.
export const datasetRoutes: RouteModule = (app, store) => {
  serve(app, datasetEndpoints.list, ({ caller, page }) => store.datasets.list(caller, page));
  serve(app, datasetEndpoints.create, ({ caller, body }) => store.datasets.create(caller, body));
  serve(app, datasetEndpoints.get, ({ caller, params }) => store.datasets.get(caller, params.guid!));
  // `app` is parsed and dropped: the existing App relationship is retained (spec).
  serve(app, datasetEndpoints.update, ({ caller, params, body }) => store.datasets.update(caller, params.guid!, body));
  serve(app, datasetEndpoints.delete, ({ caller, params }) => deleted("Dataset", store.datasets.softDelete(caller, params.guid!).guid));
  serve(app, datasetEndpoints.ofApp, ({ caller, params, page }) => store.datasets.listByApp(caller, params.app!, page));
  serve(app, datasetEndpoints.items, ({ caller, params, page }) => store.datasets.items(caller, params.guid!, page));
  serve(app, datasetEndpoints.data, ({ caller, params, page }) => store.datasets.linkedData(caller, params.guid!, page));
};
