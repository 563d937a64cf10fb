/**
 * The modules the plugin's wire is made of, as the `@pulumi/pulumi` this package depends on has them, so that the
 * messages match the SDK's protocol version: grpc-js, google-protobuf's well-known types and the SDK's generated
 * protobuf modules. grpc-js and google-protobuf are the SDK's dependencies, not this package's, so they are required
 * from the SDK's folder: npm hoists them beside it, but a stricter layout (pnpm's, or the package copy LocalEngine's
 * tests install, which links only this package's dependencies) keeps them out of this package's own reach.
 *
 * A bundler follows no such require: the release's executable (scripts/dist/plugin.mts) bundles sdk-modules.static.ts
 * in this file's place, the same modules imported by name. Each export here is typed by its twin there.
 */
import { createRequire } from "node:module";
import type * as Static from "./sdk-modules.static";

const fromSdk = createRequire(require.resolve("@pulumi/pulumi/package.json"));

export const grpc = fromSdk("@grpc/grpc-js") as typeof Static.grpc;
export const pb = fromSdk("./proto/provider_pb") as typeof Static.pb;
export const enginePb = fromSdk("./proto/engine_pb") as typeof Static.enginePb;
export const engineServices = fromSdk("./proto/engine_grpc_pb") as typeof Static.engineServices;
export const services = fromSdk("./proto/provider_grpc_pb") as typeof Static.services;
export const pluginPb = fromSdk("./proto/plugin_pb") as typeof Static.pluginPb;
export const statusPb = fromSdk("./proto/status_pb") as typeof Static.statusPb;
export const { Struct } = fromSdk("google-protobuf/google/protobuf/struct_pb") as { Struct: typeof Static.Struct };
export const { Empty } = fromSdk("google-protobuf/google/protobuf/empty_pb") as { Empty: typeof Static.Empty };
export const { Any } = fromSdk("google-protobuf/google/protobuf/any_pb") as { Any: typeof Static.Any };
