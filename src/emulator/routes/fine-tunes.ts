/** `/finetune` and `/apps/{guid}/finetunes`, served from src/api/fine-tunes.ts's entries. */
import { type NumericId, fineTuneEndpoints } from "../../api/fine-tunes";
import type { FineTuneRecord } from "../store/fine-tunes";
import { serve } from "./serve";
import { type RouteModule, deleted, guidParam } from "./wire";

// The store's names for the linked records as the entries name them.
const fineTune = (record: FineTuneRecord) => ({
  ...record,
  app: record.appGuid,
  dataset: record.datasetGuid,
  trainingDataset: record.trainingDatasetGuid,
  providerConnectionGuid: record.providerGuid,
});

export const fineTuneRoutes: RouteModule = (app, store) => {
  serve(app, fineTuneEndpoints.list, ({ caller, page }) => {
    const { items, total } = store.fineTunes.list(caller, page);
    return { items: items.map(fineTune), total };
  });
  serve(app, fineTuneEndpoints.create, ({ caller, body }) =>
    fineTune(
      store.fineTunes.create(caller, {
        name: body.name,
        appGuid: body.app,
        datasetGuid: body.dataset,
        dataIds: body.dataIds,
        baseModel: body.baseModel,
        connectionId: body.providerConnection,
      }),
    ),
  );
  serve(app, fineTuneEndpoints.get, ({ caller, params }) => fineTune(store.fineTunes.get(caller, params.guid!)));
  serve(app, fineTuneEndpoints.status, ({ caller, params }) => store.fineTunes.get(caller, params.guid!));
  serve(app, fineTuneEndpoints.rename, ({ caller, params, body }) => fineTune(store.fineTunes.rename(caller, params.guid!, body.name)));
  serve(app, fineTuneEndpoints.delete, ({ caller, params }) => deleted("Fine-tune", store.fineTunes.softDelete(caller, params.guid!).guid));
  serve(app, fineTuneEndpoints.ofApp, ({ caller, params, page }) => store.fineTunes.listByApp(caller, params.guid!, page).map(fineTune));
};

/**
 * Emulator-only routes, registered under `/_emulator` (outside `/v1`, behind the same bearer key): what the
 * spec's routes do not expose but a user of the emulator needs. Hand-written: an entry's path lies below
 * `/v1`, and no client of the package calls these.
 */
export const emulatorControlRoutes: RouteModule = (app, store) => {
  // Fine-tune create takes internal numeric ids of Data records and of a Provider connection, which no spec route returns.
  app.get("/data/:guid", async (request) => numericId(store.data.get(request.caller, guidParam(request))));
  app.get("/providers/:guid", async (request) => numericId(store.providers.get(request.caller, guidParam(request))));
};

const numericId = (record: { guid: string; id: number }): NumericId => ({ guid: record.guid, id: record.id });
