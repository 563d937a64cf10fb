/** What every route module shares: parsing requests with zod and shaping paged responses. */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { type DeleteMessage, GuidParams, PageQuery } from "../../api/common";
import type { Store } from "../store";
import type { Paged } from "../store/records";

/** What the server hands every route module besides the store. */
export interface RouteContext {
  /**
   * The origin (plus any path prefix, no trailing slash) the emulator's absolute URLs start with: the
   * configured public URL, else the address the server listens on; never the request's Host header.
   */
  origin(): string;
}

/** A route module registers its routes (paths relative to `/v1`) on the app. */
export type RouteModule = (app: FastifyInstance, store: Store, context: RouteContext) => void;

/** A request that failed zod validation; the error handler answers 400 with FastAPI-style detail. */
export class RequestValidationError extends Error {
  override readonly name = "RequestValidationError";
  constructor(
    readonly location: "body" | "query" | "path",
    readonly issues: z.core.$ZodIssue[],
  ) {
    super(`invalid ${location}`);
  }
}

export function parse<T extends z.ZodType>(schema: T, value: unknown, location: "body" | "query" | "path" = "body"): z.infer<T> {
  const result = schema.safeParse(value ?? (location === "body" ? undefined : {}));
  if (!result.success) throw new RequestValidationError(location, result.error.issues);
  return result.data;
}

export const parseBody = <T extends z.ZodType>(schema: T, request: FastifyRequest): z.infer<T> => parse(schema, request.body, "body");
export const parsePage = (request: FastifyRequest): PageQuery => parse(PageQuery, request.query, "query");

/** The `{guid}` path parameter, which must be a UUID. */
export const guidParam = (request: FastifyRequest): string => parse(GuidParams, request.params, "path").guid;

/** Any UUID path parameters by name, e.g. `params(request, "contextGuid", "guid")`. */
export function params<K extends string>(request: FastifyRequest, ...names: K[]): Record<K, string> {
  const shape = Object.fromEntries(names.map((name) => [name, GuidParams.shape.guid])) as Record<K, typeof GuidParams.shape.guid>;
  return parse(z.object(shape), request.params, "path") as Record<K, string>;
}

/** What a delete answers: `{ message: "<Kind> <guid> deleted" }`. */
export const deleted = (kind: string, guid: string): DeleteMessage => ({ message: `${kind} ${guid} deleted` });

/** The standard envelope for a page of records. */
export function envelope<R, W>(paged: Paged<R>, page: PageQuery, present: (record: R) => W) {
  return {
    data: paged.items.map(present),
    total_count: paged.total,
    has_next_page: page.skip + paged.items.length < paged.total,
  };
}
