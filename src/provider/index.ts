/**
 * What the serialized `__provider` shims require by package name (`pulumi-gms/provider`): the
 * configuration hook and the generic provider of each kind.
 */
import "../node-guard";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import type { KindName } from "../resources";
import type { Kind } from "./kind";
import { resourceProvider } from "./provider";
import { afterLogged } from "./request-log";
import { ProviderError } from "./errors";
import { Session, settingTexts } from "./session";
import { kindFileName } from "./tokens";

export { ProviderError };

/**
 * The kind of a name of the registry (src/resources/index.ts), its module loaded when the provider host first serves a
 * resource of that kind, alone: a host that deletes Apps does not load the other kinds. A kind's module is named after
 * it and exports its declaration so (`FineTune`: ../resources/fine-tune, `fineTuneKind`); undefined for no such kind.
 */
function loadKind(name: string): Kind | undefined {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) return undefined;
  let path: string;
  try {
    path = require.resolve(`../resources/${kindFileName(name)}`);
  } catch {
    return undefined;
  }
  const kind = (require(path) as Record<string, Kind | undefined>)[`${name[0]!.toLowerCase()}${name.slice(1)}Kind`];
  return kind?.name === name ? kind : undefined;
}

/** The dynamic-provider host's process serves one stack: one session, configured by the host with the stack's config. */
const session = new Session();

/** Called by the dynamic-provider host once per `__provider` text, with the whole stack config. */
export function configure(config: dynamic.Config): void {
  session.configure(settingTexts(config));
}

type DynamicProvider = ReturnType<typeof resourceProvider>;

const providers = new Map<KindName, DynamicProvider>();

/** `provider`, each of whose calls answers once the lines of its requests have reached the engine (afterLogged). */
function answeringAfterItsLines(provider: DynamicProvider): DynamicProvider {
  return {
    check: (olds, news) => afterLogged(provider.check(olds, news)),
    diff: (id, olds, news) => afterLogged(provider.diff(id, olds, news)),
    create: (inputs) => afterLogged(provider.create(inputs)),
    read: (id, props) => afterLogged(provider.read(id, props)),
    update: (id, olds, news) => afterLogged(provider.update(id, olds, news)),
    delete: (id, props) => afterLogged(provider.delete(id, props)),
  };
}

export function providerOf(name: KindName): DynamicProvider {
  let provider = providers.get(name);
  if (!provider) {
    const kind = loadKind(name);
    if (!kind)
      throw new ProviderError("unknown_kind", `pulumi-gms has no resource kind ${name}; is the installed package older than the state?`);
    provider = answeringAfterItsLines(resourceProvider(kind, session));
    providers.set(name, provider);
  }
  return provider;
}
