import type { Data } from "../../api/data";
import { DataCreate, DataUpdate } from "../../api/data";
import type { DataCreateInput, DataRecord, DataUpdateInput } from "../store/data";
import { type RouteModule, deleted, envelope, guidParam, parseBody, parsePage } from "./wire";

/** The public fields only: relationships, prompt parts and the run link stay inside. */
export const presentData = (data: DataRecord): Data => ({
  guid: data.guid,
  input: data.input,
  output: data.output,
  full_prompt_sent: data.fullPromptSent,
  model: data.model,
  model_provider: data.modelProvider,
  num_input_tokens: data.numInputTokens,
  num_output_tokens: data.numOutputTokens,
  latency: data.latency,
  metadata: data.metadata,
  created_at: data.createdAt,
  updated_at: data.updatedAt,
});

/** Wire fields both bodies share, in the store's names; `meta_data` stands in for a missing `metadata`. */
const sharedFields = (body: DataCreate | DataUpdate) => ({
  appGuid: body.app,
  sessionGuid: body.session,
  fullPromptSent: body.full_prompt_sent,
  systemMessage: body.system_message,
  promptTemplate: body.prompt_template,
  model: body.model,
  modelProvider: body.model_provider,
  numInputTokens: body.num_input_tokens,
  numOutputTokens: body.num_output_tokens,
  latency: body.latency,
  metadata: body.metadata === undefined ? body.meta_data : body.metadata,
});

const createInput = (body: DataCreate): DataCreateInput => ({
  ...sharedFields(body),
  actionGuid: body.action,
  input: body.input,
  output: body.output,
  versionGuid: body.version,
  runId: body.runId,
  guid: body.guid,
});

const updateInput = (body: DataUpdate): DataUpdateInput => ({
  ...sharedFields(body),
  actionGuid: body.action,
  input: body.input,
  output: body.output,
  versionGuid: body.version_id,
});

/** `/data` and `/apps/{guid}/data`. */
export const dataRoutes: RouteModule = (app, store) => {
  app.get("/data", async (request) => {
    const page = parsePage(request);
    return envelope(store.data.list(request.caller, page), page, presentData);
  });

  app.post("/data", async (request) => presentData(store.data.create(request.caller, createInput(parseBody(DataCreate, request)))));

  app.get("/data/:guid", async (request) => presentData(store.data.get(request.caller, guidParam(request))));

  app.put("/data/:guid", async (request) => {
    const guid = guidParam(request);
    return presentData(store.data.update(request.caller, guid, updateInput(parseBody(DataUpdate, request))));
  });

  // Spec: not shown; the emulator answers the delete message the spec shows for Providers.
  app.delete("/data/:guid", async (request) => deleted("Data", store.data.softDelete(request.caller, guidParam(request)).guid));

  app.get("/apps/:guid/data", async (request) => {
    const page = parsePage(request);
    return envelope(store.data.listByApp(request.caller, guidParam(request), page), page, presentData);
  });
};
