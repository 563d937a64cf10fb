import type { Kind } from "../provider/kind";
import * as declared from "./declarations";

export * from "./classes";

/**
 * The registry of kinds: every kind the package serves, in the order the package lists them (schema.json, the docs,
 * `pulumi-gms discover`). The kind names, the dynamic provider's `providerOf`, the plugin's routes, schema.json, the
 * docs and the workspace document's maps go by it, and `npm run build` writes the modules that need a name per kind
 * from it (scripts/kinds.mts: ./declarations.ts, ./classes.ts, the native classes, the shims); docs/development.md,
 * "Adding a kind", lists what else a kind takes. A kind is one line here, `<Kind>: declared.<kind>Kind,`.
 * The dynamic provider's host loads a kind's module alone, by its name (src/provider/index.ts): the module of
 * `FineTune` is ./fine-tune, exporting `fineTuneKind`.
 */
export const kinds = {
  App: declared.appKind,
  ProviderConnection: declared.providerConnectionKind,
  Model: declared.modelKind,
  Workflow: declared.workflowKind,
  Dataset: declared.datasetKind,
  Eval: declared.evalKind,
  Experiment: declared.experimentKind,
  Skill: declared.skillKind,
  ContextSource: declared.contextSourceKind,
  FineTune: declared.fineTuneKind,
} satisfies Record<string, Kind>;

export type KindName = keyof typeof kinds;
/** The kinds' names, in the registry's order. */
export const KIND_NAMES = Object.keys(kinds) as readonly KindName[];
