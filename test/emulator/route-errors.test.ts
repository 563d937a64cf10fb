/**
 * What a request that reaches no route, or a body that is not JSON, is told (issue 22): an unknown route
 * names its cause (a missing `/v1` prefix, else the nearest known route) and stays a 404 with a `detail`
 * string; a known path under another method is a 405 with `Allow`; malformed JSON names where it breaks and
 * what was expected, never quoting the body.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findJsonSyntaxError } from "../../src/emulator/routes/json-body";
import { RouteTable } from "../../src/emulator/routes/error-handler";
import { ACME_KEY, MISSING_GUID, createTestEmulator } from "./harness";

describe("unknown routes and unsupported methods", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  beforeAll(() => {
    emulator = createTestEmulator();
  });
  afterAll(() => emulator.close());

  it("answers a known path under an unsupported method 405, with Allow listing the path's methods", async () => {
    for (const [method, path, allow] of [
      ["PATCH", "/v1/apps", "GET, HEAD, POST"],
      ["DELETE", "/v1/actions", "POST"],
      ["DELETE", "/v1/actions/", "POST"],
      ["POST", `/v1/apps/${MISSING_GUID}`, "GET, HEAD, PUT, DELETE"],
      ["GET", "/v1/workflows", "POST"],
      ["PUT", `/v1/contexts/${MISSING_GUID}/documents`, "GET, HEAD, POST, DELETE"],
      ["POST", `/v1/workflows/${MISSING_GUID}/result/${MISSING_GUID}`, "GET, HEAD"],
    ] as const) {
      for (const apiKey of [ACME_KEY, null]) {
        const reply = await emulator.call(method, path, undefined, { apiKey });
        expect(reply.status, `${method} ${path}`).toBe(405);
        expect(reply.headers.allow, `${method} ${path}`).toBe(allow);
        expect(reply.body).toEqual({ detail: `Method Not Allowed: ${path} allows ${allow}, not ${method}` });
      }
    }
    // Every method Allow names is served there: none of them answers 405 or an unknown route's 404.
    for (const method of ["GET", "HEAD", "POST"]) {
      const reply = await emulator.call(method, "/v1/apps", method === "POST" ? { name: "Allowed" } : undefined);
      expect(reply.status, method).toBe(200);
    }
  });

  it("takes a path whose GUID segment is not a UUID for no route (not a 405): /finetune/process is an older path", async () => {
    const reply = await emulator.call("POST", "/v1/finetune/process/");
    expect(reply.status).toBe(404);
    expect(reply.headers.allow).toBeUndefined();
    expect(reply.body.detail).toMatch(
      /^Not Found: no route matches POST \/v1\/finetune\/process\/; nearest known route: \/v1\/finetune\/\{guid\}/,
    );
  });

  it("says when a path lacks the /v1 prefix, and what the path would be with it", async () => {
    for (const [method, path, detail] of [
      ["GET", "/apps", "Not Found: /apps does not start with /v1, under which every route sits; try /v1/apps"],
      ["POST", "/apps/", "Not Found: /apps/ does not start with /v1, under which every route sits; try /v1/apps"],
      [
        "GET",
        `/apps/${MISSING_GUID}/actions?limit=5`,
        `Not Found: /apps/${MISSING_GUID}/actions does not start with /v1, under which every route sits; try /v1/apps/${MISSING_GUID}/actions`,
      ],
      [
        "GET",
        "/api/v1/workspaces/current",
        "Not Found: /api/v1/workspaces/current does not start with /v1, under which every route sits; try /v1/workspaces/current",
      ],
      ["PUT", "/apps", "Not Found: /apps does not start with /v1, under which every route sits; /v1/apps exists, allowing GET, HEAD, POST"],
      [
        "GET",
        "/workspace/current",
        "Not Found: /workspace/current does not start with /v1, under which every route sits, and no route matches /v1/workspace/current either; " +
          "nearest known route: /v1/workspaces/current (GET, HEAD)",
      ],
    ] as const) {
      const reply = await emulator.call(method, path, undefined, { apiKey: null });
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toEqual({ detail });
    }
  });

  it("suggests the nearest known route for an unknown path under /v1", async () => {
    for (const [method, path, nearest] of [
      ["GET", "/v1/app", "/v1/apps (GET, HEAD, POST)"],
      ["GET", "/v1/workspace/current", "/v1/workspaces/current (GET, HEAD)"],
      ["GET", `/v1/apps/${MISSING_GUID}/action`, "/v1/apps/{guid}/actions (GET, HEAD)"],
      ["GET", `/v1/finetunes/${MISSING_GUID}/status`, "/v1/finetune/{guid}/status (GET, HEAD)"],
      ["POST", "/v1/context_source/process_batch", "/v1/context_sources/process_batch (POST)"],
      ["GET", `/v1/context/${MISSING_GUID}/documents`, "/v1/contexts/{contextGuid}/documents (GET, HEAD, POST, DELETE)"],
    ] as const) {
      const reply = await emulator.call(method, path);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toEqual({ detail: `Not Found: no route matches ${method} ${path}; nearest known route: ${nearest}` });
    }
  });

  it("never repeats the query string, and shortens a very long path", async () => {
    const reply = await emulator.call("GET", "/v1/app?signature=query-secret-5e2a");
    expect(reply.body.detail).not.toContain("query-secret");
    const long = await emulator.call("GET", `/v1/${"x".repeat(5000)}`);
    expect(long.status).toBe(404);
    expect(long.body.detail.length).toBeLessThan(400);
  });

  it("keeps the spec's 404s of missing records and the generic Not Found of Context Source reads apart from unknown routes", async () => {
    expect((await emulator.call("GET", `/v1/apps/${MISSING_GUID}`)).body).toEqual({ detail: "App not found" });
  });
});

describe("RouteTable", () => {
  const table = new RouteTable();
  table.add("/v1/items", ["GET", "POST"]);
  table.add("/v1/items/:guid", "GET");
  table.add("/v1/items/:guid", "DELETE");
  table.add("/v1/items/by-name/:name", "GET");

  it("collects the methods of every pattern a path fits (a :...guid parameter only takes a UUID)", () => {
    expect(table.methodsFor("/v1/items/")).toEqual(["GET", "POST"]);
    expect(table.methodsFor(`/v1/items/${MISSING_GUID}`)).toEqual(["GET", "DELETE"]);
    expect(table.methodsFor("/v1/items/not-a-uuid")).toEqual([]);
    expect(table.methodsFor("/v1/items/by-name/anything")).toEqual(["GET"]);
  });

  it("explains a request no route took", () => {
    expect(table.explain("PUT", "/v1/items")).toEqual({
      status: 405,
      detail: "Method Not Allowed: /v1/items allows GET, POST, not PUT",
      allow: ["GET", "POST"],
    });
    expect(table.explain("GET", "/v1/itemz")).toEqual({
      status: 404,
      detail: "Not Found: no route matches GET /v1/itemz; nearest known route: /v1/items (GET, POST)",
    });
    // Nothing near: no guess.
    expect(table.explain("GET", "/v1/a/b/c/d/e/f")).toEqual({ status: 404, detail: "Not Found: no route matches GET /v1/a/b/c/d/e/f" });
  });
});

describe("malformed JSON bodies", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  beforeAll(() => {
    emulator = createTestEmulator();
  });
  afterAll(() => emulator.close());

  const send = (payload: string) =>
    emulator.server.inject({
      method: "POST",
      url: "/v1/apps",
      headers: { authorization: `Bearer ${ACME_KEY}`, "content-type": "application/json" },
      payload,
    });

  it("names the line, column and offset where the body breaks and what was expected there", async () => {
    for (const [body, detail] of [
      ["{name: Support}", "at line 1, column 2 (offset 1): expected a property name in double quotes or '}', found a letter"],
      ['{"name": "Support",}', "at line 1, column 20 (offset 19): expected a property name in double quotes, found '}'"],
      ['{"name": "Support"', "at line 1, column 19 (offset 18): expected ',' or '}' after a property value, found end of body"],
      ['{"name" "Support"}', "at line 1, column 9 (offset 8): expected ':' after a property name, found '\"'"],
      ['{\n  "name": "Support",\n  "description": nope\n}', "at line 3, column 18 (offset 40): expected the literal null, found a letter"],
      [
        '{"name": "Sup\nport"}',
        "at line 1, column 14 (offset 13): expected a closing '\"' of the string (control characters must be escaped), found a line break",
      ],
      [
        '{"name": "a\\qb"}',
        'at line 1, column 13 (offset 12): expected an escape (\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX), found a letter',
      ],
      ['{"name": 01}', "at line 1, column 11 (offset 10): expected ',' or '}' after a property value, found a digit"],
      ['{"name": "x"} trailing', "at line 1, column 15 (offset 14): expected end of body after the JSON value, found a letter"],
      [
        "   ",
        "at line 1, column 4 (offset 3): expected a JSON value (object, array, string, number, true, false or null), found end of body",
      ],
    ] as const) {
      const reply = await send(body);
      expect(reply.statusCode, body).toBe(400);
      expect(reply.json(), body).toEqual({ detail: `Malformed JSON body ${detail}` });
    }
    expect((await emulator.call("GET", "/v1/apps")).body.total_count).toBe(2);
  });

  it("never quotes the body: a secret where the JSON breaks stays out of the answer", async () => {
    const reply = await send('{"name": "x", "key": sk-live-SECRET-1234}');
    expect(reply.statusCode).toBe(400);
    expect(reply.body).not.toMatch(/sk-live|SECRET|1234/);
    expect(reply.json().detail).toBe(
      "Malformed JSON body at line 1, column 22 (offset 21): expected a JSON value (object, array, string, number, true, false or null), found a letter",
    );
  });

  it("finds an error exactly when JSON.parse does, over valid bodies and many broken ones", () => {
    const valid = [
      "{}",
      "[]",
      '"x"',
      "0",
      "-0.5e+10",
      "true",
      " null ",
      '{"a":[1,2,{"b":null}],"c":"\\u00e9\\n\\"","d":-1.25E-3,"e":false}',
      '[[[[]]],{"x":{}}]',
      '{"k":"tab\\there"}',
    ];
    for (const text of valid) expect(findJsonSyntaxError(text), text).toBeUndefined();
    // Every truncation and every one-character change of the valid bodies: the scanner agrees with JSON.parse.
    const replacements = ["", "{", "}", "[", "]", ":", ",", '"', "\\", "x", "0", "-", ".", "e", " ", "\n", "\u0001"];
    let broken = 0;
    for (const text of valid) {
      for (let i = 0; i <= text.length; i++) {
        for (const variant of [text.slice(0, i), ...replacements.map((r) => text.slice(0, i) + r + text.slice(i + 1))]) {
          let parses = true;
          try {
            JSON.parse(variant);
          } catch {
            parses = false;
          }
          const problem = findJsonSyntaxError(variant);
          expect(problem === undefined, JSON.stringify(variant)).toBe(parses);
          if (problem) {
            broken++;
            expect(problem.offset).toBeGreaterThanOrEqual(0);
            expect(problem.offset).toBeLessThanOrEqual(variant.length);
          }
        }
      }
    }
    expect(broken).toBeGreaterThan(500);
  });
});
