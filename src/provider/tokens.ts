/**
 * The package's names in Pulumi's type system, defined once. The package is `gms`: its plugin is
 * `pulumi-resource-gms`, its provider resource `pulumi:providers:gms`, its resources and functions
 * `gms:index:<Name>` (schema.json, the native classes, the plugin's router). The dynamic resources register
 * `pulumi-nodejs:dynamic/gms:<Kind>`, the type `pulumi.dynamic.Resource` gives a module `gms`.
 */
export const PACKAGE = "gms";

const NATIVE_PREFIX = `${PACKAGE}:index:`;
const DYNAMIC_PREFIX = `pulumi-nodejs:dynamic/${PACKAGE}:`;

/** `gms:index:<name>`: a kind's native resource type, or a function's token. */
export const nativeToken = (name: string): string => `${NATIVE_PREFIX}${name}`;

/** The name in a `gms:index:<name>` token, or undefined for a token of anything else. */
export const nameOfNativeToken = (token: string): string | undefined =>
  token.startsWith(NATIVE_PREFIX) ? token.slice(NATIVE_PREFIX.length) : undefined;

/** `pulumi-nodejs:dynamic/gms:<kind>`: a kind's dynamic resource type. */
export const dynamicToken = (kind: string): string => `${DYNAMIC_PREFIX}${kind}`;

/** The kind in a `pulumi-nodejs:dynamic/gms:<kind>` type, or undefined for a type of anything else. */
export const kindOfDynamicToken = (type: string): string | undefined =>
  type.startsWith(DYNAMIC_PREFIX) ? type.slice(DYNAMIC_PREFIX.length) : undefined;

/**
 * A kind's name in lowercase words joined by dashes (`FineTune`: `fine-tune`): its modules (src/resources/, src/shims/:
 * `pulumi-gms/dist/shims/fine-tune.js` in stored state) and its docs page are named so.
 */
export const kindFileName = (kind: string): string => kind.replace(/(?<!^)(?=[A-Z])/g, "-").toLowerCase();

/** The type of the package's provider resources (the default provider and each explicit one). */
export const PROVIDER_TYPE = `pulumi:providers:${PACKAGE}`;
