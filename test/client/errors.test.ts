import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  GmsClient,
  GmsError,
  LimitExceededError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  ValidationError,
  errorFromResponse,
  parseRetryAfter,
  path,
} from "../../src/client";
import { API_KEY, closedPort, destroyAfterReceiving, json, scriptedClients } from "./scripted-server";

const GUID = "0b6c1f7e-2a8d-4c39-9e51-7d2f4a6b8c90";

const { connect, track } = scriptedClients();

/** One request with retries off, returning what it threw. */
async function failingRequest(status: number, body: unknown, headers: Record<string, string> = {}): Promise<GmsError> {
  const { client } = await connect(json(status, body, headers), { maxRetries: 0 });
  const error = await client
    .request({ method: "PUT", path: path`/apps/${GUID}`, body: { name: "x" }, schema: z.unknown() })
    .catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(GmsError);
  return error as GmsError;
}

function expectNoCredential(error: Error): void {
  for (const rendered of [
    error.message,
    JSON.stringify(error),
    inspect(error, { depth: Infinity, showHidden: true }),
    String(error.stack),
  ]) {
    expect(rendered).not.toContain(API_KEY);
    expect(rendered).not.toContain("Bearer");
  }
}

describe("errors built from a response", () => {
  const cases = [
    { status: 400, type: ValidationError, name: "ValidationError", code: "validation" },
    { status: 422, type: ValidationError, name: "ValidationError", code: "validation" },
    { status: 401, type: AuthenticationError, name: "AuthenticationError", code: "authentication" },
    { status: 403, type: AuthenticationError, name: "AuthenticationError", code: "authentication" },
    { status: 404, type: NotFoundError, name: "NotFoundError", code: "not_found" },
    { status: 409, type: ConflictError, name: "ConflictError", code: "conflict" },
    { status: 429, type: LimitExceededError, name: "LimitExceededError", code: "limit_exceeded" },
    { status: 500, type: ServerError, name: "ServerError", code: "server" },
    { status: 503, type: ServerError, name: "ServerError", code: "server" },
    { status: 418, type: GmsError, name: "GmsError", code: "http_error" },
  ];

  it.each(cases)("maps $status with a string detail to $name", async ({ status, type, name, code }) => {
    const error = await failingRequest(status, { detail: "App not found" }, { "x-request-id": "req-123" });

    expect(error).toBeInstanceOf(type);
    expect(error).toMatchObject({
      name,
      code,
      status,
      detail: "App not found",
      method: "PUT",
      path: `/apps/${GUID}`,
      requestId: "req-123",
    });
    expect(error.message).toBe(`PUT /apps/${GUID}: ${status} App not found`);
    expectNoCredential(error);
  });

  it("renders a FastAPI validation list by location and message, never its input values", async () => {
    const detail = [
      { loc: ["body", "key"], msg: "String should have at most 10 characters", type: "string_too_long", input: API_KEY },
      { loc: ["query", "limit", 0], msg: "Input should be a valid integer", type: "int_parsing", input: "abc" },
    ];
    const error = await failingRequest(422, { detail });

    expect(error).toBeInstanceOf(ValidationError);
    expect(error.detail).toBe("body.key: String should have at most 10 characters; query.limit.0: Input should be a valid integer");
    expect(error.requestId).toBeUndefined();
    expect(error.message).not.toContain("abc");
    expectNoCredential(error);
  });

  it("falls back to the status text when the body has no usable detail", async () => {
    expect((await failingRequest(502, "<html>bad gateway</html>")).detail).toBe("Bad Gateway");
    expect((await failingRequest(500, { detail: [{ unexpected: true }] })).detail).toBe("Internal Server Error");
  });

  it("carries Retry-After as milliseconds", async () => {
    const error = await failingRequest(429, { detail: "slow down" }, { "retry-after": "7" });
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfterMs).toBe(7_000);
  });

  it("reads request-id when x-request-id is absent, and an HTTP-date Retry-After against the clock", () => {
    const now = Date.parse("2025-03-01T12:00:00Z");
    const error = errorFromResponse({
      method: "GET",
      path: "/apps",
      status: 503,
      body: undefined,
      headers: { "request-id": "r-9", "retry-after": "Sat, 01 Mar 2025 12:00:05 GMT" },
      now,
    });
    expect(error).toMatchObject({ requestId: "r-9", retryAfterMs: 5_000, detail: "Service Unavailable" });
  });

  it("parses Retry-After forms and ignores nonsense", () => {
    const now = Date.parse("2025-03-01T12:00:00Z");
    expect(parseRetryAfter("0", now)).toBe(0);
    expect(parseRetryAfter("2", now)).toBe(2_000);
    expect(parseRetryAfter("Sat, 01 Mar 2025 11:59:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("-3", now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe("connection errors", () => {
  it("have no status, keep their cause and mark a refused connect as never sent", async () => {
    const port = await closedPort();
    const client = track(new GmsClient({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: API_KEY, maxRetries: 0 }));
    const error = await client.request({ method: "GET", path: path`/apps`, schema: z.unknown() }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({
      name: "ConnectionError",
      code: "connection",
      status: undefined,
      method: "GET",
      path: "/apps",
      provablyUnsent: true,
    });
    expect((error as Error).message).toBe(`GET /apps: connection to http://127.0.0.1:${port} failed (ECONNREFUSED)`);
    expect((error as Error).cause).toMatchObject({ code: "ECONNREFUSED" });
    expectNoCredential(error as Error);
  });

  it("mark a connection cut after the request arrived as possibly sent", async () => {
    const { client } = await connect(destroyAfterReceiving, { maxRetries: 0 });
    const error = await client
      .request({ method: "POST", path: path`/apps`, body: { name: "x" }, schema: z.unknown() })
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ provablyUnsent: false, status: undefined });
    expectNoCredential(error as Error);
  });
});
