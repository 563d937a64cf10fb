/** The workspace the API key selects: the connection compares it across a key change (see ../api/workspaces). */
export { currentWorkspace } from "../api/workspaces";
