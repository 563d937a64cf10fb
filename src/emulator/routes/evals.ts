import type { Eval, EvalRun, EvalType } from "../../api/evals";
import { EvalCreate, EvalListQuery, EvalUpdate } from "../../api/evals";
import type { EvalRecord, EvalTypeRecord } from "../store/evals";
import { type RouteModule, deleted, envelope, guidParam, parse, parseBody, presentAudit } from "./wire";

export const presentEval = (evaluation: EvalRecord): Eval => ({
  guid: evaluation.guid,
  name: evaluation.name,
  action: evaluation.actionGuid,
  version: evaluation.version,
  eval_types: evaluation.evalTypes,
  dataset: evaluation.dataset,
  sampling_rate: evaluation.samplingRate,
  alert_on_fail: evaluation.alertOnFail,
  data_type: evaluation.dataType,
  ...presentAudit(evaluation),
});

const presentEvalType = (type: EvalTypeRecord): EvalType => ({ guid: type.guid, name: type.name, description: type.description });

export const evalRoutes: RouteModule = (app, store) => {
  // Spec: the list shape is not shown; the emulator answers the standard envelope.
  app.get("/evals", async (request) => {
    const query = parse(EvalListQuery, request.query, "query");
    return envelope(store.evals.list(request.caller, query, query.dataType), query, presentEval);
  });

  app.get("/evals/types", async () => store.evals.listTypes().map(presentEvalType));

  app.post("/evals", async (request) => {
    const body = parseBody(EvalCreate, request);
    const evaluation = store.evals.create(request.caller, {
      name: body.name,
      actionGuid: body.action,
      evalTypes: body.eval_types,
      datasetGuid: body.dataset,
      version: body.version,
      samplingRate: body.sampling_rate,
      alertOnFail: body.alert_on_fail,
    });
    return presentEval(evaluation);
  });

  app.get("/evals/:guid", async (request) => presentEval(store.evals.get(request.caller, guidParam(request))));

  app.put("/evals/:guid", async (request) => {
    const guid = guidParam(request);
    return presentEval(store.evals.update(request.caller, guid, { evalTypes: parseBody(EvalUpdate, request).eval_types }));
  });

  // Spec: not shown; the emulator answers the delete message the spec shows for Providers.
  app.delete("/evals/:guid", async (request) => deleted("Eval", store.evals.softDelete(request.caller, guidParam(request)).guid));

  // No route starts a run, so every Eval has none; a missing Eval is still 404.
  app.get("/evals/:guid/runs", async (request): Promise<EvalRun[]> => {
    store.evals.get(request.caller, guidParam(request));
    return [];
  });
};
