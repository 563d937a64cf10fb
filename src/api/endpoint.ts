/**
 * An endpoint is one entry: method, path, request body and response, the body and the response as codecs
 * between the wire's names and the package's (./wire). The client calls it (`call`, `pageOf`, `createWith`
 * below) and the emulator serves it (src/emulator/routes/serve.ts) from the same entry, so the two cannot
 * disagree on a name, a field or a shape; the spec's own checks (the route census, the official client's tests,
 * the emulator's contract tests) stay independent of it and catch an entry that contradicts the spec.
 */
import { z } from "zod";
import {
  type CreateOptions,
  collect,
  type EncodedPath,
  type GmsClient,
  type HttpMethod,
  paginateEnvelope,
  listIgnoringPaging,
  paginateUntilShort,
  path,
  type QueryValue,
} from "../client";

/**
 * How a list answers: the paging envelope `{data, total_count, has_next_page}`, a bare array honouring skip/limit, or
 * the envelope with every record in `data` whatever skip/limit ask (`unpaged`: its `has_next_page` is not relied on).
 */
export type ListForm = "envelope" | "bare" | "unpaged";

export interface Endpoint<
  Body extends z.ZodType | undefined = z.ZodType | undefined,
  Response extends z.ZodType = z.ZodType,
  List extends ListForm | undefined = ListForm | undefined,
> {
  method: HttpMethod;
  /** Below `/v1`, a parameter written `{name}` (a GUID unless the route says otherwise). */
  path: string;
  /** The request body, when the route takes one. */
  body?: Body;
  /** What the route answers: the record, or each item of a list. */
  response: Response;
  /**
   * False where the spec shows no response body: the client relies on nothing in it (it reads the record back),
   * while the emulator still answers `response`, its choice where the spec is silent.
   */
  shown?: false;
  /** Set for a list: how it pages. */
  list?: List;
  /** The query parameters the route reads (a list's skip/limit included), for the emulator's OpenAPI document. */
  query?: z.ZodObject;
}

/** Declares an endpoint, keeping its types. */
export const endpoint = <
  Response extends z.ZodType,
  Body extends z.ZodType | undefined = undefined,
  List extends ListForm | undefined = undefined,
>(
  entry: Endpoint<Body, Response, List>,
): Endpoint<Body, Response, List> => entry;

/** The package-side body an endpoint takes, or undefined. */
export type BodyOf<E extends Endpoint> = NonNullable<E["body"]> extends z.ZodType ? z.output<NonNullable<E["body"]>> : undefined;
/** The package-side record an endpoint answers (each item, for a list). */
export type RecordOf<E extends Endpoint> = z.output<E["response"]>;

/** The names of an endpoint's path parameters, in order. */
export const pathParameters = (entry: Pick<Endpoint, "path">): string[] => [...entry.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);

/** The endpoint's path with its parameters filled in, each encoded as one segment. */
export function pathOf(entry: Pick<Endpoint, "path">, params: Readonly<Record<string, string | number>> = {}): EncodedPath {
  const literals = entry.path.split(/\{\w+\}/);
  const values = pathParameters(entry).map((name) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`${entry.path}: no value for {${name}}`);
    return value;
  });
  return path(Object.assign(literals, { raw: literals }) as TemplateStringsArray, ...values);
}

interface CallArgs<E extends Endpoint> {
  params?: Readonly<Record<string, string | number>>;
  query?: Record<string, QueryValue>;
  body?: BodyOf<E>;
}

/** The body as the wire takes it: encoded from the package's names. */
const encodedBody = (entry: Endpoint, body: unknown): unknown =>
  entry.body === undefined || body === undefined ? undefined : z.encode(entry.body, body as never);

/**
 * Calls an endpoint that answers one record: the answer decoded into the package's names (undefined for an
 * answer the spec does not show, which is not read).
 */
export function call<E extends Endpoint>(client: GmsClient, entry: E, args: CallArgs<E> = {}): Promise<RecordOf<E>> {
  return client.request<z.ZodType<RecordOf<E>>>({
    method: entry.method,
    path: pathOf(entry, args.params),
    query: args.query,
    body: encodedBody(entry, args.body),
    schema: (entry.shown === false ? z.undefined().catch(undefined) : entry.response) as unknown as z.ZodType<RecordOf<E>>,
  });
}

/** Every item of a list endpoint, page by page as its form pages (an unpaged list in one call). */
export function listAll<E extends Endpoint>(client: GmsClient, entry: E, args: Omit<CallArgs<E>, "body"> = {}): Promise<RecordOf<E>[]> {
  const options = { path: pathOf(entry, args.params), query: args.query, item: entry.response as unknown as z.ZodType<RecordOf<E>> };
  if (entry.list === "unpaged") return listIgnoringPaging(client, options);
  return collect(entry.list === "bare" ? paginateUntilShort(client, options) : paginateEnvelope(client, options));
}

/** POSTs a create exactly once through `GmsClient.create` (a lost answer is looked up with `findCreated`, never sent blindly again). */
export function createWith<E extends Endpoint>(
  client: GmsClient,
  entry: E,
  args: CallArgs<E> & Pick<CreateOptions<z.ZodType<{ guid: string }>>, "findCreated" | "listBeforeCreate" | "identity">,
): Promise<RecordOf<E>> {
  const { params, body, ...lookup } = args;
  return client.create({
    path: pathOf(entry, params),
    body: encodedBody(entry, body),
    schema: entry.response as z.ZodType<{ guid: string }>,
    ...lookup,
  }) as Promise<RecordOf<E>>;
}
