/** `/feedback`: labels on Data records, served from src/api/feedback.ts's entries. */
import { feedbackEndpoints } from "../../api/feedback";
import type { FeedbackRecord } from "../store/feedback";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

// The stored Feedback under the name the wire gives its Data record; deleted Feedback never reaches a public read.
const feedback = (record: FeedbackRecord) => ({ ...record, data: record.dataGuid, deleted: false });

export const feedbackRoutes: RouteModule = (app, store) => {
  const endpoints = feedbackEndpoints;
  serve(app, endpoints.list, ({ caller, page }) => {
    const { items, total } = store.feedback.list(caller, page);
    return { items: items.map(feedback), total };
  });
  serve(app, endpoints.create, ({ caller, body: { data, ...fields } }) => feedback(store.feedback.create(caller, data, fields)));
  serve(app, endpoints.createForData, ({ caller, params, body }) => feedback(store.feedback.create(caller, params.guid!, body)));
  serve(app, endpoints.get, ({ caller, params }) => feedback(store.feedback.get(caller, params.guid!)));
  serve(app, endpoints.replace, ({ caller, params, body }) => feedback(store.feedback.replace(caller, params.guid!, body)));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Feedback", store.feedback.softDelete(caller, params.guid!).guid));
};
