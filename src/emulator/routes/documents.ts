/** The Documents of a Context, under `/contexts/{contextGuid}/documents`, served from src/api/documents.ts's entries. */
import { DocumentBulkDelete, DocumentListQuery, documentEndpoints } from "../../api/documents";
import { serve } from "./serve";
import { type RouteModule, deleted, parse } from "./wire";

export const documentRoutes: RouteModule = (app, store) => {
  const endpoints = documentEndpoints;
  serve(app, endpoints.list, ({ caller, params, page, request }) => {
    const { query } = parse(DocumentListQuery, request.query, "query");
    return store.documents.list(caller, params.contextGuid!, page, query);
  });
  serve(app, endpoints.create, ({ caller, params, body }) => {
    const created = store.documents.create(caller, params.contextGuid!, body);
    return { docs: created.map((document) => document.guid), status: "success" as const };
  });
  serve(app, endpoints.get, ({ caller, params }) => store.documents.get(caller, params.contextGuid!, params.guid!));
  serve(app, endpoints.update, ({ caller, params, body }) => store.documents.update(caller, params.contextGuid!, params.guid!, body));
  serve(app, endpoints.embed, ({ caller, params }) => {
    store.documents.embed(caller, params.contextGuid!, params.guid!);
    return { status: "success" as const };
  });
  serve(app, endpoints.delete, ({ caller, params }) => {
    store.documents.softDelete(caller, params.contextGuid!, params.guid!);
    return deleted("Document", params.guid!);
  });
  // A null filter counts as none: every Document of the Context is deleted.
  serve(app, endpoints.deleteMany, ({ caller, params, body, request }) => {
    const fromQuery = parse(DocumentBulkDelete, request.query, "query").filter;
    store.documents.deleteMany(caller, params.contextGuid!, body?.filter ?? fromQuery);
    return { status: "success" as const };
  });
};
