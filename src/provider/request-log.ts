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
 * The provider plugin logs always (the engine shows debug lines only with `--debug`); the dynamic provider logs when
 * GMS_LOG=debug is set in the environment of the `pulumi` command, which its host inherits.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { PacerChange, RequestObservation } from "../client";

/** Where the lines go: the engine's log at debug level, or nowhere. */
type LineSink = (line: string) => void;

/** The URN of the resource whose call is under way, for the lines of the requests it makes. */
const resourceCall = new AsyncLocalStorage<string>();

/** The environment setting that turns on the dynamic provider's log. */
export const LOG_SETTING = "GMS_LOG";

/** The engine's log, at debug level, through the SDK this process runs (the plugin's own, or the dynamic host's). */
const engineDebugLog: LineSink = (line) => {
  const { log } = require("@pulumi/pulumi") as typeof import("@pulumi/pulumi");
  // A line the engine no longer takes (it is shutting down) must not fail the call.
  void log.debug(line).catch(() => undefined);
};

let sink: LineSink | undefined = process.env[LOG_SETTING] === "debug" ? engineDebugLog : undefined;

/** Sends every line to the engine's log from now on (the provider plugin), to another sink (a test), or nowhere. */
export function logRequestsTo(to: "engine" | LineSink | undefined): void {
  sink = to === "engine" ? engineDebugLog : to;
}

/** Runs `call` as the call of the resource `urn`: the requests it makes are logged with that URN. */
export const asResourceCall = <T>(urn: string | undefined, call: () => T): T => (urn ? resourceCall.run(urn, call) : call());

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
  sink?.(requestLine(observation, resourceCall.getStore()));
}

/** The line of a change of the pacer's learned rate (see the top of this file). */
export function pacerLine(change: PacerChange): string {
  return `gms: pacing ${change.rate === undefined ? "off" : `at ${change.rate.toFixed(1)} requests/s`}: ${change.because}`;
}

/** The pacer's observer: each change of its rate to the sink. */
export function logPacerChange(change: PacerChange): void {
  sink?.(pacerLine(change));
}
