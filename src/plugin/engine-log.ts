/**
 * Debug lines sent to the engine's log (Engine.Log at debug level) from a provider process: the provider plugin, and
 * the dynamic provider's host. The engine starts both the same way, with its address as the last argument, but the
 * host (`@pulumi/pulumi/cmd/dynamic-provider`) never hands that address to the SDK, so the SDK's `log.debug` has no
 * engine there and writes nothing. This module speaks to the engine itself, through the SDK's generated Engine client,
 * and names the resource (the Log request's URN, which the CLI shows the line under) when the caller knows it.
 */
import { enginePb, engineServices, grpc } from "./sdk-modules";

/** One debug line of the resource `urn` (none when unknown) to the engine's log. */
export type EngineDebugLog = (line: string, urn: string | undefined) => void;

/**
 * The engine's address among a provider's arguments (`[--logtostderr] [-v=N] [--tracing <endpoint>] <address>`), or
 * undefined when there is none (a plugin run by hand).
 */
export function engineAddressIn(args: readonly string[]): string | undefined {
  const last = args.at(-1);
  return last && !last.startsWith("-") && args.at(-2) !== "--tracing" ? last : undefined;
}

/** Whether this process is the dynamic provider's host, as the engine starts it (`pulumi-resource-pulumi-nodejs`). */
export const isDynamicProviderHost = (main: string | undefined = require.main?.filename): boolean =>
  main !== undefined && /[\\/]@pulumi[\\/]pulumi[\\/]cmd[\\/]dynamic-provider[\\/]index\.js$/.test(main);

/**
 * The debug log of the engine at `address`. Lines go out one after another, in the order given, as the SDK's own log
 * sends them; a line the engine no longer takes (it is shutting down) is dropped and fails nothing.
 */
export function engineDebugLog(address: string): EngineDebugLog {
  const client = new engineServices.EngineClient(address, grpc.credentials.createInsecure());
  let last = Promise.resolve();
  return (line, urn) => {
    const request = new enginePb.LogRequest();
    request.setSeverity(enginePb.LogSeverity.DEBUG);
    request.setMessage(line);
    request.setUrn(urn ?? "");
    last = last.then(() => new Promise<void>((resolve) => void client.log(request, () => resolve())));
  };
}
