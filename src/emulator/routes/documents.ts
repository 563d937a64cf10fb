import type { Document, DocumentCreated, DocumentStatus } from "../../api/documents";
import { DocumentBulkDelete, DocumentCreate, DocumentListQuery, DocumentUpdate } from "../../api/documents";
import type { DocumentRecord } from "../store/documents";
import { type RouteModule, deleted, envelope, params, parse, parseBody } from "./wire";

export const presentDocument = (document: DocumentRecord): Document => ({
  guid: document.guid,
  content: document.content,
  filter: document.filter,
  metadata: document.metadata,
  embedding: document.embedding,
  created_at: document.createdAt,
  updated_at: document.updatedAt,
});

const BASE = "/contexts/:contextGuid/documents";

/** The Documents of a Context, under `/contexts/{contextGuid}/documents`. */
export const documentRoutes: RouteModule = (app, store) => {
  app.get(BASE, async (request) => {
    const { contextGuid } = params(request, "contextGuid");
    const { query, ...page } = parse(DocumentListQuery, request.query, "query");
    return envelope(store.documents.list(request.caller, contextGuid, page, query), page, presentDocument);
  });

  app.post(BASE, async (request): Promise<DocumentCreated> => {
    const { contextGuid } = params(request, "contextGuid");
    const body = parseBody(DocumentCreate, request);
    const created = store.documents.create(request.caller, contextGuid, {
      content: (body.content ?? body.text)!,
      filter: body.filter,
      metadata: body.metadata ?? body.meta_data,
    });
    return { docs: created.map((document) => document.guid), status: "success" };
  });

  app.get(`${BASE}/:guid`, async (request) => {
    const { contextGuid, guid } = params(request, "contextGuid", "guid");
    return presentDocument(store.documents.get(request.caller, contextGuid, guid));
  });

  // Spec: the update response is not shown; the emulator answers the updated Document.
  app.put(`${BASE}/:guid`, async (request) => {
    const { contextGuid, guid } = params(request, "contextGuid", "guid");
    const body = parseBody(DocumentUpdate, request);
    const input = { content: body.content ?? body.text, filter: body.filter, metadata: body.metadata ?? body.meta_data };
    return presentDocument(store.documents.update(request.caller, contextGuid, guid, input));
  });

  // Spec: the embed response is not shown; the emulator embeds at once and answers `{ status: "success" }`.
  app.post(`${BASE}/:guid/embed`, async (request): Promise<DocumentStatus> => {
    const { contextGuid, guid } = params(request, "contextGuid", "guid");
    store.documents.embed(request.caller, contextGuid, guid);
    return { status: "success" };
  });

  app.delete(`${BASE}/:guid`, async (request) => {
    const { contextGuid, guid } = params(request, "contextGuid", "guid");
    store.documents.softDelete(request.caller, contextGuid, guid);
    return deleted("Document", guid);
  });

  // Spec: whether `filter` travels in the body or the query is not shown; the emulator reads both (the
  // body wins), and a null filter counts as none (every Document of the Context is deleted).
  app.delete(BASE, async (request): Promise<DocumentStatus> => {
    const { contextGuid } = params(request, "contextGuid");
    const fromBody = parse(DocumentBulkDelete, request.body ?? {}, "body").filter;
    const fromQuery = parse(DocumentBulkDelete, request.query, "query").filter;
    store.documents.deleteMany(request.caller, contextGuid, fromBody ?? fromQuery);
    return { status: "success" };
  });
};
