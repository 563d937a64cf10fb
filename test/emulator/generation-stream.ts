/** Reads what a run's streaming URL serves (server-sent events: `data: {"token": ...}` per token, then `data: END_STREAM`). */
import { STREAM_END, StreamToken } from "../../src/api/actions";
import type { Call } from "./harness";

/** The path (and query) of an absolute URL the emulator handed out, to call it in-process. */
export const pathOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

/**
 * Follows a streaming URL without an API key (its signature is the authority, as for the official client's
 * EventSource, which sends none) and returns its tokens. Fails unless it answers 200 as `text/event-stream`,
 * every event is a `data:` line and the last one, and only that one, is `END_STREAM`.
 */
export async function readStream(call: Call, streamingUrl: string): Promise<string[]> {
  const reply = await call("GET", pathOf(streamingUrl), undefined, { apiKey: null });
  if (reply.status !== 200) throw new Error(`stream answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  if (!String(reply.headers["content-type"]).startsWith("text/event-stream"))
    throw new Error(`not an event stream: ${reply.headers["content-type"]}`);
  const events = String(reply.body).split("\n\n");
  if (events.pop() !== "") throw new Error("the stream does not end with a blank line");
  const data = events.map((event) => {
    if (!event.startsWith("data: ") || event.includes("\n")) throw new Error(`not a single data line: ${JSON.stringify(event)}`);
    return event.slice("data: ".length);
  });
  if (data.pop() !== STREAM_END || data.includes(STREAM_END)) throw new Error("the stream does not end with its one END_STREAM event");
  return data.map((payload) => StreamToken.parse(JSON.parse(payload)).token);
}
