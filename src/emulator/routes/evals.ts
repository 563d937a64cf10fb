/** `/evals`, served from src/api/evals.ts's entries. */
import { EvalListQuery, evalEndpoints } from "../../api/evals";
import { serve } from "./serve";
import { type RouteModule, deleted, parse } from "./wire";

export const evalRoutes: RouteModule = (app, store) => {
  serve(app, evalEndpoints.list, ({ caller, page, request }) => {
    const { dataType } = parse(EvalListQuery, request.query, "query");
    return store.evals.list(caller, page, dataType);
  });
  serve(app, evalEndpoints.types, () => store.evals.listTypes());
  serve(app, evalEndpoints.create, ({ caller, body }) => store.evals.create(caller, body));
  serve(app, evalEndpoints.get, ({ caller, params }) => store.evals.get(caller, params.guid!));
  serve(app, evalEndpoints.update, ({ caller, params, body }) => store.evals.update(caller, params.guid!, body));
  serve(app, evalEndpoints.delete, ({ caller, params }) => deleted("Eval", store.evals.softDelete(caller, params.guid!).guid));
  // No route starts a run, so every Eval has none; a missing Eval is still 404.
  serve(app, evalEndpoints.runs, ({ caller, params }) => {
    store.evals.get(caller, params.guid!);
    return [];
  });
};
