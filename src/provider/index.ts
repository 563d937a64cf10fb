/**
 * What the serialized `__provider` shims require by package name (`pulumi-gms/provider`): the
 * configuration hook and the generic provider of each kind.
 */
import "../node-guard";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import type { Kind, KindName } from "./kind";
import { resourceProvider } from "./provider";
import { ProviderError } from "./errors";
import { Session, settingTexts } from "./session";

export { ProviderError };

/**
 * Each kind's module, loaded when the provider host first serves a resource of that kind: a host
 * that deletes Apps does not load the other nine kinds. A kind missing here is a compile error.
 */
const kindModules = {
  App: () => (require("../resources/app") as typeof import("../resources/app")).appKind,
  ProviderConnection: () =>
    (require("../resources/provider-connection") as typeof import("../resources/provider-connection")).providerConnectionKind,
  Model: () => (require("../resources/model") as typeof import("../resources/model")).modelKind,
  Workflow: () => (require("../resources/workflow") as typeof import("../resources/workflow")).workflowKind,
  Dataset: () => (require("../resources/dataset") as typeof import("../resources/dataset")).datasetKind,
  Eval: () => (require("../resources/eval") as typeof import("../resources/eval")).evalKind,
  Experiment: () => (require("../resources/experiment") as typeof import("../resources/experiment")).experimentKind,
  Skill: () => (require("../resources/skill") as typeof import("../resources/skill")).skillKind,
  ContextSource: () => (require("../resources/context-source") as typeof import("../resources/context-source")).contextSourceKind,
  FineTune: () => (require("../resources/fine-tune") as typeof import("../resources/fine-tune")).fineTuneKind,
} satisfies Record<KindName, () => Kind>;

/** The dynamic-provider host's process serves one stack: one session, configured by the host with the stack's config. */
const session = new Session();

/** Called by the dynamic-provider host once per `__provider` text, with the whole stack config. */
export function configure(config: dynamic.Config): void {
  session.configure(settingTexts(config));
}

const providers = new Map<KindName, ReturnType<typeof resourceProvider>>();

export function providerOf(name: KindName): ReturnType<typeof resourceProvider> {
  let provider = providers.get(name);
  if (!provider) {
    const kind = Object.hasOwn(kindModules, name) ? kindModules[name]() : undefined;
    if (!kind)
      throw new ProviderError("unknown_kind", `pulumi-gms has no resource kind ${name}; is the installed package older than the state?`);
    provider = resourceProvider(kind, session);
    providers.set(name, provider);
  }
  return provider;
}
