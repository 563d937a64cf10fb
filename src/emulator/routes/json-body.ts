import type { FastifyInstance } from "fastify";

/**
 * How deeply a JSON request body may nest objects and arrays (the body itself is level 1). Spec: not
 * shown. No request of the interface comes near it (a Data record's `metadata` or a Workflow input of
 * a few levels), while a body nested thousands of levels deep would overflow the stack wherever it is
 * serialised again (storing it, answering it) and end in a 500.
 */
export const MAX_JSON_DEPTH = 100;

/** A JSON body nested deeper than {@link MAX_JSON_DEPTH}; the error handler answers 400 with its message. */
export class JsonTooDeepError extends Error {
  override readonly name = "JsonTooDeepError";
  readonly code = "GMS_JSON_TOO_DEEP";
  readonly statusCode = 400;
  constructor(readonly limit: number) {
    super(`JSON body nested deeper than ${limit} levels`);
  }
}

/**
 * Replaces Fastify's JSON parser. Clients send `Content-Type: application/json` on every request (spec,
 * Authentication), bodiless GET and DELETE included: an empty JSON body is no body, as FastAPI treats it.
 * Nesting is bounded before parsing, so no deeper value ever reaches the routes or the store.
 */
export function installJsonBodyParser(app: FastifyInstance, maxDepth = MAX_JSON_DEPTH): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const text = body as string;
    if (text === "") return done(null, undefined);
    if (nestsDeeperThan(text, maxDepth)) return done(new JsonTooDeepError(maxDepth), undefined);
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(error as SyntaxError, undefined);
    }
  });
}

/**
 * Whether the brackets of `text` (outside strings) nest deeper than `limit`. One pass without parsing;
 * on malformed JSON the count may be off, but JSON.parse then rejects it anyway.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  if (text.length <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c /* \ */) i++;
      else if (code === 0x22 /* " */) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      if (++depth > limit) return true;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}
