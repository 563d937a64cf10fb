/**
 * `--split-by app`: what discover adopts, as the stack layout the GitOps pipeline (examples/gitops) documents: a shared
 * project (ProviderConnections, Models, Skills, Context Sources, and whatever belongs to no App) and one project per
 * App (the App and what belongs to it), each its own stack, listed in the stack list `gms-stacks.yaml` that the GitOps
 * pipeline reads.
 *
 * An object belongs to the App its `app` input names (a Workflow, a Dataset, an Experiment, a fine-tune), else to the
 * App of the Action its `action` input names (an Eval), as the service shows them; anything else is shared. An App's
 * project reads the shared stack's outputs through a StackReference (`sharedStack`, named
 * `<organization>/<shared project>/<stack>`, the organization being `organization` on a DIY backend): the shared
 * project exports, per kind, a map from each object's resource name to its GUID (`connections`, `models`, `skills`,
 * `contextSources`, and any other kind it holds), and every App project lists the shared one in `dependsOn`.
 */
import { stringify } from "yaml";
import { appsApi } from "../api/apps";
import type { GmsClient } from "../client";
import { KIND_NAMES, type KindName } from "../resources";
import { nameOfNativeToken, nativeToken } from "../provider/tokens";
import type { Discovery, ImportEntry, LiveInputs } from "./plan";

/** The stack list's file, at the root of the folder discover writes. */
export const STACK_LIST_FILE = "gms-stacks.yaml";
/** The shared project's entry in the stack list, and its folder. */
export const SHARED_ENTRY = "shared";
/** The folder that holds one folder per App project. */
const APPS_FOLDER = "apps";
/** The StackReference resource of an App project: camelCase, so that no resource name discover gives can be the same. */
export const SHARED_STACK_RESOURCE = "sharedStack";
/** The maps the shared project always exports, whatever it holds. */
const SHARED_EXPORTS: readonly KindName[] = ["ProviderConnection", "Model", "Skill", "ContextSource"];

/** The output a project exports a kind's map under: `connections` for ProviderConnections, else the kind in camelCase and plural. */
export const exportKey = (kind: KindName): string =>
  kind === "ProviderConnection" ? "connections" : `${kind.charAt(0).toLowerCase()}${kind.slice(1)}s`;

/** The kinds a project exports a map of: those it holds, and for the shared project the four the layout promises. */
export const exportedKinds = (project: SplitProject): KindName[] =>
  KIND_NAMES.filter(
    (kind) =>
      (project.entry === SHARED_ENTRY && SHARED_EXPORTS.includes(kind)) ||
      project.resources.some((entry) => entry.type === nativeToken(kind)),
  );

export interface SplitProject {
  /** Its name in the stack list ([a-z0-9-]+): `shared`, or the App's resource name with dashes. */
  entry: string;
  /** Its folder, relative to the folder discover writes (`/`-separated). */
  dir: string;
  /** The Pulumi project's name: the written folder's, then the entry. */
  project: string;
  /** For an App's project: the App's GUID and own name. */
  app?: { guid: string; name: string };
  /** The entries whose outputs it reads: the shared one, for an App's project. */
  dependsOn: string[];
  resources: ImportEntry[];
}

/** The App that holds each Action, by the Action's GUID: what an Eval belongs to. One request per App the workspace listed. */
export async function actionApps(client: GmsClient, discovery: Discovery): Promise<Map<string, string>> {
  const apps = [...discovery.document.resources.map((entry) => ({ type: entry.type, guid: entry.id })), ...discovery.leftOut]
    .filter((object) => object.type === nativeToken("App"))
    .map((app) => app.guid);
  const owners = new Map<string, string>();
  for (const app of apps) for (const action of await appsApi.actions(client, app)) owners.set(action.guid, app);
  return owners;
}

/** Every App the workspace listed, adopted (its own name read with the rest) or left out: its GUID, resource name and own name. */
const listedApps = (discovery: Discovery, live: LiveInputs): { guid: string; name: string; object: string }[] => [
  ...discovery.document.resources
    .filter((entry) => entry.type === nativeToken("App"))
    .map((entry) => ({ guid: entry.id, name: entry.name, object: String(live.get(entry.id)?.name ?? entry.name) })),
  ...discovery.leftOut.filter((entry) => entry.type === nativeToken("App")).map(({ guid, name, object }) => ({ guid, name, object })),
];

/**
 * The projects of the discovery's resources: the shared one first (always, since every App project reads it), then one
 * per App that holds something, in the order of the Apps' names. `project` is the written folder's project name.
 */
export function splitByApp(
  discovery: Discovery,
  live: LiveInputs,
  actionApp: ReadonlyMap<string, string>,
  project: string,
): SplitProject[] {
  const apps = listedApps(discovery, live).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const appGuids = new Set(apps.map((app) => app.guid));
  const ownerOf = (entry: ImportEntry): string | undefined => {
    if (nameOfNativeToken(entry.type) === "App") return entry.id;
    const inputs = live.get(entry.id) ?? {};
    if (typeof inputs.app === "string" && appGuids.has(inputs.app)) return inputs.app;
    const app = typeof inputs.action === "string" ? actionApp.get(inputs.action) : undefined;
    return app !== undefined && appGuids.has(app) ? app : undefined;
  };
  const shared: SplitProject = {
    entry: SHARED_ENTRY,
    dir: SHARED_ENTRY,
    project: `${project}-${SHARED_ENTRY}`,
    dependsOn: [],
    resources: [],
  };
  const byApp = new Map<string, ImportEntry[]>();
  for (const entry of discovery.document.resources) {
    const owner = ownerOf(entry);
    if (owner === undefined) shared.resources.push(entry);
    else if (byApp.has(owner)) byApp.get(owner)!.push(entry);
    else byApp.set(owner, [entry]);
  }
  const taken = new Set([SHARED_ENTRY]);
  const projects = apps.flatMap((app): SplitProject[] => {
    const resources = byApp.get(app.guid);
    if (!resources) return [];
    let entry = app.name.replaceAll("_", "-");
    while (taken.has(entry)) entry = `${entry}-app`;
    taken.add(entry);
    const dir = `${APPS_FOLDER}/${entry}`;
    return [
      { entry, dir, project: `${project}-${entry}`, app: { guid: app.guid, name: app.object }, dependsOn: [SHARED_ENTRY], resources },
    ];
  });
  return [shared, ...projects];
}

/** The stack list (gms-stacks.yaml) of the projects, each as the stack `stack`, the App projects depending on the shared one. */
export function stackList(projects: readonly SplitProject[], stack: string, command: string): string {
  const stacks = Object.fromEntries(
    projects.map((project) => [
      project.entry,
      { dir: project.dir, stack, ...(project.dependsOn.length > 0 ? { dependsOn: project.dependsOn } : {}) },
    ]),
  );
  const header = [
    `# The stacks \`${command}\` wrote: the shared project, and one project per App that reads the shared stack's outputs.`,
    "# The GitOps pipeline (examples/gitops) reads this file; each path is relative to it.",
  ];
  return `${header.join("\n")}\n${stringify({ stacks }, { lineWidth: 0 })}`;
}
