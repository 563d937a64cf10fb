/**
 * Read-only lookups of what the public interface cannot create (Actions, Contexts, Skill types, Eval
 * types) and of what a workspace allows, each in the usual Pulumi pair: `getX(args)` returns a promise,
 * `getXOutput(args)` an Output. They run in the program (during preview too, like any data source) with
 * the stack's `gms:baseUrl` / `gms:apiKey`, the environment, or `args.connection`.
 */
import * as pulumi from "@pulumi/pulumi";
import { ActionSummary, App } from "./api/apps";
import { Envelope } from "./api/common";
import { Data } from "./api/data";
import { EvalType } from "./api/evals";
import { SkillType } from "./api/skills";
import { UsageEntry, Workspace, WorkspaceApp, WorkspaceContext } from "./api/workspaces";
import { type GmsClient, collect, listBare, paginateEnvelope, paginateUntilShort, path } from "./client";
import { type Connection, clientFor } from "./provider/connection";

export interface LookupArgs {
  /** Where to look, when not the stack's `gms:baseUrl` / `gms:apiKey` (or GMS_BASE_URL / GMS_API_KEY). */
  connection?: Connection;
}

export interface WorkspaceInfo {
  guid: string;
  name: string;
  slug: string;
  apps: { guid: string; name: string; slug: string }[];
}
export interface ActionInfo {
  guid: string;
  /** The GUID of the App the Action belongs to. */
  app: string;
  name: string;
  actionType: string;
  model: string | null;
}
export interface NamedGuid {
  guid: string;
  name: string;
}

function programClient(args: LookupArgs | undefined): GmsClient {
  const config = new pulumi.Config("gms");
  return clientFor({ baseUrl: args?.connection?.baseUrl ?? config.get("baseUrl"), apiKey: args?.connection?.apiKey ?? config.get("apiKey") });
}

const currentWorkspace = (client: GmsClient) => client.request({ method: "GET", path: path`/workspaces/current`, schema: Workspace });

/** Turns a lookup into the `getXOutput` form: inputs may be Outputs, the result is one. */
const outputForm =
  <A extends object, R>(lookup: (args: A) => Promise<R>) =>
  (args: pulumi.Input<A> = {} as A): pulumi.Output<R> =>
    pulumi.output(args).apply((resolved) => lookup(resolved as A));

/** The workspace the API key selects, with its Apps. */
export async function getWorkspace(args: LookupArgs = {}): Promise<WorkspaceInfo> {
  const client = programClient(args);
  const workspace = await currentWorkspace(client);
  const apps = await listBare(client, { path: path`/workspaces/${workspace.guid}/apps`, item: WorkspaceApp });
  return { guid: workspace.guid, name: workspace.name, slug: workspace.slug, apps };
}
export const getWorkspaceOutput = outputForm(getWorkspace);

/** The workspace's usage against its limits, one entry per feature. */
export async function getUsage(args: LookupArgs = {}): Promise<UsageEntry[]> {
  const client = programClient(args);
  const workspace = await currentWorkspace(client);
  return listBare(client, { path: path`/workspaces/${workspace.guid}/usage`, item: UsageEntry });
}
export const getUsageOutput = outputForm(getUsage);

export interface ActionsArgs extends LookupArgs {
  /** The App, by GUID or by name. */
  app: string;
}

/** The Actions of an App (Actions are configured outside the public interface). */
export async function getActions(args: ActionsArgs): Promise<ActionInfo[]> {
  const client = programClient(args);
  const app = await resolveApp(client, args.app);
  // A bare array that honours skip/limit: page until a short page.
  const actions = await collect(paginateUntilShort(client, { path: path`/apps/${app.guid}/actions`, item: ActionSummary }));
  return actions.map((action) => ({ guid: action.guid, app: app.guid, name: action.name, actionType: action.action_type, model: action.model }));
}
export const getActionsOutput = outputForm(getActions);

/** One Action of an App by name; the error lists the App's Actions when there is no such Action. */
export async function getAction(args: ActionsArgs & { name: string }): Promise<ActionInfo> {
  const actions = await getActions(args);
  return pick(actions, args.name, `Action of App "${args.app}"`);
}
export const getActionOutput = outputForm(getAction);

/** The workspace's Contexts (the libraries Context Sources fill). */
export async function getContexts(args: LookupArgs = {}): Promise<NamedGuid[]> {
  const client = programClient(args);
  const workspace = await currentWorkspace(client);
  return listBare(client, { path: path`/workspaces/${workspace.guid}/context`, item: WorkspaceContext });
}
export const getContextsOutput = outputForm(getContexts);

export async function getContext(args: LookupArgs & { name: string }): Promise<NamedGuid> {
  return pick(await getContexts(args), args.name, "Context");
}
export const getContextOutput = outputForm(getContext);

/** The Skill types the workspace has, with their metadata definitions. */
export async function getSkillTypes(args: LookupArgs = {}): Promise<SkillType[]> {
  return listBare(programClient(args), { path: path`/skills/types`, item: SkillType });
}
export const getSkillTypesOutput = outputForm(getSkillTypes);

/** The Eval types an Eval can use. */
export async function getEvalTypes(args: LookupArgs = {}): Promise<{ guid: string; name: string; description: string | null }[]> {
  const types = await listBare(programClient(args), { path: path`/evals/types`, item: EvalType });
  return types.map((type) => ({ guid: type.guid, name: type.name, description: type.description ?? null }));
}
export const getEvalTypesOutput = outputForm(getEvalTypes);

export async function getEvalType(args: LookupArgs & { name: string }): Promise<{ guid: string; name: string; description: string | null }> {
  return pick(await getEvalTypes(args), args.name, "Eval type");
}
export const getEvalTypeOutput = outputForm(getEvalType);

/** Data records logged under an App, newest first (at most `limit`, default 100). */
export async function getDataRecords(args: ActionsArgs & { limit?: number }): Promise<{ guid: string; model: string | null; createdAt: string }[]> {
  const client = programClient(args);
  const app = await resolveApp(client, args.app);
  const page = await client.request({ method: "GET", path: path`/apps/${app.guid}/data`, query: { skip: 0, limit: args.limit ?? 100 }, schema: Envelope(Data) });
  return page.data.map((record) => ({ guid: record.guid, model: record.model, createdAt: record.created_at }));
}
export const getDataRecordsOutput = outputForm(getDataRecords);

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function resolveApp(client: GmsClient, app: string): Promise<{ guid: string; name: string }> {
  if (GUID.test(app)) return client.request({ method: "GET", path: path`/apps/${app}`, schema: App });
  const apps = await collect(paginateEnvelope(client, { path: path`/apps`, item: App }));
  return pick(apps, app, "App");
}

function pick<T extends { name: string }>(items: T[], name: string, what: string): T {
  const found = items.find((item) => item.name === name);
  if (found) return found;
  const names = items.map((item) => `"${item.name}"`).join(", ") || "none";
  throw new Error(`No ${what} named "${name}". Available: ${names}.`);
}
