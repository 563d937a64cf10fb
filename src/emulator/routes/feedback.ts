/** `/feedback`: labels on Data records, served from src/api/feedback.ts's entries. */
import { feedbackEndpoints } from "../../api/feedback";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

export const feedbackRoutes: RouteModule = (app, store) => {
  const endpoints = feedbackEndpoints;
  serve(app, endpoints.list, ({ caller, page }) => store.feedback.list(caller, page));
  serve(app, endpoints.create, ({ caller, body: { data, ...fields } }) => store.feedback.create(caller, data, fields));
  serve(app, endpoints.createForData, ({ caller, params, body }) => store.feedback.create(caller, params.guid!, body));
  serve(app, endpoints.get, ({ caller, params }) => store.feedback.get(caller, params.guid!));
  serve(app, endpoints.replace, ({ caller, params, body }) => store.feedback.replace(caller, params.guid!, body));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Feedback", store.feedback.softDelete(caller, params.guid!).guid));
};
