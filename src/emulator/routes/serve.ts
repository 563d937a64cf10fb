/**
 * Serving an endpoint entry of src/api (see ../../api/endpoint.ts): its route is registered from the entry's
 * method and path, its path parameters and body are parsed with the entry's codecs (a mismatch is the 400 the
 * error handler words), and the handler's record is answered encoded by the entry's response codec, so a route
 * writes no presenter. A list answers the entry's form: the paging envelope around a page of records, a bare
 * array, or the envelope around every record (unpaged).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { type BodyOf, type Endpoint, pathParameters, type RecordOf } from "../../api/endpoint";
import { Guid, type PageQuery } from "../../api/common";
import type { Caller, Paged } from "../store/records";
import { envelope, parse, parsePage } from "./wire";

/** What a handler is given: the caller, the parsed path parameters and body, and the page a list asks for. */
export interface Served<E extends Endpoint> {
  caller: Caller;
  params: Record<string, string>;
  body: BodyOf<E>;
  page: PageQuery;
  request: FastifyRequest;
}

/** What a handler returns: a page for an envelope list, the records for a bare or unpaged one, else the record. */
export type Answer<E extends Endpoint> = [Exclude<E["list"], undefined>] extends [never]
  ? RecordOf<E>
  : [Exclude<E["list"], undefined>] extends ["envelope"]
    ? Paged<RecordOf<E>>
    : RecordOf<E>[];

/** `/apps/{guid}` as Fastify writes it, `/apps/:guid`. */
const fastifyPath = (entry: Endpoint): string => entry.path.replace(/\{(\w+)\}/g, ":$1");

/** Registers the route of `entry`, answering what `handler` returns. */
export function serve<E extends Endpoint>(
  app: FastifyInstance,
  entry: E,
  handler: (served: Served<NoInfer<E>>) => Answer<NoInfer<E>>,
): void {
  const names = pathParameters(entry);
  const paramsSchema = z.object(Object.fromEntries(names.map((name) => [name, Guid])));
  const encode = (record: unknown) => z.encode(entry.response, record as never);
  app.route({
    method: entry.method,
    url: fastifyPath(entry),
    // Synchronous, as every handler is: what it returns is sent at once, and what it throws reaches the error
    // handler as a rejection would, without a promise per request.
    handler: (request, reply) => {
      const payload = answerOf(request);
      // A handler that returns nothing would leave the request unanswered: it answers an empty body, as an async one did.
      return payload === undefined ? reply.send() : payload;
    },
  });

  function answerOf(request: FastifyRequest): unknown {
    const params = names.length > 0 ? (parse(paramsSchema, request.params, "path") as Record<string, string>) : {};
    const body = (entry.body === undefined ? undefined : parse(entry.body, request.body, "body")) as Served<E>["body"];
    const page = entry.list ? parsePage(request) : { skip: 0, limit: 100 };
    const answer = handler({ caller: request.caller, params, body, page, request });
    if (entry.list === "envelope") return envelope(answer as Paged<unknown>, page, encode);
    if (entry.list === "bare") return (answer as unknown[]).map(encode);
    if (entry.list === "unpaged") return unpaged(answer as unknown[], page, encode);
    return encode(answer);
  }
}

/**
 * An unpaged list (the spec's Skill list): skip and limit are accepted but not applied, `data` holds every record,
 * and `has_next_page` is computed as if the page had been applied (the client must not rely on it).
 */
function unpaged(records: unknown[], page: PageQuery, encode: (record: unknown) => unknown) {
  return { data: records.map(encode), total_count: records.length, has_next_page: page.skip + page.limit < records.length };
}
