/**
 * What the serialized `__provider` shims require by package name (`pulumi-gms/provider`): the
 * configuration hook and the generic provider of each kind.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { kinds } from "../resources";
import { configure as configureConnection } from "./connection";
import type { KindName } from "./kind";
import { resourceProvider } from "./provider";

export function configure(config: dynamic.Config): void {
  configureConnection(config);
}

const providers = new Map<KindName, ReturnType<typeof resourceProvider>>();

export function providerOf(name: KindName): ReturnType<typeof resourceProvider> {
  let provider = providers.get(name);
  if (!provider) {
    const kind = kinds[name];
    if (!kind) throw new Error(`pulumi-gms has no resource kind ${name}; is the installed package older than the state?`);
    provider = resourceProvider(kind);
    providers.set(name, provider);
  }
  return provider;
}
