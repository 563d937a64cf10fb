/** `/finetune` and `/apps/{guid}/finetunes`, served from src/api/fine-tunes.ts's entries. */
import { type NumericId, fineTuneEndpoints } from "../../api/fine-tunes";
import { serve } from "./serve";
import { type RouteModule, deleted, guidParam } from "./wire";

export const fineTuneRoutes: RouteModule = (app, store) => {
  serve(app, fineTuneEndpoints.list, ({ caller, page }) => store.fineTunes.list(caller, page));
  serve(app, fineTuneEndpoints.create, ({ caller, body }) => store.fineTunes.create(caller, body));
  serve(app, fineTuneEndpoints.get, ({ caller, params }) => store.fineTunes.get(caller, params.guid!));
  serve(app, fineTuneEndpoints.status, ({ caller, params }) => store.fineTunes.get(caller, params.guid!));
  serve(app, fineTuneEndpoints.rename, ({ caller, params, body }) => store.fineTunes.rename(caller, params.guid!, body.name));
  serve(app, fineTuneEndpoints.delete, ({ caller, params }) => deleted("Fine-tune", store.fineTunes.softDelete(caller, params.guid!).guid));
  serve(app, fineTuneEndpoints.ofApp, ({ caller, params, page }) => store.fineTunes.listByApp(caller, params.guid!, page));
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
