/** Context Sources under their Context, and the processing routes under `/context_sources`, served from src/api/context-sources.ts's entries. */
import { contextSourceEndpoints } from "../../api/context-sources";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

export const contextSourceRoutes: RouteModule = (app, store) => {
  // Closing the server waits for background processing, so the store is not closed under a running job.
  app.addHook("onClose", () => store.contextSources.idle());

  // Spec: a bare array with no paging parameters; the emulator returns every source of the Context.
  serve(app, contextSourceEndpoints.list, ({ caller, params }) => store.contextSources.list(caller, params.contextGuid!));
  serve(app, contextSourceEndpoints.create, ({ caller, params, body }) => store.contextSources.create(caller, params.contextGuid!, body));
  serve(app, contextSourceEndpoints.get, ({ caller, params }) => store.contextSources.get(caller, params.contextGuid!, params.guid!));
  serve(app, contextSourceEndpoints.update, ({ caller, params, body }) =>
    store.contextSources.update(caller, params.contextGuid!, params.guid!, body),
  );
  serve(app, contextSourceEndpoints.delete, ({ caller, params }) => {
    store.contextSources.softDelete(caller, params.contextGuid!, params.guid!);
    return deleted("Context Source", params.guid!);
  });
  serve(app, contextSourceEndpoints.process, ({ caller, params, body }) => {
    store.contextSources.process(caller, params.guid!, body.contextGuid);
    return { msg: "success" as const };
  });
  serve(app, contextSourceEndpoints.processBatch, ({ caller, body }) => {
    store.contextSources.processBatch(caller, body.sources);
    return { msg: "success" as const };
  });
};
