/**
 * The API's areas, each once: its endpoint entries (src/api/<area>.ts) under the name its OpenAPI operations are
 * tagged with and their ids start with (./openapi.ts), and the routes that serve them (./routes/<area>.ts, registered
 * under `/v1` by ./routes/index.ts). A new area, a new kind's among them, is one line here.
 */
import { actionEndpoints } from "../api/actions";
import { appEndpoints } from "../api/apps";
import { contextSourceEndpoints } from "../api/context-sources";
import { dataEndpoints } from "../api/data";
import { datasetEndpoints } from "../api/datasets";
import { documentEndpoints } from "../api/documents";
import type { Endpoint } from "../api/endpoint";
import { evalEndpoints } from "../api/evals";
import { experimentEndpoints } from "../api/experiments";
import { feedbackEndpoints } from "../api/feedback";
import { fileEndpoints } from "../api/files";
import { fineTuneEndpoints } from "../api/fine-tunes";
import { modelEndpoints } from "../api/models";
import { providerEndpoints } from "../api/providers";
import { sessionEndpoints } from "../api/sessions";
import { skillEndpoints } from "../api/skills";
import { workflowEndpoints } from "../api/workflows";
import { workspaceEndpoints } from "../api/workspaces";
import { actionRoutes } from "./routes/actions";
import { appRoutes } from "./routes/apps";
import { contextSourceRoutes } from "./routes/context-sources";
import { dataRoutes } from "./routes/data";
import { datasetRoutes } from "./routes/datasets";
import { documentRoutes } from "./routes/documents";
import { evalRoutes } from "./routes/evals";
import { experimentRoutes } from "./routes/experiments";
import { feedbackRoutes } from "./routes/feedback";
import { fileRoutes } from "./routes/files";
import { fineTuneRoutes } from "./routes/fine-tunes";
import { modelRoutes } from "./routes/models";
import { providerRoutes } from "./routes/providers";
import { sessionRoutes } from "./routes/sessions";
import { skillRoutes } from "./routes/skills";
import type { RouteModule } from "./routes/wire";
import { workflowRoutes } from "./routes/workflows";
import { workspaceRoutes } from "./routes/workspaces";

export interface ApiArea {
  endpoints: Record<string, Endpoint>;
  routes: RouteModule;
}

export const API_AREAS = {
  actions: { endpoints: actionEndpoints, routes: actionRoutes },
  apps: { endpoints: appEndpoints, routes: appRoutes },
  contextSources: { endpoints: contextSourceEndpoints, routes: contextSourceRoutes },
  data: { endpoints: dataEndpoints, routes: dataRoutes },
  datasets: { endpoints: datasetEndpoints, routes: datasetRoutes },
  documents: { endpoints: documentEndpoints, routes: documentRoutes },
  evals: { endpoints: evalEndpoints, routes: evalRoutes },
  experiments: { endpoints: experimentEndpoints, routes: experimentRoutes },
  feedback: { endpoints: feedbackEndpoints, routes: feedbackRoutes },
  files: { endpoints: fileEndpoints, routes: fileRoutes },
  fineTunes: { endpoints: fineTuneEndpoints, routes: fineTuneRoutes },
  models: { endpoints: modelEndpoints, routes: modelRoutes },
  providers: { endpoints: providerEndpoints, routes: providerRoutes },
  sessions: { endpoints: sessionEndpoints, routes: sessionRoutes },
  skills: { endpoints: skillEndpoints, routes: skillRoutes },
  workflows: { endpoints: workflowEndpoints, routes: workflowRoutes },
  workspaces: { endpoints: workspaceEndpoints, routes: workspaceRoutes },
} satisfies Record<string, ApiArea>;
