/** `/evals`, served from src/api/evals.ts's entries. */
import { EvalListQuery, evalEndpoints } from "../../api/evals";
import type { EvalRecord } from "../store/evals";
import { serve } from "./serve";
import { type RouteModule, deleted, parse } from "./wire";

// The store's name for the Action (`actionGuid`) as the entries name it (`action`).
const evaluation = (record: EvalRecord) => ({ ...record, action: record.actionGuid });

export const evalRoutes: RouteModule = (app, store) => {
  serve(app, evalEndpoints.list, ({ caller, page, request }) => {
    const { dataType } = parse(EvalListQuery, request.query, "query");
    const { items, total } = store.evals.list(caller, page, dataType);
    return { items: items.map(evaluation), total };
  });
  serve(app, evalEndpoints.types, () => store.evals.listTypes());
  serve(app, evalEndpoints.create, ({ caller, body }) =>
    evaluation(store.evals.create(caller, { ...body, actionGuid: body.action, datasetGuid: body.dataset })),
  );
  serve(app, evalEndpoints.get, ({ caller, params }) => evaluation(store.evals.get(caller, params.guid!)));
  serve(app, evalEndpoints.update, ({ caller, params, body }) => evaluation(store.evals.update(caller, params.guid!, body)));
  serve(app, evalEndpoints.delete, ({ caller, params }) => deleted("Eval", store.evals.softDelete(caller, params.guid!).guid));
  // No route starts a run, so every Eval has none; a missing Eval is still 404.
  serve(app, evalEndpoints.runs, ({ caller, params }) => {
    store.evals.get(caller, params.guid!);
    return [];
  });
};
