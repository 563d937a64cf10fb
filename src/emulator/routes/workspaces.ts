import type { Workspace, WorkspaceApp, WorkspaceContext, WorkspaceProvider } from "../../api/workspaces";
import { WorkspaceCreate, WorkspaceUpdate } from "../../api/workspaces";
import type { WorkspaceRecord } from "../store/workspaces";
import { type RouteModule, deleted, envelope, guidParam, parseBody, parsePage } from "./wire";

export const presentWorkspace = (workspace: WorkspaceRecord): Workspace => ({
  guid: workspace.guid,
  slug: workspace.slug,
  name: workspace.name,
  deleted: false,
  created_at: workspace.createdAt,
  updated_at: workspace.updatedAt,
  created_by_id: workspace.createdById,
});

// Spec: the related-resource routes take no skip or limit; the emulator returns every record.
const EVERY = { skip: 0, limit: Number.MAX_SAFE_INTEGER };

/** `/workspaces` and the related-resource routes of a workspace the caller's user belongs to. */
export const workspaceRoutes: RouteModule = (app, store) => {
  app.get("/workspaces", async (request) => {
    const page = parsePage(request);
    return envelope(store.workspaces.list(request.caller, page), page, presentWorkspace);
  });

  app.get("/workspaces/current", async (request) => presentWorkspace(store.workspaces.current(request.caller)));

  app.post("/workspaces", async (request) =>
    presentWorkspace(store.workspaces.create(request.caller, parseBody(WorkspaceCreate, request))),
  );

  app.get("/workspaces/:guid", async (request) => presentWorkspace(store.workspaces.get(request.caller, guidParam(request))));

  app.put("/workspaces/:guid", async (request) => {
    const guid = guidParam(request);
    return presentWorkspace(store.workspaces.update(request.caller, guid, parseBody(WorkspaceUpdate, request)));
  });

  // Spec: not shown; the emulator answers the delete message the spec shows for Providers.
  app.delete("/workspaces/:guid", async (request) =>
    deleted("Workspace", store.workspaces.softDelete(request.caller, guidParam(request)).guid),
  );

  app.get("/workspaces/:guid/apps", async (request): Promise<WorkspaceApp[]> => {
    const caller = store.workspaces.callerIn(request.caller, guidParam(request));
    return store.apps.list(caller, EVERY).items.map(({ guid, name, slug }) => ({ guid, name, slug }));
  });

  app.get("/workspaces/:guid/context", async (request): Promise<WorkspaceContext[]> => {
    const caller = store.workspaces.callerIn(request.caller, guidParam(request));
    return store.contexts.list(caller).map(({ guid, name }) => ({ guid, name }));
  });

  app.get("/workspaces/:guid/providers", async (request): Promise<WorkspaceProvider[]> => {
    const caller = store.workspaces.callerIn(request.caller, guidParam(request));
    return store.providers.list(caller).map(({ guid, name, nickname }) => ({ guid, name, nickname }));
  });

  app.get("/workspaces/:guid/usage", async (request) =>
    store.workspaces.usage(store.workspaces.callerIn(request.caller, guidParam(request))),
  );
};
