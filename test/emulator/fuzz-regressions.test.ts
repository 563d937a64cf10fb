/**
 * What `npm run fuzz` (Schemathesis against the emulator's OpenAPI document, scripts/fuzz.mts) found, each kept as
 * a plain test: the request it sent, the answer it must now get.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorBody, unsupportedMediaType } from "../../src/emulator/routes/error-handler";
import { MISSING_GUID, createTestEmulator } from "./harness";

describe("found by fuzzing", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  beforeAll(() => {
    emulator = createTestEmulator();
  });
  afterAll(() => emulator.close());

  // Schemathesis sent `DELETE /v1/apps/{guid}` (and every POST, PUT and DELETE) with `Content-Type: multipart/form-data`:
  // the answer was 415 `{"detail":"Unsupported Media Type"}`, the reason phrase alone, which names neither the type
  // sent nor the one taken.
  it("a body of another media type is a 415 naming the type sent and the one taken", async () => {
    for (const [method, path, contentType, sent] of [
      ["DELETE", `/v1/apps/${MISSING_GUID}`, "multipart/form-data; boundary=x", "multipart/form-data"],
      ["POST", "/v1/apps", "application/xml", "application/xml"],
      ["PUT", `/v1/apps/${MISSING_GUID}`, "application/x-www-form-urlencoded", "application/x-www-form-urlencoded"],
      ["POST", "/v1/apps", "not a type\u0001", "a malformed Content-Type"],
    ] as const) {
      const reply = await emulator.call(method, path, "name=x", { headers: { "content-type": contentType } });
      expect(reply.status, `${method} ${path} ${contentType}`).toBe(415);
      expect(reply.body).toEqual({ detail: `Unsupported Media Type: a request body must be application/json, not ${sent}` });
      expect(ErrorBody.safeParse(reply.body).success).toBe(true);
    }
  });

  it("a 415 never repeats a Content-Type that is not a media type, nor a long one", () => {
    expect(unsupportedMediaType(undefined)).toMatch(/not a body without a Content-Type$/);
    expect(unsupportedMediaType(`text/${"x".repeat(500)}`)).toMatch(/not a malformed Content-Type$/);
    expect(unsupportedMediaType("Bearer gms_secret/value with spaces")).not.toContain("gms_secret");
  });
});

describe("found by fuzzing: what the router refuses", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  beforeAll(() => {
    emulator = createTestEmulator();
  });
  afterAll(() => emulator.close());

  // Schemathesis sent `GET /v1/feedback/{guid}` with a 150-character parameter: the router answered 414 with Fastify's
  // own body `{error, code, message, statusCode}`, no `detail` (and 414 was not in the document).
  it("a path parameter over the router's limit is a 414 with a detail", async () => {
    const path = `/v1/feedback/${"a".repeat(150)}`;
    const reply = await emulator.call("GET", path);
    expect(reply.status).toBe(414);
    expect(reply.body).toEqual({ detail: `URI Too Long: a path parameter of ${path} is longer than 100 characters` });
  });

  it("a path whose percent-encoding does not decode is a 400 with a detail", async () => {
    const reply = await emulator.call("GET", "/v1/apps/%E0%A4%A");
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ detail: "Bad Request: /v1/apps/%E0%A4%A is not a valid URL (a percent-encoding in it does not decode)" });
  });
});
