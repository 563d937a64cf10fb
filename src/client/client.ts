/**
 * The one request path to the service: auth, timeout, retries, zod parsing and error mapping happen here
 * and nowhere else. An endpoint is a method, an encoded path, a body and a schema.
 */
import type { Dispatcher } from "undici";
import { packageManifest } from "../manifest";
import { SETTINGS } from "../settings";
import type { z } from "zod";
import {
  ConnectionError,
  errorFromResponse,
  GmsError,
  headerValue,
  RateLimitedError,
  type RequestLabel,
  ResponseShapeError,
  TimeoutError,
} from "./errors";
import { type CreateOptions, createOnce } from "./create";
import type { EncodedPath } from "./path";
import type { AdaptivePacer } from "./pacer";
import type { RequestRateLimiter } from "./rate-limit";
import { defaultRetryPolicy, isIdempotent, withRetries, type RetryPolicy } from "./retry";

/**
 * undici, loaded by the first request: a program that only declares resources (its process never sends a
 * request; the provider host does) does not pay the tenth of a second it takes to load.
 */
const undici = (): typeof import("undici") => require("undici") as typeof import("undici");

export const defaultUserAgent = `pulumi-gms/${packageManifest.version}`;

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";
export type QueryValue = string | number | boolean | undefined;

export interface RequestOptions<S extends z.ZodType> {
  method: HttpMethod;
  path: EncodedPath;
  query?: Record<string, QueryValue>;
  body?: unknown;
  schema: S;
  /**
   * A POST whose replay does no harm (it dispatches work, or stores something nothing lists), so it
   * retries like a GET. A POST that creates a listed object goes through `create` instead.
   */
  replayable?: boolean;
}

/**
 * What an observer (a test, the debug log) sees of each attempt: never headers or bodies, which may hold a key. It is
 * told once the attempt's outcome is known: after the retry policy chose to send it again, with the wait, or when the
 * request ends.
 */
export interface RequestObservation extends RequestLabel {
  /** Numbered from 1; a retry is a new attempt. */
  attempt: number;
  status: number | undefined;
  /** The `GmsError.code` the attempt failed with, if it did. */
  errorCode: string | undefined;
  /** From sending (after any wait for the rate limiter) until the whole answer was read, or the attempt failed. */
  durationMs: number;
  /** The service's id of the request (`x-request-id`), when it sends one. */
  requestId?: string;
  /** When the request is sent again: the wait before the next attempt, and why (the error's code). */
  retry?: { inMs: number; because: string };
}

export interface GmsClientOptions {
  /** The service root including `/v1`, e.g. `https://gms.example.com/v1`. */
  baseUrl: string;
  apiKey: string;
  /** Per attempt, from sending until the whole body is read. Default 30 s. */
  timeoutMs?: number;
  /**
   * How long after a request was sent the service may still act on it: its own deadline for a request,
   * in practice the timeout of the gateway in front of it. A create whose answer was lost while the
   * service may still be working on it (a timeout, a connection lost after sending, a 502 or 504) is
   * sent again only once a lookup made after this deadline finds nothing. Default `gms:requestDeadlineMs`'s
   * (src/settings.ts).
   */
  requestDeadlineMs?: number;
  /** Retries after the first attempt. Default `gms:maxRetries`'s (src/settings.ts). */
  maxRetries?: number;
  userAgent?: string;
  /** A caller-owned dispatcher; `close()` leaves it open. Default: a keep-alive `Agent` owned by the client. */
  dispatcher?: Dispatcher;
  onRequest?: (observation: RequestObservation) => void;
  /** Backoff timing, sleep and jitter source; tests inject sleep and random. */
  retryTiming?: Partial<Omit<RetryPolicy, "maxRetries">>;
  /**
   * Every API attempt (retries included; not a signed file's download) waits for its turn here first. Share
   * one between clients to hold them to one rate together, as a provider process does (`gms:maxRequestsPerSecond`).
   */
  rateLimiter?: RequestRateLimiter;
  /**
   * Adaptive pacing for a service that refuses requests for their rate (./pacer.ts): every API attempt takes a place
   * in its window and a turn of its learned rate. Share one between the clients of one service, as a provider
   * process does.
   */
  pacer?: AdaptivePacer;
  /** The GUIDs the client's owner holds (see `GmsClient.claimed`); default a set of the client's own. */
  claimed?: Set<string>;
}

/**
 * Errors that provably happened before any byte of the request was written: name resolution, refused or
 * unreachable connects, and undici's connect timeout. Anything else (a reset, "other side closed") may
 * have followed a delivered request.
 */
const unsentErrorCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

export class GmsClient {
  // Private fields: the key cannot surface through inspect, JSON or an error's cause chain.
  readonly #apiKey: string;
  readonly #origin: string;
  readonly #basePath: string;
  readonly #timeoutMs: number;
  /** See `GmsClientOptions.requestDeadlineMs`. */
  readonly requestDeadlineMs: number;
  readonly #userAgent: string;
  #dispatcher: Dispatcher | undefined;
  readonly #ownsDispatcher: boolean;
  readonly #retryPolicy: RetryPolicy;
  readonly #onRequest: ((observation: RequestObservation) => void) | undefined;
  readonly #rateLimiter: RequestRateLimiter | undefined;
  readonly #pacer: AdaptivePacer | undefined;
  /**
   * The service's clock minus ours: the largest reading of the last minute. Each reading (a `Date` header
   * of whole seconds, taken on arrival) is at most the truth, so the largest is the closest.
   */
  #clockOffsetMs = 0;
  #clockReadAt = 0;
  /**
   * GUIDs this client created or adopted, and any its owner holds (a provider session shares its stack's among its
   * clients): a lost create never adopts one of them a second time.
   */
  readonly claimed: Set<string>;
  /** The last create of each identity under way: creates a lookup could not tell apart are sent one at a time. */
  readonly creating = new Map<string, Promise<void>>();

  constructor(options: GmsClientOptions) {
    const base = new URL(options.baseUrl);
    this.#origin = base.origin;
    this.#basePath = base.pathname.replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.requestDeadlineMs = options.requestDeadlineMs ?? SETTINGS.requestDeadlineMs.default;
    if (!(this.requestDeadlineMs >= 0 && Number.isFinite(this.requestDeadlineMs))) {
      throw new RangeError(`requestDeadlineMs must be a number of milliseconds, 0 or more, not ${this.requestDeadlineMs}`);
    }
    this.#userAgent = options.userAgent ?? defaultUserAgent;
    this.#dispatcher = options.dispatcher;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#retryPolicy = { ...defaultRetryPolicy, ...options.retryTiming, maxRetries: options.maxRetries ?? defaultRetryPolicy.maxRetries };
    this.#onRequest = options.onRequest;
    this.#rateLimiter = options.rateLimiter;
    this.#pacer = options.pacer;
    this.claimed = options.claimed ?? new Set();
  }

  request<S extends z.ZodType>(options: RequestOptions<S>): Promise<z.output<S>> {
    const idempotent = options.replayable === true || isIdempotent(options.method);
    /** The last attempt's observation, told once its outcome is known. */
    let last: RequestObservation | undefined;
    const tell = () => {
      if (last) this.#onRequest?.(last);
      last = undefined;
    };
    return withRetries(
      idempotent,
      this.#retryPolicy,
      (attempt) => this.#observedAttempt(options, attempt, (observation) => (last = observation)),
      (_attempt, delayMs, error) => {
        if (last) last.retry = { inMs: delayMs, because: error.code };
        tell();
      },
    ).finally(tell);
  }

  /**
   * POSTs a create exactly once: when the answer is lost, the object is looked up with
   * `findCreated` and adopted rather than created again (see ./create).
   */
  create<S extends z.ZodType<{ guid: string }>>(options: CreateOptions<S>): Promise<z.output<S>> {
    return createOnce(this, options, this.#retryPolicy);
  }

  /** The service's clock as its `Date` headers tell it (whole seconds, so at most about a second behind). */
  serverNow(): number {
    return Date.now() + this.#clockOffsetMs;
  }

  #readClock(serverDate: number): void {
    const now = Date.now();
    if (serverDate - now >= this.#clockOffsetMs || now - this.#clockReadAt > 60_000) {
      this.#clockOffsetMs = serverDate - now;
      this.#clockReadAt = now;
    }
  }

  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher?.close();
  }

  /**
   * The bytes a signed file URL the service handed out (`/files/upload`'s answer, a Context Source's `url`)
   * points at, when it is on the service's own origin and still valid; undefined otherwise (expired, another
   * origin, unreachable). No key is sent: the URL's signature authorises the read. Never retried: a lookup
   * that cannot read it treats the file as unknown.
   */
  async readSignedFile(url: string): Promise<Buffer | undefined> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return undefined;
    }
    if (target.origin !== this.#origin) return undefined;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.#timeoutMs);
    try {
      const response = await this.#agent().request({
        origin: this.#origin,
        path: target.pathname + target.search,
        method: "GET",
        headers: { "user-agent": this.#userAgent },
        signal: controller.signal,
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      const content = Buffer.from(await response.body.arrayBuffer());
      return response.statusCode === 200 ? content : undefined;
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The caller's dispatcher, or the client's own keep-alive `Agent` (it honours the server's Keep-Alive hint), made on first use. */
  #agent(): Dispatcher {
    this.#dispatcher ??= new (undici().Agent)();
    return this.#dispatcher;
  }

  async #observedAttempt<S extends z.ZodType>(
    options: RequestOptions<S>,
    attempt: number,
    done: (observation: RequestObservation) => void,
  ): Promise<z.output<S>> {
    const observation: RequestObservation = {
      method: options.method,
      path: options.path,
      attempt,
      status: undefined,
      errorCode: undefined,
      durationMs: 0,
    };
    try {
      return await this.#attempt(options, observation);
    } catch (error) {
      if (error instanceof GmsError) {
        observation.errorCode = error.code;
        if (error.requestId !== undefined) observation.requestId = error.requestId;
      }
      throw error;
    } finally {
      done(observation);
    }
  }

  async #attempt<S extends z.ZodType>(options: RequestOptions<S>, observation: RequestObservation): Promise<z.output<S>> {
    const label: RequestLabel = { method: options.method, path: options.path };
    // Serialized before sending so a body that cannot be JSON fails as a plain TypeError, not a transport error.
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    // Before the timer: waiting for a turn is not the service being slow.
    await this.#rateLimiter?.turn();
    const ticket = await this.#pacer?.acquire();
    let failure: unknown;
    try {
      return await this.#send(options, observation, label, body);
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      // Refused for its rate as the retry policy tells it (a 429 with `Retry-After`); else any answer below 500 was taken.
      const status = observation.status;
      ticket?.settle(failure instanceof RateLimitedError ? "refused" : status !== undefined && status < 500 ? "accepted" : "failed");
    }
  }

  /** One HTTP exchange of an attempt. */
  async #send<S extends z.ZodType>(
    options: RequestOptions<S>,
    observation: RequestObservation,
    label: RequestLabel,
    body: string | undefined,
  ): Promise<z.output<S>> {
    const sentAt = performance.now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.#timeoutMs);
    let status: number | undefined;
    let headers: Dispatcher.ResponseData["headers"];
    let text: string;
    try {
      const response = await this.#agent().request({
        origin: this.#origin,
        path: this.#basePath + options.path + queryString(options.query),
        method: options.method,
        headers: {
          authorization: `Bearer ${this.#apiKey}`,
          "content-type": "application/json",
          accept: "application/json",
          "user-agent": this.#userAgent,
        },
        body,
        signal: controller.signal,
        // Our own timer is the one deadline; undici's separate header and body timers would race it.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      status = observation.status = response.statusCode;
      headers = response.headers;
      const requestId = headerValue(headers, "x-request-id") ?? headerValue(headers, "request-id");
      if (requestId !== undefined) observation.requestId = requestId;
      const date = Date.parse(String(headers.date));
      if (!Number.isNaN(date)) this.#readClock(date);
      text = await response.body.text();
    } catch (error) {
      throw this.#transportError(label, error, controller.signal.aborted, status !== undefined);
    } finally {
      clearTimeout(timer);
      observation.durationMs = Math.round(performance.now() - sentAt);
    }

    const parsed = parseJson(text);
    if (status < 200 || status >= 300) throw errorFromResponse({ ...label, status, headers, body: parsed.ok ? parsed.value : undefined });
    if (!parsed.ok) throw new ResponseShapeError({ ...label, status, detail: "response body is not JSON" });
    const result = options.schema.safeParse(parsed.value);
    if (result.success) return result.data;
    // Issue paths and messages only: zod does not echo input values, and bodies may hold secrets.
    const issues = result.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; ");
    throw new ResponseShapeError({
      ...label,
      status,
      detail: `response does not match the expected shape: ${issues}`,
      cause: result.error,
    });
  }

  /** `answered`: the status line had arrived, so the service had finished with the request. */
  #transportError(label: RequestLabel, error: unknown, timedOut: boolean, answered: boolean): unknown {
    // Misuse of the client (a bad argument, a closed dispatcher) is a bug, not a network failure to retry.
    const { errors } = undici();
    if (
      error instanceof errors.InvalidArgumentError ||
      error instanceof errors.ClientClosedError ||
      error instanceof errors.ClientDestroyedError
    )
      return error;
    if (timedOut) return new TimeoutError({ ...label, detail: `no complete response within ${this.#timeoutMs} ms`, cause: error });
    const code = typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined;
    // The origin says which service failed when a program talks to several (it holds no credential).
    return new ConnectionError(
      { ...label, detail: `connection to ${this.#origin} failed (${code ?? String(error)})`, cause: error },
      code !== undefined && unsentErrorCodes.has(code),
      answered,
    );
  }
}

function queryString(query: Record<string, QueryValue> | undefined): string {
  if (query === undefined) return "";
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.append(name, String(value));
  const encoded = params.toString();
  return encoded === "" ? "" : `?${encoded}`;
}

/** An empty body parses as `undefined`, so routes that answer with no body can use `z.undefined()`. */
function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === "") return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
