/**
 * The resource class side of a kind: typed args and outputs derived from the field declaration, secret
 * inputs wrapped and listed in `additionalSecretOutputs` (the engine marks an output secret only when
 * the input of the same name was), and every output name registered so that it appears on the object.
 */
import * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import type { Connection } from "./connection";
import { deprecationWarnings, formerTokens } from "./deprecation";
import { fieldNames } from "./field-names";
import type { Deep, InputArgs, InputFields, OutputFields } from "./fields";
import { warnTwin } from "./identity";
import { COMMON_INPUTS, type DynamicOnlyInput, type Kind } from "./kind";
import { PROVIDER_KEY, providerText } from "./provider-text";
import { SECRET_INPUTS, secretInputNames } from "./secret-inputs";
import { dynamicToken } from "./tokens";

/** Arguments of a kind's resource class. */
export type KindArgs<K extends Kind> = InputArgs<K["inputs"]> & {
  /**
   * Where this resource's API calls go, when not the stack's `gms:baseUrl`/`gms:apiKey`. Stored as a secret.
   * Another `baseUrl` replaces the resource; another `apiKey` alone updates in place if it selects the same workspace.
   */
  connection?: pulumi.Input<Deep<Connection>>;
  /** The GUID of an existing object to adopt instead of creating one (the engine's import does not work for dynamic resources). */
  adopt?: pulumi.Input<string>;
};

/** Arguments of a kind's native class: those of the dynamic one but `DYNAMIC_ONLY_INPUTS` (the import option does that). */
export type NativeKindArgs<K extends Kind> = Omit<KindArgs<K>, DynamicOnlyInput>;

/** Output properties of a kind's resource class. */
export type KindOutputs<K extends Kind> = {
  readonly [P in keyof K["inputs"]]: pulumi.Output<z.output<K["inputs"][P]["schema"]> | undefined>;
} & { readonly [P in keyof K["outputs"]]: pulumi.Output<z.output<K["outputs"][P]["schema"]>> };

/**
 * What a kind's resource registers, the same for its dynamic and its native class: every output name (undefined,
 * so that it appears on the object), the derived inputs, the inputs with the secret ones wrapped, and anything
 * else (a typo, a wire name such as `sampling_rate`) too, so that check reports it instead of it vanishing:
 * programs run without a type check when Node strips the types. That is wrapped as a secret, since nothing says
 * what a mistyped property holds (a key, perhaps).
 */
export function kindProps(kind: Kind, args: Record<string, unknown>, derived: Record<string, unknown>): pulumi.Inputs {
  const secrets = fieldNames(kind).alwaysSecret;
  const props: pulumi.Inputs = {};
  for (const output of Object.keys(kind.outputs)) props[output] = undefined;
  for (const [input, value] of Object.entries(derived)) props[input] = value;
  for (const input of [...Object.keys(kind.inputs), ...COMMON_INPUTS]) {
    const value = args[input];
    props[input] = value !== undefined && value !== null && secrets.includes(input) ? pulumi.secret(value) : value;
  }
  for (const [name, value] of Object.entries(args)) if (!(name in props) && value !== undefined) props[name] = pulumi.secret(value);
  return props;
}

/** The options with the kind's secret inputs and outputs added to `additionalSecretOutputs` (the engine marks an output secret only when told). */
export function withSecretOutputs(kind: Kind, opts: pulumi.CustomResourceOptions): pulumi.CustomResourceOptions {
  return { ...opts, additionalSecretOutputs: [...new Set([...(opts.additionalSecretOutputs ?? []), ...fieldNames(kind).alwaysSecret])] };
}

/**
 * The options with the type tokens of the kind's former names as aliases (`Kind.formerNames`), so that a stack that
 * holds a resource of the old type keeps its object.
 */
export function withFormerTypes(kind: Kind, form: "native" | "dynamic", opts: pulumi.CustomResourceOptions): pulumi.CustomResourceOptions {
  const former = formerTokens(kind, form);
  return former.length === 0 ? opts : { ...opts, aliases: [...(opts.aliases ?? []), ...former.map((type) => ({ type }))] };
}

/** Where a resource object keeps the args the program declared it with; a registered symbol, so it holds across copies of the package. */
const DECLARED = Symbol.for("pulumi-gms/declared-args");

/** Keeps on `resource` the args the program declared it with (not registered: see `declaredArg`). */
export function rememberDeclared(resource: pulumi.CustomResource, args: Record<string, unknown>): void {
  Object.defineProperty(resource, DECLARED, { value: args });
}

/**
 * An arg as the program declared the resource, or undefined (none, or a resource read with `get`). Unlike the
 * output of the same name it is known in a preview even when the provider cannot read the value back (a
 * ProviderConnection's `provider` after an import, which the service does not show).
 */
export const declaredArg = (resource: pulumi.CustomResource, name: string): pulumi.Input<unknown> | undefined =>
  (resource as unknown as { [DECLARED]?: Record<string, unknown> })[DECLARED]?.[name] as pulumi.Input<unknown> | undefined;

/** Base of every resource class: one type token per kind, `pulumi-nodejs:dynamic/gms:<Kind>`. */
export abstract class GmsResource<
  I extends InputFields = InputFields,
  O extends OutputFields = OutputFields,
> extends pulumi.CustomResource {
  protected constructor(
    kind: Kind<I, O>,
    provider: pulumi.dynamic.ResourceProvider,
    name: string,
    args: Record<string, unknown>,
    opts: pulumi.CustomResourceOptions = {},
  ) {
    const k = kind as unknown as Kind;
    const derived = Object.fromEntries(Object.keys(k.derived ?? {}).map((input) => [input, args[input]]));
    const props = kindProps(k, args, derived);
    // The engine hides secretness from the provider: it is told which other inputs the program made secret.
    const secrets = fieldNames(k).alwaysSecret;
    props[SECRET_INPUTS] = secretInputNames(Object.fromEntries(Object.entries(args).filter(([name]) => !secrets.includes(name))));
    // What `pulumi.dynamic.Resource` registers, with `__provider` written without loading the closure serializer.
    props[PROVIDER_KEY] = providerText(provider);
    super(dynamicToken(kind.name), name, props, withFormerTypes(k, "dynamic", withSecretOutputs(k, opts)));
    rememberDeclared(this, args);
    warnTwin(kind, name, args, opts.provider, this);
    // The dynamic provider's host knows no resource's URN, so its check could warn only under the stack: the class warns under the resource.
    for (const warning of deprecationWarnings(k, args)) void pulumi.log.warn(warning, this);
  }
}
