import type { Feedback } from "../../api/feedback";
import { FeedbackCreate, FeedbackFields } from "../../api/feedback";
import type { FeedbackRecord } from "../store/feedback";
import { type RouteModule, deleted, envelope, guidParam, parseBody, parsePage, presentAudit } from "./wire";

export const presentFeedback = (feedback: FeedbackRecord): Feedback => ({
  guid: feedback.guid,
  data: feedback.dataGuid,
  type: feedback.type,
  value: feedback.value,
  source: feedback.source,
  metadata: feedback.metadata,
  // Deleted Feedback never reaches a public read.
  deleted: false,
  ...presentAudit(feedback),
});

/** `/feedback`: labels on Data records. */
export const feedbackRoutes: RouteModule = (app, store) => {
  app.get("/feedback", async (request) => {
    const page = parsePage(request);
    return envelope(store.feedback.list(request.caller, page), page, presentFeedback);
  });

  app.post("/feedback", async (request) => {
    const { data, ...fields } = parseBody(FeedbackCreate, request);
    return presentFeedback(store.feedback.create(request.caller, data, fields));
  });

  // The GUID in the path is the Data record's; a `data` field in the body is ignored.
  app.post("/feedback/:guid", async (request) => {
    const dataGuid = guidParam(request);
    return presentFeedback(store.feedback.create(request.caller, dataGuid, parseBody(FeedbackFields, request)));
  });

  app.get("/feedback/:guid", async (request) => presentFeedback(store.feedback.get(request.caller, guidParam(request))));

  app.put("/feedback/:guid", async (request) => {
    const guid = guidParam(request);
    return presentFeedback(store.feedback.replace(request.caller, guid, parseBody(FeedbackFields, request)));
  });

  // Spec: not shown; the emulator answers `{ message: "Feedback <guid> deleted" }`.
  app.delete("/feedback/:guid", async (request) => deleted("Feedback", store.feedback.softDelete(request.caller, guidParam(request)).guid));
};
