import type { Kind, KindName } from "../provider/kind";
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

/** Every kind by name; a kind missing here is a compile error. */
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
} satisfies Record<KindName, Kind>;
