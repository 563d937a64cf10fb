/**
 * The debug log of every API exchange the provider makes: one line per attempt, through the engine's log at debug
 * level, so that `pulumi up --debug` shows what a create that hangs or a refresh that drops an object sent and got.
 *
 *   gms: urn:pulumi:dev::proj::gms:index:App::support: POST /apps attempt 1: 429 rate_limited in 3 ms (request id r-7); retrying in 1000 ms (rate_limited)
 *
 * A line holds the resource's URN (the provider plugin knows it for each call; the dynamic provider's host does not
 * pass it, so there the line names none), the method, the path (GUIDs, never a query or a body), the attempt, the
 * status or the error's code, the duration, the service's request id when it sends one, and the wait before a retry
 * and why. Bodies are never logged: a create's body and some answers hold a key, and masking every shape that might is
 * a promise no log line should rest on; the status and the error's code say what a body would.
 *
 * Each change of the adaptive pacer's learned rate (src/client/pacer.ts) is a line of its own, with why:
 *
 *   gms: pacing at 4.5 requests/s: 6 of the last 11 requests refused
 *
 * The provider plugin logs always (the engine shows debug lines only with `--debug`); the dynamic provider's host logs
 * when GMS_LOG=debug is set in the environment of the `pulumi` command, which the host inherits. Both send the lines
 * to the engine whose address they were started with (src/plugin/engine-log.ts).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { PacerChange, RequestObservation } from "../client";
import { type EngineDebugLog, dynamicHostEngine, engineDebugLog } from "../plugin/engine-log";

/** The URN of the resource whose call is under way, for the lines of the requests it makes. */
const resourceCall = new AsyncLocalStorage<string>();

/** The environment setting that turns on the dynamic provider's log. */
export const LOG_SETTING = "GMS_LOG";

/** Where the lines go: the engine's log of this dynamic provider's host, when GMS_LOG=debug asks for it, or nowhere. */
function hostSink(): EngineDebugLog | undefined {
  const address = process.env[LOG_SETTING] === "debug" ? dynamicHostEngine() : undefined;
  return address ? engineDebugLog(address) : undefined;
}

let sink: EngineDebugLog | undefined = hostSink();
/** The last line sent: it resolves once the engine has taken every line sent so far (they go out in order). */
let lastLine: Promise<void> = Promise.resolve();

/** Sends every line to the engine's log (the provider plugin, with the engine's address), to another sink (a test), or nowhere. */
export function logRequestsTo(to: EngineDebugLog | undefined): void {
  sink = to;
}

/** Runs `call` as the call of the resource `urn`: the requests it makes, and the lines it logs, are logged with that URN. */
export const asResourceCall = <T>(urn: string | undefined, call: () => T): T => (urn ? resourceCall.run(urn, call) : call());

/** The URN of the resource whose call is under way, when known (the provider plugin's calls). */
export const currentResourceCall = (): string | undefined => resourceCall.getStore();

/** The line of one attempt (see the top of this file). */
export function requestLine(observation: RequestObservation, urn: string | undefined): string {
  const outcome = [observation.status, observation.errorCode].filter((part) => part !== undefined).join(" ") || "no answer";
  return (
    `gms: ${urn ? `${urn}: ` : ""}${observation.method} ${observation.path} attempt ${observation.attempt}: ${outcome} in ${observation.durationMs} ms` +
    (observation.requestId ? ` (request id ${observation.requestId})` : "") +
    (observation.retry ? `; retrying in ${observation.retry.inMs} ms (${observation.retry.because})` : "")
  );
}

/** The client's observer: each attempt's line to the sink, with the URN of the call that made it. */
export function logRequest(observation: RequestObservation): void {
  const urn = currentResourceCall();
  if (sink) lastLine = Promise.resolve(sink(requestLine(observation, urn), urn));
}

/** The line of a change of the pacer's learned rate (see the top of this file). */
export function pacerLine(change: PacerChange): string {
  return `gms: pacing ${change.rate === undefined ? "off" : `at ${change.rate.toFixed(1)} requests/s`}: ${change.because}`;
}

/** The pacer's observer: each change of its rate to the sink. */
export function logPacerChange(change: PacerChange): void {
  // A change of rate is the service's and the process's, not one resource's: it names no URN.
  if (sink) lastLine = Promise.resolve(sink(pacerLine(change), undefined));
}

/**
 * `call`'s outcome, once every line logged so far has reached the engine. The dynamic provider's host answers through
 * this: the engine ends the host once the last call is answered, and would lose the lines of that call's requests.
 */
export async function afterLogged<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } finally {
    await lastLine;
  }
}
