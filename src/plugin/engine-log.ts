/**
 * Lines sent to the engine's log (Engine.Log, at any severity) from a provider process: the provider plugin, and
 * the dynamic provider's host. The engine starts both the same way, with its address as the last argument, but the
 * host (`@pulumi/pulumi/cmd/dynamic-provider`) never hands that address to the SDK, so the SDK's log has no engine
 * there: its `log.debug` writes nothing, and its `log.info`, `log.warn` and `log.error` write to the host's standard
 * output and error, which the CLI does not show as the provider's diagnostics. This module speaks to the engine
 * itself, through the SDK's generated Engine client, and names the resource (the Log request's URN, which the CLI
 * shows the line under) when the caller knows it.
 */
import { enginePb, engineServices, grpc } from "./sdk-modules";

/** A severity of the engine's log. */
export type LogSeverity = "debug" | "info" | "warning" | "error";

/**
 * One line of the resource `urn` (none when unknown) to the engine's log, at `severity`; resolves once the engine has
 * taken it (or refused it), so that a caller that waits has its line in before it answers the engine.
 */
export type EngineLog = (severity: LogSeverity, line: string, urn: string | undefined) => Promise<void>;

/** One debug line of the resource `urn` (none when unknown) to the engine's log; the engine's resolves as EngineLog does. */
export type EngineDebugLog = (line: string, urn: string | undefined) => Promise<void> | void;

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

/** The engine's number of each severity. */
const SEVERITIES: Record<LogSeverity, number> = {
  debug: enginePb.LogSeverity.DEBUG,
  info: enginePb.LogSeverity.INFO,
  warning: enginePb.LogSeverity.WARNING,
  error: enginePb.LogSeverity.ERROR,
};

/** How long one line may wait for the engine's answer: a stalled engine must not hold a provider call that waits for it. */
const LINE_DEADLINE_MS = 5_000;

/**
 * The log of the engine at `address`. Lines go out one after another, in the order given, as the SDK's own log
 * sends them; a line the engine no longer takes (it is shutting down), or does not answer in time, is dropped and
 * fails nothing.
 */
export function engineLog(address: string): EngineLog {
  const client = new engineServices.EngineClient(address, grpc.credentials.createInsecure());
  let last = Promise.resolve();
  return (severity, line, urn) => {
    const request = new enginePb.LogRequest();
    request.setSeverity(SEVERITIES[severity]);
    request.setMessage(line);
    request.setUrn(urn ?? "");
    last = last.then(
      () =>
        new Promise<void>(
          (resolve) => void client.log(request, new grpc.Metadata(), { deadline: Date.now() + LINE_DEADLINE_MS }, () => resolve()),
        ),
    );
    return last;
  };
}

/** The debug level of the engine's log at `address` (see engineLog). */
export function engineDebugLog(address: string): EngineDebugLog {
  const log = engineLog(address);
  return (line, urn) => log("debug", line, urn);
}

/** The engine's address when this process is the dynamic provider's host the engine started, or undefined. */
export const dynamicHostEngine = (args: readonly string[] = process.argv.slice(2)): string | undefined =>
  isDynamicProviderHost() ? engineAddressIn(args) : undefined;
