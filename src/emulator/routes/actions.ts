/**
 * `POST /actions/` and what its streaming and asynchronous modes hand out: `/generations/{guid}` (both served
 * from src/api/actions.ts's entries) and its stream (hand-written: see there).
 */
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import {
  type ActionRun,
  type RunBody,
  type RunResponse,
  RunResponseCodec,
  type RunResponseRecord,
  STREAM_END,
  type StreamToken,
  actionEndpoints,
} from "../../api/actions";
import { SignedFileQuery } from "../../api/files";
import type { Store } from "../store";
import type { GenerationRecord } from "../store/generations";
import { splitTokens } from "../store/generations";
import { serve } from "./serve";
import { type RouteContext, type RouteModule, guidParam, parse } from "./wire";

/** The start of the absolute URLs a run hands out: the emulator's origin plus the `/v1` the routes sit under. */
export const runUrlBase = (app: FastifyInstance, context: RouteContext): string => `${context.origin()}${app.prefix}`;

/** Where Feedback on the generation's Data record is posted (`POST /feedback/{data guid}`); `base` is the origin plus `/v1`. */
const feedbackUrl = (base: string, generation: GenerationRecord) => `${base}/feedback/${generation.dataGuid}`;

/**
 * A generation's stream URL: signed, so that it opens without an API key (the official client's
 * EventSource sends none), for the signed URL lifetime; `base` is the origin plus `/v1`.
 */
const streamingUrl = (store: Store, base: string, generation: GenerationRecord) => {
  const { expires, signature } = store.generations.signStream(generation.guid);
  return `${base}/generations/${generation.guid}/stream?${new URLSearchParams({ expires: String(expires), signature })}`;
};

/**
 * A run's answer in the mode its body asked for: the text itself, a signed stream URL, or a Generation GUID
 * and the URL that reads it; `base` is the origin plus `/v1`.
 */
export function runAnswer(
  store: Store,
  generation: GenerationRecord,
  mode: Pick<ActionRun, "streaming" | "asyncMode">,
  base: string,
): RunResponseRecord {
  const logged = { feedbackUrl: feedbackUrl(base, generation), dataGuid: generation.dataGuid };
  if (mode.streaming) return { msg: "", ...logged, streaming: true, streamingUrl: streamingUrl(store, base, generation) };
  if (mode.asyncMode) {
    return { msg: "", ...logged, streaming: false, generationGuid: generation.guid, resultUrl: `${base}/generations/${generation.guid}` };
  }
  return { msg: generation.output, ...logged, streaming: false };
}

/**
 * The same answer in the wire's names, for the Experiment prompt route (src/emulator/routes/experiments.ts),
 * which reads its body in the wire's names and is not served from an entry yet.
 */
export const presentRun = (
  store: Store,
  generation: GenerationRecord,
  mode: Pick<RunBody, "streaming" | "async_mode">,
  base: string,
): RunResponse => z.encode(RunResponseCodec, runAnswer(store, generation, { streaming: mode.streaming, asyncMode: mode.async_mode }, base));

export const actionRoutes: RouteModule = (app, store, context) => {
  const base = () => runUrlBase(app, context);

  serve(app, actionEndpoints.run, ({ caller, body }) => {
    const generation = store.generations.run(caller, body.action, body);
    return runAnswer(store, generation, body, base());
  });

  // Spec: the retrieval route is not shown; the emulator generates at once, so a generation is always complete
  // (`SUCCESS`, the official client's task state).
  serve(app, actionEndpoints.generation, ({ caller, params }) => {
    const generation = store.generations.get(caller, params.guid!);
    return {
      guid: generation.guid,
      status: "SUCCESS" as const,
      msg: generation.output,
      feedbackUrl: feedbackUrl(base(), generation),
      action: generation.actionGuid,
      experiment: generation.experimentGuid,
      variant: generation.variant,
    };
  });

  // Stays hand-written: no entry serves it. Spec: the stream's format is not shown; the emulator serves what the
  // official client reads: server-sent events (`text/event-stream`, not a JSON record), one `{"token": ...}` each,
  // then END_STREAM. Public like a signed file URL: the query's signature, which only a streaming run hands out,
  // authorises the read, not a bearer key (the client's EventSource sends none).
  app.get("/generations/:guid/stream", { config: { public: true } }, async (request, reply) => {
    const guid = guidParam(request);
    const generation = store.generations.readSignedStream(guid, parse(SignedFileQuery, request.query, "query"));
    const events = [...splitTokens(generation.output).map((token) => JSON.stringify({ token } satisfies StreamToken)), STREAM_END];
    return reply
      .type("text/event-stream; charset=utf-8")
      .header("cache-control", "no-cache")
      .send(Readable.from(paced(events.map((data) => `data: ${data}\n\n`))));
  });
};

/**
 * The pause between two events of a stream: long enough that a reader on a busy machine has taken one event before
 * the next arrives (at 2 ms, a CI run saw the official client lose the first token: see below).
 */
const STREAM_EVENT_INTERVAL_MS = 20;

/**
 * The events one at a time, a pause after each, as a service streams tokens while a model generates them.
 * Not only for looks: the official client's stream reader keeps one pending event and drops the others
 * its EventSource delivers in the same chunk, END_STREAM included, so a burst would lose tokens and hang it.
 */
async function* paced(events: string[]): AsyncGenerator<string> {
  for (const event of events) {
    yield event;
    await sleep(STREAM_EVENT_INTERVAL_MS);
  }
}
