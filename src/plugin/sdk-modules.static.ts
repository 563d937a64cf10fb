/**
 * sdk-modules.ts as the release's bundle has it (scripts/dist/plugin.mts puts this file in its place): the same
 * modules imported by name, which esbuild follows, resolving grpc-js and google-protobuf from @pulumi/pulumi's
 * folder. Node.js never loads it: from here it would find them only where npm hoisted them.
 */
export * as grpc from "@grpc/grpc-js";
export * as pb from "@pulumi/pulumi/proto/provider_pb";
export * as enginePb from "@pulumi/pulumi/proto/engine_pb";
export * as engineServices from "@pulumi/pulumi/proto/engine_grpc_pb";
export * as services from "@pulumi/pulumi/proto/provider_grpc_pb";
export * as pluginPb from "@pulumi/pulumi/proto/plugin_pb";
export * as statusPb from "@pulumi/pulumi/proto/status_pb";
export { Struct } from "google-protobuf/google/protobuf/struct_pb";
export { Empty } from "google-protobuf/google/protobuf/empty_pb";
export { Any } from "google-protobuf/google/protobuf/any_pb";
