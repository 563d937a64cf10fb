/**
 * The Node.js SDK of the native provider (`pulumi-gms/native`): one class per kind over `pulumi.CustomResource`
 * with the `gms:index:<Kind>` tokens of schema.json, and the `Provider` resource. The classes come from the
 * same kind declarations as the dynamic ones (`gms.App`, ...), with the same args and outputs, and the package's
 * functions (`getAction`, `getActionOutput`, ...) served by the plugin.
 */
import "../node-guard";
export * from "./kinds";
export * from "./lookups";
export { Provider, type ProviderArgs } from "./provider";
export { NativeResource, type NativeClass, type NativeInstance } from "./resource";
