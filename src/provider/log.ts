/**
 * The provider's own log lines, of every severity it writes (a fine-tune's progress, the wait for a create a killed
 * run had in flight, a lost create's possible orphans), as they reach the engine, which the CLI shows with their
 * severity:
 * - in the dynamic provider's host, through src/plugin/engine-log.ts: the host never gives the SDK the engine's address,
 *   so the SDK's log would write them to the host's standard output and error instead (and its debug lines nowhere);
 * - elsewhere (the provider plugin, which gives the SDK the engine's address; a program's process; a test) through the
 *   SDK's `pulumi.log`, under the resource whose call is under way when the plugin knows it.
 * Provider code logs through here, never through `pulumi.log` itself (test/provider/log.test.ts holds it to that).
 */
import * as pulumi from "@pulumi/pulumi";
import { type EngineLog, type LogSeverity, dynamicHostEngine, engineLog } from "../plugin/engine-log";
import { currentResourceCall } from "./request-log";

/** The engine's log of this dynamic provider's host, or none elsewhere (the SDK's log serves there). */
const hostLog = (): EngineLog | undefined => {
  const address = dynamicHostEngine();
  return address ? engineLog(address) : undefined;
};

let sink: EngineLog | undefined = hostLog();

/** Sends every line to `to` (a test standing in for the host's engine), or back through the SDK's log with undefined. */
export function logProviderTo(to: EngineLog | undefined): void {
  sink = to;
}

/** What the SDK's log takes as a resource, of which it reads only the URN. */
const resourceOf = (urn: string): pulumi.Resource => ({ urn: { promise: async () => urn } }) as unknown as pulumi.Resource;

/** The SDK's function of each severity the provider writes. */
const SDK_LOG = { info: "info", warning: "warn" } as const satisfies Partial<Record<LogSeverity, keyof typeof pulumi.log>>;

/** Writes `message` at `severity`, about the resource whose call is under way when that is known. */
const at =
  (severity: keyof typeof SDK_LOG) =>
  async (message: string): Promise<void> => {
    const urn = currentResourceCall();
    // Waited for, so that the line is in before the call answers (the engine ends the host once the last call has).
    if (sink) return sink(severity, message, urn);
    // A line the engine no longer takes (it is shutting down) must not fail the call.
    await pulumi.log[SDK_LOG[severity]](message, urn ? resourceOf(urn) : undefined).catch(() => undefined);
  };

/** The provider's log (see the top of this file). */
export const providerLog = { info: at("info"), warn: at("warning") };
