import type { Workflow, WorkflowDatasetResult, WorkflowResult, WorkflowTriggered } from "../../api/workflows";
import { WorkflowCreate, WorkflowPlayground, WorkflowTrigger, WorkflowUpdate } from "../../api/workflows";
import type { WorkflowRecord, WorkflowRunRecord } from "../store/workflows";
import { type RouteModule, deleted, guidParam, params, parse, parseBody, parsePage, presentAudit } from "./wire";

export const presentWorkflow = (workflow: WorkflowRecord): Workflow => ({
  guid: workflow.guid,
  name: workflow.name,
  slug: workflow.slug,
  app: workflow.appGuid,
  ...presentAudit(workflow),
});

/** The trigger response; its URLs are absolute, on the emulator's own origin (see RouteContext.origin). */
export function presentRun(run: WorkflowRunRecord, origin: string): WorkflowTriggered {
  return {
    msg: "Workflow triggered",
    status: "success",
    blocks: run.blocks.map((block) => ({
      feedback_url: `${origin}/v1/feedback/${block.dataGuid}`,
      data_guid: block.dataGuid,
      result_url: `${origin}/v1/workflows/${run.workflowGuid}/result/${run.guid}`,
      action: { guid: block.actionGuid, name: block.actionName },
    })),
    run_guid: run.guid,
    has_output_block: run.blocks.length > 0,
  };
}

/** `/workflows` and `/apps/{guid}/workflows`. */
export const workflowRoutes: RouteModule = (app, store, context) => {
  app.post("/workflows", async (request) => {
    const body = parseBody(WorkflowCreate, request);
    return presentWorkflow(store.workflows.create(request.caller, { appGuid: body.app, name: body.name }));
  });

  app.get("/workflows/:guid", async (request) => presentWorkflow(store.workflows.get(request.caller, guidParam(request))));

  // Spec: not shown; the emulator answers the updated Workflow.
  app.put("/workflows/:guid", async (request) => {
    const guid = guidParam(request);
    return presentWorkflow(store.workflows.update(request.caller, guid, parseBody(WorkflowUpdate, request)));
  });

  // Spec: not shown; the emulator answers `{ message: "Workflow <guid> deleted" }`.
  app.delete("/workflows/:guid", async (request) =>
    deleted("Workflow", store.workflows.softDelete(request.caller, guidParam(request)).guid),
  );

  app.get("/apps/:guid/workflows", async (request) => {
    const page = parsePage(request);
    return store.workflows.listByApp(request.caller, guidParam(request), page).map(presentWorkflow);
  });

  app.post("/workflows/:guid/trigger", async (request) => {
    const guid = guidParam(request);
    // Spec: not shown whether a body is required; every field is optional, so the emulator accepts none.
    const { input } = parse(WorkflowTrigger, request.body ?? {});
    return presentRun(store.workflows.trigger(request.caller, guid, input), context.origin());
  });

  // Spec: response not shown; the emulator answers the trigger's shape for the run it records.
  app.post("/workflows/playground", async (request) => {
    const body = parseBody(WorkflowPlayground, request);
    const blocks = body.blocks?.map((block) => ({ name: block.name, actionGuid: block.action }));
    return presentRun(store.workflows.playground(request.caller, body.workflow, body.input, blocks), context.origin());
  });

  app.get("/workflows/:guid/result/:runGuid", async (request): Promise<WorkflowResult> => {
    const { guid, runGuid } = params(request, "guid", "runGuid");
    const run = store.workflows.run(request.caller, guid, runGuid);
    // A run always has at least one block: a Workflow without blocks is refused before it runs.
    return { result: run.blocks.at(-1)!.output };
  });

  app.get("/workflows/:guid/result/:runGuid/dataset", async (request): Promise<WorkflowDatasetResult> => {
    const { guid, runGuid } = params(request, "guid", "runGuid");
    const run = store.workflows.run(request.caller, guid, runGuid);
    return { final: "", blocks: run.blocks.map((block) => ({ guid: block.blockGuid, name: block.name, output: block.output })) };
  });
};
