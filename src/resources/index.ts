import type { Kind } from "../provider/kind";
import { appKind } from "./app";
import { contextSourceKind } from "./context-source";
import { datasetKind } from "./dataset";
import { evalKind } from "./eval";
import { experimentKind } from "./experiment";
import { fineTuneKind } from "./fine-tune";
import { modelKind } from "./model";
import { providerConnectionKind } from "./provider-connection";
import { skillKind } from "./skill";
import { workflowKind } from "./workflow";

export { App, type AppArgs } from "./app";
export { ContextSource, type ContextSourceArgs } from "./context-source";
export { Dataset, type DatasetArgs } from "./dataset";
export { Eval, type EvalArgs } from "./eval";
export { Experiment, type ExperimentArgs } from "./experiment";
export { FineTune, type FineTuneArgs } from "./fine-tune";
export { Model, type ModelArgs } from "./model";
export { ProviderConnection, type ProviderConnectionArgs } from "./provider-connection";
export { Skill, type SkillArgs } from "./skill";
export { Workflow, type WorkflowArgs } from "./workflow";

/**
 * The registry of kinds: every kind the package serves, in the order the package lists them (schema.json, the docs,
 * `pulumi-gms discover`). The kind names, the dynamic provider's `providerOf`, the plugin's routes, schema.json, the
 * docs and the workspace document's maps go by it; docs/development.md, "Adding a kind", lists what else a kind takes.
 * The dynamic provider's host loads a kind's module alone, by its name (src/provider/index.ts): the module of
 * `FineTune` is ./fine-tune, exporting `fineTuneKind`.
 */
export const kinds = {
  App: appKind,
  ProviderConnection: providerConnectionKind,
  Model: modelKind,
  Workflow: workflowKind,
  Dataset: datasetKind,
  Eval: evalKind,
  Experiment: experimentKind,
  Skill: skillKind,
  ContextSource: contextSourceKind,
  FineTune: fineTuneKind,
} satisfies Record<string, Kind>;

export type KindName = keyof typeof kinds;
/** The kinds' names, in the registry's order. */
export const KIND_NAMES = Object.keys(kinds) as readonly KindName[];
