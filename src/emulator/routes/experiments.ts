/** `/experiments`, served from src/api/experiments.ts's entries, and `/experiments/{guid}/prompt`. */
import { ExperimentPrompt, type ExperimentPromptResponse, experimentEndpoints } from "../../api/experiments";
import { presentRun, runUrlBase } from "./actions";
import { serve } from "./serve";
import { type RouteModule, deleted, guidParam, parseBody } from "./wire";

export const experimentRoutes: RouteModule = (app, store, context) => {
  serve(app, experimentEndpoints.list, ({ caller, page }) => store.experiments.list(caller, page));
  serve(app, experimentEndpoints.create, ({ caller, body }) => store.experiments.create(caller, body));
  serve(app, experimentEndpoints.get, ({ caller, params }) => store.experiments.get(caller, params.guid!));
  // Each Action under the create name, else under the official client's alias (the entry checks that both agree).
  serve(app, experimentEndpoints.update, ({ caller, params, body }) =>
    store.experiments.update(caller, params.guid!, {
      name: body.name,
      primaryAction: body.primaryAction ?? body.actionPrimaryGuid,
      secondaryAction: body.secondaryAction ?? body.actionSecondaryGuid,
    }),
  );
  serve(app, experimentEndpoints.delete, ({ caller, params }) =>
    deleted("Experiment", store.experiments.softDelete(caller, params.guid!).guid),
  );

  // Stays hand-written: its body and answer are an Action run's (src/api/actions.ts's RunBody and RunResponse, in the wire's names,
  // answered by the Action routes' presentRun), which have no entry yet.
  // Spec: the response is not shown; the emulator answers a run's, plus the Action that served it and its side.
  app.post("/experiments/:guid/prompt", async (request): Promise<ExperimentPromptResponse> => {
    const guid = guidParam(request);
    const body = parseBody(ExperimentPrompt, request);
    const { generation, variant } = store.generations.promptExperiment(request.caller, guid, {
      ...body,
      actionGuid: body.force_action ?? undefined,
    });
    return { ...presentRun(store, generation, body, runUrlBase(app, context)), action: generation.actionGuid, variant };
  });
};
