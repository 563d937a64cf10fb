/**
 * `GET /v1/openapi.json`: the emulator's own route (the spec has none), answering the OpenAPI 3.1 document generated
 * from the endpoint entries (../openapi.ts). Public: it describes routes and shapes, no workspace's data, and tools
 * read it before they are given a key; every route it describes still needs one.
 */
import { openApiDocument } from "../openapi";
import type { RouteModule } from "./wire";

export const openApiRoutes: RouteModule = (app, _store, context) => {
  app.get("/openapi.json", { config: { public: true } }, async () => openApiDocument(`${context.origin()}${app.prefix}`));
};
