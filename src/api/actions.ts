/**
 * Running an Action (`POST /actions/`) and reading what a run generated. The spec shows the request
 * fields and the synchronous response; the names it leaves out are the emulator's: `environment` and
 * `extUserId` in the request, `stream_url` and `generation_guid` in the response, and the routes
 * `GET /generations/{guid}` and `GET /generations/{guid}/stream`.
 */
import { z } from "zod";
import { Guid, HttpUrl, JsonObject } from "./common";

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

/** What the bodies of an Action run and an Experiment prompt share: the input and the run options. */
export const RunBody = z.object({
  input: RunInput,
  streaming: z.boolean().default(false),
  async_mode: z.boolean().default(false),
  cache: z.boolean().default(false),
  session: Guid.nullable().optional(),
  // Accepted and checked; the emulator's Actions read no Context, so there is nothing for it to narrow.
  metadata_filter: JsonObject.nullable().optional(),
  messages: z.array(RunMessage).nullable().optional(),
  // Spec: the wire name of the environment option is not shown; the emulator reads `environment`.
  environment: z.string().min(1).optional(),
  // Spec: the wire name of the external user ID is not shown; the emulator reads `extUserId`, as Sessions do.
  extUserId: z.string().min(1).nullable().optional(),
});
export type RunBody = z.infer<typeof RunBody>;

/** A run streams or runs asynchronously, not both: the refinement both run bodies apply. */
export const oneRunMode = (body: { streaming: boolean; async_mode: boolean }): boolean => !(body.streaming && body.async_mode);
export const ONE_RUN_MODE = { error: "streaming and async_mode cannot both be true", path: ["async_mode"] };

export const ActionRun = RunBody.extend({
  action: Guid,
  // Only for manually controlled Experiment traffic: `action` must be one of the Experiment's two.
  experiment: Guid.nullable().optional(),
}).refine(oneRunMode, ONE_RUN_MODE);
export type ActionRun = z.infer<typeof ActionRun>;

/**
 * A run's answer. Synchronous: `msg` is the text. Streaming: `msg` is "" and `stream_url` serves the text
 * token by token. Asynchronous: `msg` is "" and `generation_guid` names what `GET /generations/{guid}`
 * answers. `feedback_url` names the run's Data record in every mode.
 */
export const RunResponse = z.object({
  msg: z.string(),
  feedback_url: z.string(),
  streaming: z.boolean(),
  stream_url: z.string().optional(),
  generation_guid: Guid.optional(),
});
export type RunResponse = z.infer<typeof RunResponse>;

/** Which of an Experiment's two Actions served a run. */
export const Variant = z.enum(["primary", "secondary"]);

/** `GET /generations/{guid}`: the output of a run (always complete: the emulator generates at once). */
export const Generation = z.object({
  guid: Guid,
  status: z.literal("completed"),
  msg: z.string(),
  feedback_url: z.string(),
  action: Guid,
  /** The Experiment the run went through and the side of it that served the run, else null. */
  experiment: Guid.nullable(),
  variant: Variant.nullable(),
});
export type Generation = z.infer<typeof Generation>;

/**
 * The stream (`text/event-stream`): one `data: {"token": "..."}` event per token, then `data: [DONE]`.
 * The tokens joined are the text.
 */
export const StreamToken = z.object({ token: z.string() });
export type StreamToken = z.infer<typeof StreamToken>;
export const STREAM_DONE = "[DONE]";
