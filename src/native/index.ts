/**
 * The Node.js SDK of the native provider (`pulumi-gms/native`): one class per kind over `pulumi.CustomResource`
 * with the `gms:index:<Kind>` tokens of schema.json, and the `Provider` resource. The classes come from the
 * same kind declarations as the dynamic ones (`gms.App`, ...), with the same args and outputs, and the package's
 * functions (`getAction`, `getActionOutput`, ...) served by the plugin.
 */
import "../node-guard";
import type { NativeKindArgs } from "../provider/resource";
import { appKind } from "../resources/app";
import { contextSourceKind } from "../resources/context-source";
import { datasetKind } from "../resources/dataset";
import { evalKind } from "../resources/eval";
import { experimentKind } from "../resources/experiment";
import { fineTuneKind } from "../resources/fine-tune";
import { modelKind } from "../resources/model";
import { providerConnectionKind } from "../resources/provider-connection";
import { skillKind } from "../resources/skill";
import { workflowKind } from "../resources/workflow";
import { modelLink } from "./model-link";
import { type NativeClass, type NativeInstance, nativeClass } from "./resource";

export * from "./lookups";
export { Provider, type ProviderArgs } from "./provider";
export { NativeResource, type NativeClass, type NativeInstance } from "./resource";

export const App: NativeClass<typeof appKind> = nativeClass(appKind);
export type App = NativeInstance<typeof appKind>;
export type AppArgs = NativeKindArgs<typeof appKind>;

export const ProviderConnection: NativeClass<typeof providerConnectionKind> = nativeClass(providerConnectionKind);
export type ProviderConnection = NativeInstance<typeof providerConnectionKind>;
export type ProviderConnectionArgs = NativeKindArgs<typeof providerConnectionKind>;

/** A Model given one ProviderConnection of its type in `dependsOn` is linked to exactly that one (see ./model-link). */
export const Model: NativeClass<typeof modelKind> = nativeClass(modelKind, modelLink);
export type Model = NativeInstance<typeof modelKind>;
export type ModelArgs = NativeKindArgs<typeof modelKind>;

export const Workflow: NativeClass<typeof workflowKind> = nativeClass(workflowKind);
export type Workflow = NativeInstance<typeof workflowKind>;
export type WorkflowArgs = NativeKindArgs<typeof workflowKind>;

export const Dataset: NativeClass<typeof datasetKind> = nativeClass(datasetKind);
export type Dataset = NativeInstance<typeof datasetKind>;
export type DatasetArgs = NativeKindArgs<typeof datasetKind>;

export const Eval: NativeClass<typeof evalKind> = nativeClass(evalKind);
export type Eval = NativeInstance<typeof evalKind>;
export type EvalArgs = NativeKindArgs<typeof evalKind>;

export const Experiment: NativeClass<typeof experimentKind> = nativeClass(experimentKind);
export type Experiment = NativeInstance<typeof experimentKind>;
export type ExperimentArgs = NativeKindArgs<typeof experimentKind>;

export const Skill: NativeClass<typeof skillKind> = nativeClass(skillKind);
export type Skill = NativeInstance<typeof skillKind>;
export type SkillArgs = NativeKindArgs<typeof skillKind>;

export const ContextSource: NativeClass<typeof contextSourceKind> = nativeClass(contextSourceKind);
export type ContextSource = NativeInstance<typeof contextSourceKind>;
export type ContextSourceArgs = NativeKindArgs<typeof contextSourceKind>;

export const FineTune: NativeClass<typeof fineTuneKind> = nativeClass(fineTuneKind);
export type FineTune = NativeInstance<typeof fineTuneKind>;
export type FineTuneArgs = NativeKindArgs<typeof fineTuneKind>;
