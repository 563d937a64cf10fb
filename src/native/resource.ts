/**
 * The native resource classes: the same kind declarations as the dynamic classes (`GmsResource`), registered
 * as `gms:index:<Kind>` with the native provider plugin instead of `pulumi-nodejs:dynamic/gms:<Kind>` with a
 * serialized `__provider`. One generic base and one factory: a kind's class is `nativeClass(kind)`, so no kind
 * writes its native class by hand, and its args and outputs are the dynamic class's but the inputs only dynamic
 * resources take (`NativeKindArgs`, `KindOutputs`).
 *
 * What the dynamic classes add for the dynamic-provider host and a native provider does not need is left out:
 * `__provider` (the engine loads the plugin named by the token's package) and `__secretInputs` (a native
 * provider that accepts secrets receives every secret input marked as such). Derived inputs that carry meaning
 * for the provider (the Model's `__linkTo`) are still sent: see `./model-link`.
 */
import * as pulumi from "@pulumi/pulumi";
import { warnTwin } from "../provider/identity";
import type { Kind } from "../provider/kind";
import {
  type KindOutputs,
  kindProps,
  type NativeKindArgs,
  rememberDeclared,
  withFormerTypes,
  withSecretOutputs,
} from "../provider/resource";
import { packageManifest, pluginDownloadURL } from "../manifest";
import { nativeToken } from "../provider/tokens";

/**
 * Inputs a class derives from the program's args and options rather than the program declares (the names
 * `kind.derived` lists), for example the ProviderConnection a Model is meant to be linked to.
 */
export type DeriveInputs = (
  args: Record<string, unknown>,
  opts: pulumi.CustomResourceOptions,
) => Record<string, pulumi.Input<unknown> | undefined>;

/** An instance of a kind's native class: the resource with the kind's inputs and outputs as Output properties. */
export type NativeInstance<K extends Kind> = NativeResource & KindOutputs<K>;

/** A kind's native class, as `nativeClass` makes it. */
export interface NativeClass<K extends Kind> {
  /** `gms:index:<Kind>`. */
  readonly token: string;
  /** Declares a resource of the kind, managed by the native provider (the default one, or `opts.provider`). */
  new (name: string, args: NativeKindArgs<K>, opts?: pulumi.CustomResourceOptions): NativeInstance<K>;
  /** An existing object by its GUID, read (not managed) into the program. */
  get(name: string, id: pulumi.Input<pulumi.ID>, opts?: pulumi.CustomResourceOptions): NativeInstance<K>;
  /** Whether `obj` is a resource of this kind's native class, even from another copy of the package. */
  isInstance(obj: unknown): obj is NativeInstance<K>;
}

/**
 * The options with the plugin version this package was released with and where the engine downloads it, unless the
 * program names its own: the engine then takes that version of `pulumi-resource-gms`, not whichever is installed, and
 * installs it by itself where it is missing, as the generated SDKs make it do.
 */
export const withPluginVersion = <O extends pulumi.ResourceOptions>(opts: O): O => ({
  version: packageManifest.version,
  pluginDownloadURL,
  ...opts,
});

/** Base of every native resource class. */
export abstract class NativeResource extends pulumi.CustomResource {
  protected constructor(
    kind: Kind,
    name: string,
    args: Record<string, unknown>,
    opts: pulumi.CustomResourceOptions = {},
    derive?: DeriveInputs,
  ) {
    super(
      nativeToken(kind.name),
      name,
      kindProps(kind, args, derive?.(args, opts) ?? {}),
      // A deprecated input or kind is warned about by the plugin's check, as for every language on the plugin.
      withPluginVersion(withFormerTypes(kind, "native", withSecretOutputs(kind, opts))),
    );
    rememberDeclared(this, args);
    if (opts.id === undefined) warnTwin(kind, name, args, opts.provider, this);
  }
}

/** The native class of `kind`; `derive` adds the inputs `kind.derived` declares. */
export function nativeClass<K extends Kind>(kind: K, derive?: DeriveInputs): NativeClass<K> {
  const token = nativeToken(kind.name);
  const NativeKind = class extends NativeResource {
    static readonly token = token;

    static get(name: string, id: pulumi.Input<pulumi.ID>, opts: pulumi.CustomResourceOptions = {}) {
      return new NativeKind(name, {}, { ...opts, id });
    }

    static override isInstance(obj: unknown): obj is NativeResource {
      return pulumi.CustomResource.isInstance(obj) && pulumi.resourceType(obj) === token;
    }

    constructor(name: string, args: NativeKindArgs<K> | Record<string, never>, opts?: pulumi.CustomResourceOptions) {
      super(kind, name, args as Record<string, unknown>, opts, derive);
    }
  };
  // Named after the kind (`App`, not `NativeKind`) in stack traces and `constructor.name`.
  Object.defineProperty(NativeKind, "name", { value: kind.name });
  return NativeKind as unknown as NativeClass<K>;
}
