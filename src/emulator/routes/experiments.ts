import type { Experiment, ExperimentPromptResponse } from "../../api/experiments";
import { ExperimentCreate, ExperimentPrompt, ExperimentUpdate } from "../../api/experiments";
import type { ExperimentRecord } from "../store/experiments";
import { presentRun, runOptions, runUrlBase } from "./actions";
import { type RouteModule, deleted, envelope, guidParam, parseBody, parsePage, presentAudit } from "./wire";

export const presentExperiment = (experiment: ExperimentRecord): Experiment => ({
  guid: experiment.guid,
  name: experiment.name,
  app: experiment.appGuid,
  primary_action: experiment.primaryActionGuid,
  secondary_action: experiment.secondaryActionGuid,
  status: experiment.status,
  // Deleted Experiments never reach a public read.
  deleted: false,
  ...presentAudit(experiment),
});

/** `/experiments` and `/experiments/{guid}/prompt`. */
export const experimentRoutes: RouteModule = (app, store, context) => {
  app.get("/experiments", async (request) => {
    const page = parsePage(request);
    return envelope(store.experiments.list(request.caller, page), page, presentExperiment);
  });

  app.post("/experiments", async (request) => {
    const body = parseBody(ExperimentCreate, request);
    return presentExperiment(
      store.experiments.create(request.caller, {
        name: body.name,
        appGuid: body.app,
        primaryActionGuid: body.primary_action,
        secondaryActionGuid: body.secondary_action,
      }),
    );
  });

  app.get("/experiments/:guid", async (request) => presentExperiment(store.experiments.get(request.caller, guidParam(request))));

  // Spec: not shown; the emulator answers the updated Experiment.
  app.put("/experiments/:guid", async (request) => {
    const guid = guidParam(request);
    const body = parseBody(ExperimentUpdate, request);
    return presentExperiment(
      store.experiments.update(request.caller, guid, {
        name: body.name,
        primaryActionGuid: body.primary_action,
        secondaryActionGuid: body.secondary_action,
      }),
    );
  });

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

  // Spec: not shown; the emulator answers `{ message: "Experiment <guid> deleted" }`.
  app.delete("/experiments/:guid", async (request) =>
    deleted("Experiment", store.experiments.softDelete(request.caller, guidParam(request)).guid),
  );
};
