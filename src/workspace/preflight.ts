/**
 * What a workspace document needs from the service before anything is created: the GUIDs of what it
 * names but cannot create (Apps configured outside Pulumi, Actions, Contexts, Eval types, Skill types)
 * and whether its new Apps fit the workspace's allowance. Read-only lookups, run by the program in
 * preview as in `up`; every problem is reported at once, located in the document, and no resource is
 * registered before this has passed, so a bad reference or a full workspace costs no write (rather than
 * a 404 or a 429 halfway through an update).
 */
import {
  type ActionInfo,
  type LookupArgs,
  getActions,
  getContexts,
  getEvalTypes,
  getSkillTypes,
  getUsage,
  getWorkspace,
  type WorkspaceInfo,
} from "../lookups";
import { type LoadedSpec, type Path, type SpecProblem, actionUses } from "./spec";

/** The GUIDs the document's names resolve to (plain objects: this travels through a Pulumi Output). */
export interface Resolution {
  /** Apps referred to by workspace name (not declared in the document), by name. */
  existingApps: Record<string, string>;
  /** Actions by `actionKey(app reference, Action name)`. */
  actions: Record<string, ActionInfo>;
  /** Context GUIDs by name. */
  contexts: Record<string, string>;
  /** Eval type GUIDs by name. */
  evalTypes: Record<string, string>;
}

export const actionKey = (app: string, action: string): string => `${app}\n${action}`;

const quoted = (names: string[]) => names.map((name) => `"${name}"`).join(", ") || "none";

/** Resolves the document's lookups and checks the App allowance; throws the located problems. */
export async function preflight(loaded: LoadedSpec, lookup: LookupArgs): Promise<Resolution> {
  const { spec } = loaded;
  const problems: SpecProblem[] = [];
  const add = (path: Path, message: string) => problems.push({ path, message });
  const resolution: Resolution = { existingApps: {}, actions: {}, contexts: {}, evalTypes: {} };
  const section = <T>(map: Record<string, T> | undefined) => Object.entries(map ?? {});
  const declaredApps = spec.apps ?? {};

  const appRefs: { app: string; path: Path }[] = [];
  for (const [key, workflow] of section(spec.workflows)) appRefs.push({ app: workflow.app, path: ["workflows", key, "app"] });
  for (const [key, dataset] of section(spec.datasets))
    if (typeof dataset.app === "string") appRefs.push({ app: dataset.app, path: ["datasets", key, "app"] });
  for (const [key, fineTune] of section(spec.fineTunes)) appRefs.push({ app: fineTune.app, path: ["fineTunes", key, "app"] });
  const uses = actionUses(spec);
  // An Experiment's two Actions share its `app`: one reference.
  for (const use of new Map(uses.map((use) => [use.appPath.join("."), use])).values()) appRefs.push({ app: use.app, path: use.appPath });

  let workspace: WorkspaceInfo | undefined;
  if (appRefs.length > 0 || Object.keys(declaredApps).length > 0) workspace = await getWorkspace(lookup);
  const existing = new Map((workspace?.apps ?? []).map((app) => [app.name, app.guid]));
  const notFound = (app: string) =>
    `no App "${app}": it is not declared under apps (declared: ${quoted(Object.keys(declaredApps))}) ` +
    `and the workspace has no App of that name (it has: ${quoted([...existing.keys()])})`;

  for (const ref of appRefs) {
    if (declaredApps[ref.app]) continue;
    const guid = existing.get(ref.app);
    if (guid === undefined) add(ref.path, notFound(ref.app));
    else resolution.existingApps[ref.app] = guid;
  }

  // Actions: one listing per App, for the Apps that resolve (a missing App is reported above).
  const actionsByApp = new Map<string, Promise<ActionInfo[]>>();
  for (const use of uses) {
    const declared = declaredApps[use.app];
    const guid = existing.get(declared ? declared.name : use.app);
    if (guid === undefined) {
      if (declared) {
        add(
          use.appPath,
          `App "${use.app}" ("${declared.name}") is declared here but does not exist in the workspace yet, so it has no Actions: ` +
            `Actions are configured outside the public interface. Create the App first, configure its Actions, then refer to them`,
        );
      }
      continue;
    }
    if (!actionsByApp.has(guid)) actionsByApp.set(guid, getActions({ ...lookup, app: guid }));
    const actions = await actionsByApp.get(guid)!;
    const action = actions.find((candidate) => candidate.name === use.action);
    if (action) resolution.actions[actionKey(use.app, use.action)] = action;
    else
      add(
        use.path,
        `App "${declared ? declared.name : use.app}" has no Action "${use.action}" (it has: ` +
          `${quoted(actions.map((candidate) => candidate.name))}); Actions are configured outside the public interface`,
      );
  }

  const contextUses = section(spec.contextSources);
  if (contextUses.length > 0) {
    const contexts = await getContexts(lookup);
    for (const [key, source] of contextUses) {
      const context = contexts.find((candidate) => candidate.name === source.context);
      if (context) resolution.contexts[source.context] = context.guid;
      else
        add(
          ["contextSources", key, "context"],
          `no Context "${source.context}" in the workspace (it has: ` +
            `${quoted(contexts.map((candidate) => candidate.name))}); Contexts are created outside the public interface`,
        );
    }
  }

  const evals = section(spec.evals);
  if (evals.length > 0) {
    const types = await getEvalTypes(lookup);
    for (const [key, entry] of evals) {
      entry.evalTypes.forEach((ref, index) => {
        const name = typeof ref === "string" ? ref : ref.type;
        const type = types.find((candidate) => candidate.name === name);
        if (type) resolution.evalTypes[name] = type.guid;
        else
          add(
            ["evals", key, "evalTypes", index, ...(typeof ref === "string" ? [] : ["type"])],
            `no Eval type "${name}" (available: ${quoted(types.map((candidate) => candidate.name))})`,
          );
      });
    }
  }

  const skills = section(spec.skills);
  if (skills.length > 0) {
    const types = await getSkillTypes(lookup);
    for (const [key, skill] of skills) {
      if (!types.some((type) => type.name === skill.type)) {
        add(
          ["skills", key, "type"],
          `no Skill type "${skill.type}" in the workspace (it has: ${quoted(types.map((type) => type.name))}); ` +
            `Skill types are configured outside the public interface`,
        );
      }
    }
  }

  // The allowance: an App is new unless an App of its name exists that no earlier App of that name here took (an App
  // this stack already manages does; of twins, as many as exist).
  const unclaimed = new Map<string, number>();
  for (const app of workspace?.apps ?? []) unclaimed.set(app.name, (unclaimed.get(app.name) ?? 0) + 1);
  const newApps = Object.entries(declaredApps).filter(([, app]) => {
    const left = unclaimed.get(app.name) ?? 0;
    unclaimed.set(app.name, left - 1);
    return left <= 0;
  });
  if (newApps.length > 0) {
    const usage = (await getUsage(lookup)).find((entry) => entry.feature === "apps");
    if (usage && usage.used + newApps.length > usage.limit) {
      const room = Math.max(0, usage.limit - usage.used);
      const left = newApps.slice(room);
      add(
        ["apps", left[0]![0]],
        `the workspace allows ${usage.limit} Apps and has ${usage.used}: the ${newApps.length} ` +
          `new App(s) declared here would make ${usage.used + newApps.length}. ` +
          `Would not fit: ${left.map(([key, app]) => `${key} ("${app.name}")`).join(", ")}. Remove them, delete Apps the workspace no longer ` +
          `needs, or raise the workspace's limit; nothing was created`,
      );
    }
  }

  if (problems.length > 0) throw loaded.error(problems);
  return resolution;
}
