import * as gms from "pulumi-gms";

// Everything is declared in workspace.yaml. A problem in it is reported with file, line, column and
// field before anything is created; names it looks up (Actions, Contexts, Eval types, Apps configured
// outside Pulumi) and the workspace's App allowance are checked in preview.
const workspace = new gms.Workspace("acme", { file: "workspace.yaml" });

// The children by logical name, e.g. workspace.apps["support"].
const guids = (resources: Record<string, { guid: unknown }>) =>
  Object.fromEntries(Object.entries(resources).map(([name, resource]) => [name, resource.guid]));

export const apps = guids(workspace.apps);
export const providerConnections = guids(workspace.providerConnections);
export const models = guids(workspace.models);
export const workflows = guids(workspace.workflows);
export const datasets = guids(workspace.datasets);
export const evals = guids(workspace.evals);
export const experiments = guids(workspace.experiments);
export const skills = guids(workspace.skills);
export const contextSources = guids(workspace.contextSources);
export const handbookStatus = workspace.contextSources["handbook"]?.indexingStatus;
