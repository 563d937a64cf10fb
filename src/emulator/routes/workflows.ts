/** `/workflows` and `/apps/{guid}/workflows`, served from src/api/workflows.ts's entries. */
import { type WorkflowTriggered, workflowEndpoints } from "../../api/workflows";
import type { WorkflowRunRecord } from "../store/workflows";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

/** The trigger response of a run; its URLs are absolute, on the emulator's own origin (see RouteContext.origin). */
function triggered(run: WorkflowRunRecord, origin: string): WorkflowTriggered {
  return {
    msg: "Workflow triggered",
    status: "success",
    blocks: run.blocks.map((block) => ({
      feedbackUrl: `${origin}/v1/feedback/${block.dataGuid}`,
      dataGuid: block.dataGuid,
      resultUrl: `${origin}/v1/workflows/${run.workflowGuid}/result/${run.guid}`,
      action: { guid: block.actionGuid, name: block.actionName },
    })),
    runGuid: run.guid,
    hasOutputBlock: run.blocks.length > 0,
  };
}

export const workflowRoutes: RouteModule = (app, store, context) => {
  const endpoints = workflowEndpoints;
  serve(app, endpoints.ofApp, ({ caller, params, page }) => store.workflows.listByApp(caller, params.guid!, page));
  serve(app, endpoints.create, ({ caller, body }) => store.workflows.create(caller, body));
  serve(app, endpoints.get, ({ caller, params }) => store.workflows.get(caller, params.guid!));
  serve(app, endpoints.update, ({ caller, params, body }) => store.workflows.update(caller, params.guid!, body));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Workflow", store.workflows.softDelete(caller, params.guid!).guid));
  serve(app, endpoints.trigger, ({ caller, params, body }) =>
    triggered(store.workflows.trigger(caller, params.guid!, body?.input ?? undefined), context.origin()),
  );
  serve(app, endpoints.playground, ({ caller, body }) => {
    const blocks = body.blocks?.map((block) => ({ name: block.name, actionGuid: block.action }));
    return triggered(store.workflows.playground(caller, body.workflow, body.input ?? undefined, blocks), context.origin());
  });
  // A run always has at least one block: a Workflow without blocks is refused before it runs.
  serve(app, endpoints.result, ({ caller, params }) => ({
    result: store.workflows.run(caller, params.guid!, params.runGuid!).blocks.at(-1)!.output,
  }));
  serve(app, endpoints.datasetResult, ({ caller, params }) => {
    const run = store.workflows.run(caller, params.guid!, params.runGuid!);
    return { final: "" as const, blocks: run.blocks.map((block) => ({ guid: block.blockGuid, name: block.name, output: block.output })) };
  });
};
