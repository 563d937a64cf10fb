/**
 * The service lists in four ways (spec, Limits): the standard envelope, a bare array, Model lists that end
 * on a short page and Skill lists that ignore paging. One helper each, so no caller re-derives the rules.
 */
import { z } from "zod";
import { Envelope } from "../api/common";
import type { GmsClient, QueryValue } from "./client";
import type { EncodedPath } from "./path";

type Requester = Pick<GmsClient, "request">;

export interface ListOptions<T extends z.ZodType> {
  path: EncodedPath;
  item: T;
  /** Extra filters; `skip` and `limit` are set by the paging helpers. */
  query?: Record<string, QueryValue>;
}

export interface PagedListOptions<T extends z.ZodType> extends ListOptions<T> {
  /** Page size; the service default is 100. */
  limit?: number;
}

const defaultLimit = 100;

/** Envelope lists: add the previous limit to skip while `has_next_page` is true. */
export async function* paginateEnvelope<T extends z.ZodType>(client: Requester, options: PagedListOptions<T>): AsyncGenerator<z.output<T>> {
  const limit = pageSize(options.limit);
  const schema = Envelope(options.item);
  for (let skip = 0; ; skip += limit) {
    const page = await client.request({ method: "GET", path: options.path, query: { ...options.query, skip, limit }, schema });
    yield* page.data;
    // An empty page that claims more would otherwise loop forever.
    if (!page.has_next_page || page.data.length === 0) return;
  }
}

/** Bare-array lists with no total and no paging contract: one call. */
export function listBare<T extends z.ZodType>(client: Requester, options: ListOptions<T>): Promise<Array<z.output<T>>> {
  return client.request({ method: "GET", path: options.path, query: options.query, schema: z.array(options.item) });
}

/** Model lists: bare arrays with no `has_next_page`; the list ends on a page shorter than `limit`. */
export async function* paginateUntilShort<T extends z.ZodType>(
  client: Requester,
  options: PagedListOptions<T>,
): AsyncGenerator<z.output<T>> {
  const limit = pageSize(options.limit);
  for (let skip = 0; ; skip += limit) {
    const page = await client.request({
      method: "GET",
      path: options.path,
      query: { ...options.query, skip, limit },
      schema: z.array(options.item),
    });
    yield* page;
    if (page.length < limit) return;
  }
}

/**
 * Skill lists: the service ignores skip/limit and returns everything in `data`, and its `has_next_page`
 * must not be relied on, so one call and only `data` is read.
 */
export async function listIgnoringPaging<T extends z.ZodType>(client: Requester, options: ListOptions<T>): Promise<Array<z.output<T>>> {
  const page = await client.request({
    method: "GET",
    path: options.path,
    query: options.query,
    schema: z.object({ data: z.array(options.item) }),
  });
  return page.data;
}

/** Drains a paginated iterator into an array. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const collected: T[] = [];
  for await (const item of items) collected.push(item);
  return collected;
}

function pageSize(limit: number | undefined): number {
  const size = limit ?? defaultLimit;
  // A zero limit would never end a short-page list and never advance an envelope.
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`page limit must be a positive integer, got ${size}`);
  return size;
}
