import type { FineTune, FineTuneStatusResponse, NumericId } from "../../api/fine-tunes";
import { FineTuneCreate, FineTuneRename } from "../../api/fine-tunes";
import type { FineTuneRecord } from "../store/fine-tunes";
import { type RouteModule, deleted, envelope, guidParam, parseBody, parsePage, presentAudit } from "./wire";

export const presentFineTune = (fineTune: FineTuneRecord): FineTune => ({
  guid: fineTune.guid,
  name: fineTune.name,
  app: fineTune.appGuid,
  dataset: fineTune.datasetGuid,
  training_dataset: fineTune.trainingDatasetGuid,
  data_ids: fineTune.dataIds,
  base_model: fineTune.baseModel,
  provider: fineTune.providerGuid,
  status: fineTune.status,
  vendor_finetune_name: fineTune.vendorFinetuneName,
  failure_reason: fineTune.failureReason,
  ...presentAudit(fineTune),
});

const presentStatus = (fineTune: FineTuneRecord): FineTuneStatusResponse => ({
  status: fineTune.status,
  vendor_finetune_name: fineTune.vendorFinetuneName,
});

/** `/finetune` and `/apps/{guid}/finetunes`. */
export const fineTuneRoutes: RouteModule = (app, store) => {
  app.get("/finetune", async (request) => {
    const page = parsePage(request);
    return envelope(store.fineTunes.list(request.caller, page), page, presentFineTune);
  });

  app.post("/finetune", async (request) => {
    const body = parseBody(FineTuneCreate, request);
    return presentFineTune(
      store.fineTunes.create(request.caller, {
        name: body.name,
        appGuid: body.app,
        datasetGuid: body.dataset,
        dataIds: body.data_ids,
        baseModel: body.base_model,
        connectionId: body.workspaceModelProviderId,
      }),
    );
  });

  app.get("/finetune/:guid", async (request) => presentFineTune(store.fineTunes.get(request.caller, guidParam(request))));

  app.get("/finetune/:guid/status", async (request) => presentStatus(store.fineTunes.get(request.caller, guidParam(request))));

  // Spec: not shown; the emulator answers the renamed fine-tune.
  app.put("/finetune/:guid", async (request) => {
    const guid = guidParam(request);
    return presentFineTune(store.fineTunes.rename(request.caller, guid, parseBody(FineTuneRename, request).name));
  });

  // Spec: not shown; the emulator answers `{ message: "Fine-tune <guid> deleted" }`.
  app.delete("/finetune/:guid", async (request) =>
    deleted("Fine-tune", store.fineTunes.softDelete(request.caller, guidParam(request)).guid),
  );

  app.get("/apps/:guid/finetunes", async (request) => {
    const page = parsePage(request);
    return store.fineTunes.listByApp(request.caller, guidParam(request), page).map(presentFineTune);
  });
};

/**
 * Emulator-only routes, registered under `/_emulator` (outside `/v1`, behind the same bearer key): what the
 * spec's routes do not expose but a user of the emulator needs.
 */
export const emulatorControlRoutes: RouteModule = (app, store) => {
  // Fine-tune create takes internal numeric ids of Data records and of a Provider connection, which no spec route returns.
  app.get("/data/:guid", async (request) => numericId(store.data.get(request.caller, guidParam(request))));
  app.get("/providers/:guid", async (request) => numericId(store.providers.get(request.caller, guidParam(request))));
};

const numericId = (record: { guid: string; id: number }): NumericId => ({ guid: record.guid, id: record.id });
