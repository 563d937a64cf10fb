export { WORKSPACE_TYPE, Workspace, type WorkspaceArgs } from "./component";
export { workspaceJsonSchema } from "./schema-json";
export {
  type LocatedProblem,
  type ParsedWorkspaceSpec,
  WorkspaceDocument,
  type WorkspaceSpec,
  WorkspaceSpecError,
  loadWorkspaceFile,
  loadWorkspaceObject,
} from "./spec";
