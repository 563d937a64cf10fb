/**
 * Running an Action (`POST /actions/`) and reading what a run generated. The spec shows the request
 * fields and the synchronous response; where it leaves names out, the emulator uses the official client's
 * (`@kluai/core`): `environment` in the request, `data_guid`, `streaming_url` and `result_url` in the
 * response, `{"token": ...}` stream events ending with `END_STREAM`, and a result's `status` `SUCCESS`.
 * The rest are the emulator's own: `extUserId` in the request, `generation_guid` in the response, and the
 * routes `GET /generations/{guid}` and `GET /generations/{guid}/stream`.
 */
import { z } from "zod";
import { Guid, HttpUrl, JsonObject } from "./common";
import { endpoint } from "./endpoint";
import { wire } from "./wire";

/** A run's input: a string, or an object of variable name to value. */
const RunInput = z.union([z.string(), JsonObject]);

const BASE64 = /^(?:data:image\/[\w.+-]+;base64,)?[A-Za-z0-9+/]+={0,2}$/;

/** A message's image: base64 data (optionally as an image data URL) or an http(s) URL. */
const ImageReference = z.string().refine((value) => BASE64.test(value) || HttpUrl.safeParse(value).success, {
  error: "must be a base64 image or an http(s) image URL",
});

const RunMessage = z.object({
  role: z.string().min(1),
  content: z.string(),
  files: z.array(ImageReference).optional(),
});

/**
 * What the bodies of an Action run and an Experiment prompt share: the input and the run options, in the
 * wire's names (src/api/experiments.ts extends it; `ActionRun` is the Action run's body as a codec).
 */
export const RunBody = z.object({
  input: RunInput,
  streaming: z.boolean().default(false),
  async_mode: z.boolean().default(false),
  cache: z.boolean().default(false),
  session: Guid.nullable().optional(),
  // Accepted and checked; the emulator's Actions read no Context, so there is nothing for it to narrow.
  metadata_filter: JsonObject.nullable().optional(),
  messages: z.array(RunMessage).nullable().optional(),
  // Spec: the wire name of the environment option is not shown; the emulator reads the official client's `environment`.
  environment: z.string().min(1).optional(),
  // Spec: the wire name of the external user ID is not shown; the emulator reads `extUserId`, as Sessions do.
  extUserId: z.string().min(1).nullable().optional(),
});
export type RunBody = z.infer<typeof RunBody>;

/** A run streams or runs asynchronously, not both: the refinement both run bodies apply. */
export const oneRunMode = (body: { streaming: boolean; async_mode: boolean }): boolean => !(body.streaming && body.async_mode);
export const ONE_RUN_MODE = { error: "streaming and async_mode cannot both be true", path: ["async_mode"] };

export const ActionRun = wire(
  RunBody.extend({
    action: Guid,
    // Only for manually controlled Experiment traffic: `action` must be one of the Experiment's two.
    experiment: Guid.nullable().optional(),
  }).refine(oneRunMode, ONE_RUN_MODE),
);
/** An Action run's body as the code uses it. */
export type ActionRun = z.output<typeof ActionRun>;

/**
 * A run's answer. Synchronous: `msg` is the text. Streaming: `msg` is "" and `streaming_url`, a signed URL
 * that needs no API key, serves the text token by token. Asynchronous: `msg` is "" and `generation_guid`
 * names what `GET /generations/{guid}` answers, whose absolute URL is `result_url`. `feedback_url` and
 * `data_guid` name the run's Data record in every mode.
 */
export const RunResponse = z.object({
  msg: z.string(),
  feedback_url: z.string(),
  data_guid: Guid,
  streaming: z.boolean(),
  streaming_url: z.string().optional(),
  generation_guid: Guid.optional(),
  result_url: z.string().optional(),
});
export type RunResponse = z.infer<typeof RunResponse>;
/** A run's answer decoded into the package's names (src/api/experiments.ts extends the wire-named `RunResponse`). */
export const RunResponseCodec = wire(RunResponse);
/** A run's answer as the code uses it. */
export type RunResponseRecord = z.output<typeof RunResponseCodec>;

/** Which of an Experiment's two Actions served a run. */
export const Variant = z.enum(["primary", "secondary"]);
export type Variant = z.infer<typeof Variant>;

/**
 * `GET /generations/{guid}`: the output of a run, always complete (the emulator generates at once), so its
 * status is always the official client's `SUCCESS` (the client's task states: PENDING, STARTED, RETRY,
 * FAILURE, SUCCESS).
 */
export const Generation = wire(
  z.object({
    guid: Guid,
    status: z.literal("SUCCESS"),
    msg: z.string(),
    feedback_url: z.string(),
    action: Guid,
    /** The Experiment the run went through and the side of it that served the run, else null. */
    experiment: Guid.nullable(),
    variant: Variant.nullable(),
  }),
);
/** A Generation as the code uses it. */
export type Generation = z.output<typeof Generation>;

/**
 * The stream (`text/event-stream`): one `data: {"token": "..."}` event per token, then `data: END_STREAM`,
 * the official client's end marker. The tokens joined are the text.
 */
export const StreamToken = z.object({ token: z.string() });
export type StreamToken = z.infer<typeof StreamToken>;
export const STREAM_END = "END_STREAM";

export const actionEndpoints = {
  /** The spec writes `/actions/`; the emulator ignores a trailing slash. Spec: `msg`, `feedback_url`, `streaming` (the rest: see RunResponse). */
  run: endpoint({ method: "POST", path: "/actions", body: ActionRun, response: RunResponseCodec }),
  /** Spec: the retrieval route is not shown; the emulator's (see the top of this file). */
  generation: endpoint({ method: "GET", path: "/generations/{guid}", response: Generation }),
  // `GET /generations/{guid}/stream` has no entry: it answers server-sent events, not a JSON record, to a signed
  // URL without an API key (src/emulator/routes/actions.ts serves it by hand).
};
