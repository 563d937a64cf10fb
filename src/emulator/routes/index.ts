import { appRoutes } from "./apps";
import { workspaceRoutes } from "./workspaces";
import { dataRoutes } from "./data";
import { fileRoutes } from "./files";
import { providerRoutes } from "./providers";
import { modelRoutes } from "./models";
import { skillRoutes } from "./skills";
import { evalRoutes } from "./evals";
import { workflowRoutes } from "./workflows";
import { datasetRoutes } from "./datasets";
import { experimentRoutes } from "./experiments";
import { documentRoutes } from "./documents";
import { contextSourceRoutes } from "./context-sources";
import { actionRoutes } from "./actions";
import { sessionRoutes } from "./sessions";
import { feedbackRoutes } from "./feedback";
import { fineTuneRoutes } from "./fine-tunes";
import { openApiRoutes } from "./openapi";
import type { RouteModule } from "./wire";

/** Every route module, each registered under `/v1`. */
export const routeModules: RouteModule[] = [
  appRoutes,
  workspaceRoutes,
  dataRoutes,
  fileRoutes,
  providerRoutes,
  modelRoutes,
  skillRoutes,
  evalRoutes,
  workflowRoutes,
  datasetRoutes,
  experimentRoutes,
  documentRoutes,
  contextSourceRoutes,
  actionRoutes,
  sessionRoutes,
  feedbackRoutes,
  fineTuneRoutes,
  openApiRoutes,
];
