/** Reads what a run's stream URL serves (server-sent events: `data: {"token": ...}` per token, then `data: [DONE]`). */
import { STREAM_DONE, StreamToken } from "../../src/api/actions";
import type { Call } from "./harness";

/** The path (and query) of an absolute URL the emulator handed out, to call it in-process. */
export const pathOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

/**
 * Follows a stream URL and returns its tokens. Fails unless it answers 200 as `text/event-stream`, every
 * event is a `data:` line and the last one, and only that one, is `[DONE]`.
 */
export async function readStream(call: Call, streamUrl: string): Promise<string[]> {
  const reply = await call("GET", pathOf(streamUrl));
  if (reply.status !== 200) throw new Error(`stream answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  if (!String(reply.headers["content-type"]).startsWith("text/event-stream"))
    throw new Error(`not an event stream: ${reply.headers["content-type"]}`);
  const events = String(reply.body).split("\n\n");
  if (events.pop() !== "") throw new Error("the stream does not end with a blank line");
  const data = events.map((event) => {
    if (!event.startsWith("data: ") || event.includes("\n")) throw new Error(`not a single data line: ${JSON.stringify(event)}`);
    return event.slice("data: ".length);
  });
  if (data.pop() !== STREAM_DONE || data.includes(STREAM_DONE)) throw new Error("the stream does not end with its one [DONE] event");
  return data.map((payload) => StreamToken.parse(JSON.parse(payload)).token);
}
