/** `/experiments`, served from src/api/experiments.ts's entries, and `/experiments/{guid}/prompt`. */
import { ExperimentPrompt, type ExperimentPromptResponse, experimentEndpoints } from "../../api/experiments";
import type { ExperimentRecord } from "../store/experiments";
import { presentRun, runOptions, runUrlBase } from "./actions";
import { serve } from "./serve";
import { type RouteModule, deleted, guidParam, parseBody } from "./wire";

// The store's names for the App and the two Actions as the entries name them; deleted Experiments never reach a public read.
const experiment = (record: ExperimentRecord) => ({
  ...record,
  app: record.appGuid,
  primaryAction: record.primaryActionGuid,
  secondaryAction: record.secondaryActionGuid,
  deleted: false,
});

export const experimentRoutes: RouteModule = (app, store, context) => {
  serve(app, experimentEndpoints.list, ({ caller, page }) => {
    const { items, total } = store.experiments.list(caller, page);
    return { items: items.map(experiment), total };
  });
  serve(app, experimentEndpoints.create, ({ caller, body }) =>
    experiment(
      store.experiments.create(caller, {
        name: body.name,
        appGuid: body.app,
        primaryActionGuid: body.primaryAction,
        secondaryActionGuid: body.secondaryAction,
      }),
    ),
  );
  serve(app, experimentEndpoints.get, ({ caller, params }) => experiment(store.experiments.get(caller, params.guid!)));
  // Each Action under the create name, else under the official client's alias (the entry checks that both agree).
  serve(app, experimentEndpoints.update, ({ caller, params, body }) =>
    experiment(
      store.experiments.update(caller, params.guid!, {
        name: body.name,
        primaryActionGuid: body.primaryAction ?? body.actionPrimaryGuid,
        secondaryActionGuid: body.secondaryAction ?? body.actionSecondaryGuid,
      }),
    ),
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
      ...runOptions(body),
      actionGuid: body.force_action ?? undefined,
    });
    return { ...presentRun(store, generation, body, runUrlBase(app, context)), action: generation.actionGuid, variant };
  });
};
