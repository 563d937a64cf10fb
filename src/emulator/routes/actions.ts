import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import type { Generation, RunBody, RunResponse, StreamToken } from "../../api/actions";
import { ActionRun, STREAM_DONE } from "../../api/actions";
import type { GenerationRecord, RunOptions } from "../store/generations";
import { splitTokens } from "../store/generations";
import { type RouteContext, type RouteModule, guidParam, parseBody } from "./wire";

/** The store's run options from the wire fields a run body and an Experiment prompt share. */
export const runOptions = (body: RunBody): RunOptions => ({
  input: body.input,
  cache: body.cache,
  sessionGuid: body.session,
  environment: body.environment,
  extUserId: body.extUserId,
  messages: body.messages,
});

/** The start of the absolute URLs a run hands out: the emulator's origin plus the `/v1` the routes sit under. */
export const runUrlBase = (app: FastifyInstance, context: RouteContext): string => `${context.origin()}${app.prefix}`;

/** Where Feedback on the generation's Data record is posted (`POST /feedback/{data guid}`); `base` is the origin plus `/v1`. */
const feedbackUrl = (base: string, generation: GenerationRecord) => `${base}/feedback/${generation.dataGuid}`;

/**
 * A run's answer in the mode its body asked for: the text itself, a stream URL or a Generation GUID;
 * `base` is the origin plus `/v1`.
 */
export function presentRun(generation: GenerationRecord, mode: Pick<RunBody, "streaming" | "async_mode">, base: string): RunResponse {
  const feedback_url = feedbackUrl(base, generation);
  if (mode.streaming) return { msg: "", feedback_url, streaming: true, stream_url: `${base}/generations/${generation.guid}/stream` };
  if (mode.async_mode) return { msg: "", feedback_url, streaming: false, generation_guid: generation.guid };
  return { msg: generation.output, feedback_url, streaming: false };
}

/** `POST /actions/` and what its streaming and asynchronous modes hand out: `/generations/{guid}` and its stream. */
export const actionRoutes: RouteModule = (app, store, context) => {
  const base = () => runUrlBase(app, context);

  app.post("/actions", async (request) => {
    const body = parseBody(ActionRun, request);
    const generation = store.generations.run(request.caller, body.action, { ...runOptions(body), experimentGuid: body.experiment });
    return presentRun(generation, body, base());
  });

  // Spec: the retrieval route is not shown; the emulator generates at once, so a generation is always complete.
  app.get("/generations/:guid", async (request): Promise<Generation> => {
    const generation = store.generations.get(request.caller, guidParam(request));
    return {
      guid: generation.guid,
      status: "completed",
      msg: generation.output,
      feedback_url: feedbackUrl(base(), generation),
      action: generation.actionGuid,
      experiment: generation.experimentGuid,
      variant: generation.variant,
    };
  });

  // Spec: the stream's format is not shown; the emulator serves server-sent events, one token each, then [DONE].
  app.get("/generations/:guid/stream", async (request, reply) => {
    const generation = store.generations.get(request.caller, guidParam(request));
    const events = [...splitTokens(generation.output).map((token) => JSON.stringify({ token } satisfies StreamToken)), STREAM_DONE];
    return reply
      .type("text/event-stream; charset=utf-8")
      .header("cache-control", "no-cache")
      .send(Readable.from(events.map((data) => `data: ${data}\n\n`)));
  });
};
