#!/usr/bin/env node
/**
 * `pulumi-resource-gms`: the provider plugin, started the way the Pulumi engine starts plugins
 * (`pulumi-resource-gms <engine address> [flags]`, or through the Node.js language host for a plugin from
 * source, PulumiPlugin.yaml). It prints its port on stdout, then serves until the engine is done with it:
 * - Cancel: the calls under way finish, then the process exits;
 * - SIGINT or SIGTERM (how the engine ends its plugins), likewise;
 * - the engine gone without a word: its end of our standard input closes when the engine started us with a
 *   pipe there, and our parent changes when it dies; either way the process exits, taking no more requests
 *   for an engine that can no longer record the answers.
 */
import { fstatSync } from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { packageManifest, pluginDownloadURL } from "../manifest";
import { type ServedPackage, startPluginServer } from "./server";
import { logRequestsTo } from "../provider/request-log";
import { engineAddressIn, engineDebugLog } from "./engine-log";

/** What `pulumi-resource-gms --help` prints: a person who runs the plugin by hand learns what it is and how it is used. */
export const PLUGIN_USAGE = `pulumi-resource-gms ${packageManifest.version}: the Pulumi resource provider plugin of the gms package

The Pulumi engine starts this program and talks to it over gRPC; it is not run by hand. A program on a gms SDK
(pulumi_gms for Python, the Go module, pulumi-gms for Node.js, or a YAML program) makes the engine download it
on the first \`pulumi up\`. To install it yourself:

  pulumi plugin install resource gms ${packageManifest.version} --server ${pluginDownloadURL}
  pulumi plugin install resource gms ${packageManifest.version} --file <tarball>     (a tarball you were handed)

usage: pulumi-resource-gms [--logtostderr] [-v=N] [--tracing <endpoint>] [<engine address>]   serve the engine
       pulumi-resource-gms --help | --version
`;

/**
 * Answers `--help` and `--version` as a command does, or returns false when the arguments are the engine's (its
 * flags and address), so that the plugin serves.
 */
export function answerAsCommand(args: readonly string[], write: (text: string) => void): boolean {
  if (args.includes("--help") || args.includes("-h")) write(PLUGIN_USAGE);
  else if (args.includes("--version")) write(`${packageManifest.version}\n`);
  else return false;
  return true;
}

/**
 * Serves the provider in this process until the engine is done with it (see above). `args` are the engine's:
 * flags (`--logtostderr`, `-v=N`, `--tracing <endpoint>`), then the engine's address, where the provider's log
 * lines go (Engine.Log, as a dynamic provider's do: a fine-tune's progress, a lost create's possible orphans),
 * shown by the CLI with their severity. `served`: other kinds and schema than this package's (a test's fixture).
 */
export async function servePlugin(args: string[] = process.argv.slice(2), served?: ServedPackage): Promise<void> {
  const engine = engineAddressIn(args);
  if (engine) {
    pulumi.runtime.resetOptions("", "", 1, engine, "", false, "");
    // Every API exchange, at debug level: `pulumi up --debug` shows them (src/provider/request-log.ts).
    logRequestsTo(engineDebugLog(engine));
  }
  // A stray rejection (a log line the engine never took, say) must not take down the calls of other resources.
  process.on("unhandledRejection", (reason: unknown) => {
    process.stderr.write(`pulumi-resource-gms: unhandled rejection: ${reason instanceof Error ? reason.message : String(reason)}\n`);
  });
  const server = await startPluginServer(undefined, served);
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    // A call that never ends must not keep an engine's plugin alive forever.
    setTimeout(() => process.exit(code), 5000).unref();
    void server.shutdown().then(() => process.exit(code));
  };
  void server.cancelled.then(() => stop(0));
  process.once("SIGINT", () => stop(0));
  process.once("SIGTERM", () => stop(0));

  // A pipe (the engine's) or a socket (a Node.js parent's `stdio: "pipe"`); never a terminal or /dev/null,
  // which a plugin run by hand or by the Node.js language host has there.
  const input = fstatSync(0);
  if (input.isFIFO() || input.isSocket()) {
    process.stdin.on("end", () => stop(0));
    process.stdin.on("error", () => stop(0));
    process.stdin.resume();
  }
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop(0);
  }, 1000).unref();

  // The engine reads the port from the first line of stdout; plain text (no colours).
  process.stdout.write(`${server.port}\n`);
}

// Run as the executable: the package's bin, or the release's executable, whose bundle has this file as its entry
// (esbuild leaves an entry's `module` the bundle's own). Imported (by a test), it only defines servePlugin.
if (require.main === module && !answerAsCommand(process.argv.slice(2), (text) => process.stdout.write(text))) {
  servePlugin().catch((error: unknown) => {
    process.stderr.write(`pulumi-resource-gms: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
