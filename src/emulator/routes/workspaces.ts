/** `/workspaces` and the related-resource routes of a workspace the caller's user belongs to, served from src/api/workspaces.ts's entries. */
import { workspaceEndpoints } from "../../api/workspaces";
import { serve } from "./serve";
import { type RouteModule, deleted } from "./wire";

// Spec: the related-resource routes take no skip or limit; the emulator returns every record.
const EVERY = { skip: 0, limit: Number.MAX_SAFE_INTEGER };

export const workspaceRoutes: RouteModule = (app, store) => {
  const endpoints = workspaceEndpoints;
  serve(app, endpoints.list, ({ caller, page }) => store.workspaces.list(caller, page));
  serve(app, endpoints.current, ({ caller }) => store.workspaces.current(caller));
  serve(app, endpoints.create, ({ caller, body }) => store.workspaces.create(caller, body));
  serve(app, endpoints.get, ({ caller, params }) => store.workspaces.get(caller, params.guid!));
  serve(app, endpoints.update, ({ caller, params, body }) => store.workspaces.update(caller, params.guid!, body));
  serve(app, endpoints.delete, ({ caller, params }) => deleted("Workspace", store.workspaces.softDelete(caller, params.guid!).guid));
  // The related resources, each in its compact form (the entry's codec keeps only its fields).
  serve(app, endpoints.apps, ({ caller, params }) => store.apps.list(store.workspaces.callerIn(caller, params.guid!), EVERY).items);
  serve(app, endpoints.contexts, ({ caller, params }) => store.contexts.list(store.workspaces.callerIn(caller, params.guid!)));
  serve(app, endpoints.providers, ({ caller, params }) => store.providers.list(store.workspaces.callerIn(caller, params.guid!)));
  serve(app, endpoints.usage, ({ caller, params }) => store.workspaces.usage(store.workspaces.callerIn(caller, params.guid!)));
};
