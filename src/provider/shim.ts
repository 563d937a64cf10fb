/**
 * The serialized `__provider` of every resource is the module object of `pulumi-gms/shims/<kind>`
 * (its named exports are the provider methods).
 * When the package is installed under node_modules, Pulumi's closure serializer writes that as one
 * `require("pulumi-gms/shims/<kind>")` (a few hundred bytes), so all logic stays in the installed
 * package and an upgrade applies to refresh and delete of existing resources too. When the package is
 * not under node_modules (a linked checkout), the functions below are serialized by value instead; they
 * still only require the package by name, so the text stays small and holds no credential.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";

type Props = Record<string, unknown>;

/** `kind` is a name of the registry of kinds (src/resources/index.ts). */
export function shim(kind: string): dynamic.ResourceProvider {
  return {
    configure: async (request) => require("pulumi-gms/provider").configure(request.config),
    check: (olds: Props, news: Props) => require("pulumi-gms/provider").providerOf(kind).check(olds, news),
    diff: (id: string, olds: Props, news: Props) => require("pulumi-gms/provider").providerOf(kind).diff(id, olds, news),
    create: (inputs: Props) => require("pulumi-gms/provider").providerOf(kind).create(inputs),
    read: (id: string, props: Props) => require("pulumi-gms/provider").providerOf(kind).read(id, props),
    update: (id: string, olds: Props, news: Props) => require("pulumi-gms/provider").providerOf(kind).update(id, olds, news),
    delete: (id: string, props: Props) => require("pulumi-gms/provider").providerOf(kind).delete(id, props),
  };
}
