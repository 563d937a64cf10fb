/**
 * The client's errors: one small hierarchy, built from a response by one factory. Every error names the
 * request (method and path, never the query, headers or body) so a log line is useful on its own, and
 * none holds a credential: the API key lives only in the client's private field.
 */
import { STATUS_CODES } from "node:http";

export interface RequestLabel {
  method: string;
  /** The path below the base URL, as sent (already encoded), without the query string. */
  path: string;
}

interface GmsErrorInit extends RequestLabel {
  status?: number;
  detail: string;
  requestId?: string;
  retryAfterMs?: number;
  cause?: unknown;
}

export class GmsError extends Error {
  override readonly name: string = "GmsError";
  /** Stable machine-readable kind; the base class stands for statuses with no class of their own. */
  readonly code: string = "http_error";
  readonly status: number | undefined;
  readonly detail: string;
  readonly method: string;
  readonly path: string;
  readonly requestId: string | undefined;
  /** The server's `Retry-After`, in milliseconds, whatever the status it came with. */
  readonly retryAfterMs: number | undefined;
  /** How many times the request was sent before this error was final (set by the retry loop). */
  attempts = 1;

  constructor(init: GmsErrorInit, message = `${init.method} ${init.path}: ${init.status} ${init.detail}`) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.detail = init.detail;
    this.method = init.method;
    this.path = init.path;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** 400 or 422: a malformed UUID, body, enum value or configuration. */
export class ValidationError extends GmsError {
  override readonly name = "ValidationError";
  override readonly code = "validation";
}

/** 401 or 403: a missing, wrong or under-privileged API key. */
export class AuthenticationError extends GmsError {
  override readonly name = "AuthenticationError";
  override readonly code = "authentication";
}

export class NotFoundError extends GmsError {
  override readonly name = "NotFoundError";
  override readonly code = "not_found";
}

export class ConflictError extends GmsError {
  override readonly name = "ConflictError";
  override readonly code = "conflict";
}

/** 429 with `Retry-After`: too many requests for now; the same request succeeds later. */
export class RateLimitedError extends GmsError {
  override readonly name = "RateLimitedError";
  override readonly code = "rate_limited";
}

/**
 * 429 without `Retry-After`: a workspace allowance or feature limit is used up (the spec's App
 * allowance). Sending the request again cannot succeed until something is deleted or the limit raised.
 */
export class LimitExceededError extends GmsError {
  override readonly name = "LimitExceededError";
  override readonly code = "limit_exceeded";
}

export class ServerError extends GmsError {
  override readonly name = "ServerError";
  override readonly code = "server";
}

/** The response arrived but is not the JSON the caller's schema describes. */
export class ResponseShapeError extends GmsError {
  override readonly name = "ResponseShapeError";
  override readonly code = "invalid_response";

  constructor(init: GmsErrorInit) {
    super(init, `${init.method} ${init.path}: ${init.detail}`);
  }
}

/** No response: the connection failed. There is no status. */
export class ConnectionError extends GmsError {
  override readonly name = "ConnectionError";
  override readonly code = "connection";
  /** True only when the failure provably happened before any byte of the request was written. */
  readonly provablyUnsent: boolean;
  /**
   * True when the response's status line had arrived and its body was cut: the service had finished with
   * the request, whatever it did. Otherwise it may still be acting on it.
   */
  readonly answered: boolean;

  constructor(init: Omit<GmsErrorInit, "status">, provablyUnsent: boolean, answered = false) {
    super(init, `${init.method} ${init.path}: ${init.detail}`);
    this.provablyUnsent = provablyUnsent;
    this.answered = answered;
  }
}

/** No complete response within the client's timeout. There is no status. */
export class TimeoutError extends GmsError {
  override readonly name = "TimeoutError";
  override readonly code = "timeout";

  constructor(init: Omit<GmsErrorInit, "status">) {
    super(init, `${init.method} ${init.path}: ${init.detail}`);
  }
}

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface ErrorResponse extends RequestLabel {
  status: number;
  /** The parsed JSON body, or undefined when the body was empty or not JSON. */
  body: unknown;
  /** Read for the request id and `Retry-After` only; never stored on the error. */
  headers: ResponseHeaders;
  /** Clock for an HTTP-date `Retry-After`; injectable for tests. */
  now?: number;
}

/** The one place a non-2xx response becomes an error. */
export function errorFromResponse(response: ErrorResponse): GmsError {
  const { method, path, status, headers } = response;
  const init: GmsErrorInit = {
    method,
    path,
    status,
    detail: renderDetail(response.body) ?? STATUS_CODES[status] ?? "HTTP error",
    requestId: headerValue(headers, "x-request-id") ?? headerValue(headers, "request-id"),
    retryAfterMs: parseRetryAfter(headerValue(headers, "retry-after"), response.now ?? Date.now()),
  };
  if (status === 400 || status === 422) return new ValidationError(init);
  if (status === 401 || status === 403) return new AuthenticationError(init);
  if (status === 404) return new NotFoundError(init);
  if (status === 409) return new ConflictError(init);
  // The spec's only 429 is the App allowance, which no wait cures; a rate limiter says when to come back.
  if (status === 429) return init.retryAfterMs === undefined ? new LimitExceededError(init) : new RateLimitedError(init);
  if (status >= 500) return new ServerError(init);
  return new GmsError(init);
}

/**
 * `{"detail": "..."}` as is; a FastAPI validation list as `body.name: Field required; ...`. Only `loc`
 * and `msg` are rendered: Pydantic entries also carry `input`, which may be a submitted credential.
 */
function renderDetail(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null || !("detail" in body)) return undefined;
  const { detail } = body;
  if (typeof detail === "string") return detail;
  if (!Array.isArray(detail)) return undefined;
  const entries = detail.map((entry: unknown) => {
    if (typeof entry === "string") return entry;
    if (typeof entry !== "object" || entry === null) return undefined;
    const msg = "msg" in entry && typeof entry.msg === "string" ? entry.msg : undefined;
    const loc = "loc" in entry && Array.isArray(entry.loc) ? entry.loc.map(String).join(".") : undefined;
    return msg === undefined ? undefined : loc ? `${loc}: ${msg}` : msg;
  });
  const rendered = entries.filter((entry) => entry !== undefined);
  return rendered.length > 0 ? rendered.join("; ") : undefined;
}

/** `Retry-After` is either delay-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function headerValue(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
