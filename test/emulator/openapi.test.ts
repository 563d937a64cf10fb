/**
 * `GET /v1/openapi.json` (issue 30): a valid OpenAPI 3.1 document, served without a key by a started emulator, with
 * one operation per endpoint entry of src/api (found here by reading every module there, not from the generator's
 * own list, so an entry in a new module without an operation fails), and schemas that describe the wire: real answers
 * of the emulator, success and error, validate against them.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Endpoint } from "../../src/api/endpoint";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { registeredRoutes } from "../../src/emulator/server";
import { ACME_KEY, MISSING_GUID, TEST_FIXTURES } from "./harness";

type Document = {
  openapi: string;
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object>; responses: Record<string, { content: Record<string, { schema: object }> }> };
};
type Operation = {
  operationId: string;
  parameters: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
  responses: Record<string, { content?: Record<string, { schema: object }>; $ref?: string }>;
};

/** Every endpoint entry exported by a module of src/api, as `METHOD /path`. */
async function entriesOfApiModules(): Promise<string[]> {
  const folder = join(__dirname, "..", "..", "src", "api");
  const entries: string[] = [];
  for (const file of readdirSync(folder).filter((name) => name.endsWith(".ts"))) {
    const module = (await import(join(folder, file))) as Record<string, unknown>;
    for (const exported of Object.values(module)) {
      if (exported === null || typeof exported !== "object") continue;
      for (const value of Object.values(exported)) {
        const entry = value as Partial<Endpoint> | null;
        if (entry && typeof entry.method === "string" && typeof entry.path === "string" && entry.response instanceof z.ZodType) {
          entries.push(`${entry.method} ${entry.path}`);
        }
      }
    }
  }
  return entries.sort();
}

describe("the emulator's OpenAPI document", () => {
  let emulator: RunningEmulator;
  let document: Document;
  const get = (path: string, apiKey: string | null = ACME_KEY) =>
    fetch(`${emulator.url}${path}`, { headers: apiKey === null ? {} : { authorization: `Bearer ${apiKey}` } });

  beforeAll(async () => {
    emulator = await startEmulator({ fixtures: TEST_FIXTURES });
    const response = await get("/openapi.json", null);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    document = (await response.json()) as Document;
  });
  afterAll(() => emulator?.close());

  it("is a valid OpenAPI 3.1 document whose server is the emulator's /v1", async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(document.servers).toEqual([{ url: emulator.url }]);
  });

  /** Every operation of the document as `METHOD /path` (a path-level `servers` is not a method). */
  const operationsOf = () =>
    Object.entries(document.paths)
      .flatMap(([path, methods]) =>
        Object.keys(methods)
          .filter((key) => key !== "servers")
          .map((method) => `${method.toUpperCase()} ${path}`),
      )
      .sort();

  /** The routes served by hand, which no endpoint entry describes (src/emulator/openapi.ts's handServed). */
  const HAND_SERVED = [
    "GET /files/{guid}",
    "GET /generations/{guid}/stream",
    "POST /experiments/{guid}/prompt",
    "GET /openapi.json",
    "GET /_emulator/data/{guid}",
    "GET /_emulator/providers/{guid}",
  ];

  it("has one operation per endpoint entry of src/api, and one for each route served by hand, and no other", async () => {
    const entries = await entriesOfApiModules();
    expect(entries.length).toBeGreaterThan(90);
    expect(operationsOf()).toEqual([...entries, ...HAND_SERVED].sort());
    const ids = Object.values(document.paths).flatMap((methods) =>
      Object.entries(methods)
        .filter(([key]) => key !== "servers")
        .map(([, operation]) => operation.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("describes every route the emulator registers: a route added without its operation fails here", () => {
    // Fastify's `:name` and the document's `{name}` alike as `{}`; /v1 is the document's server, /_emulator a path's own.
    const shape = (route: string) => route.replace(/^(\w+) \/v1\//, "$1 /").replace(/[:{](\w+)\}?/g, "{}");
    const routes = [...new Set(registeredRoutes(emulator.server).map(shape))].sort();
    expect(routes.length).toBeGreaterThan(100);
    const described = new Set(operationsOf().map(shape));
    expect(routes.filter((route) => !described.has(route))).toEqual([]);
    // The emulator's own routes name their server: the origin, outside /v1.
    expect((document.paths["/_emulator/data/{guid}"] as unknown as { servers: { url: string }[] }).servers[0]!.url).toBe(
      emulator.url.replace(/\/v1$/, ""),
    );
  });

  it("names fields, parameters and the key as the wire does", () => {
    const dataCreate = document.paths["/data"]!.post!.requestBody!.content["application/json"]!.schema.properties!;
    expect(Object.keys(dataCreate)).toEqual(expect.arrayContaining(["action", "full_prompt_sent", "num_input_tokens", "model_provider"]));
    expect(Object.keys(dataCreate)).not.toContain("fullPromptSent");
    expect(document.paths["/sessions"]!.get!.parameters.map((parameter) => `${parameter.in} ${parameter.name}`)).toEqual([
      "query skip",
      "query limit",
      "query extUserId",
    ]);
    expect(document.paths["/apps/{guid}"]!.put!.parameters.map((parameter) => `${parameter.in} ${parameter.name}`)).toEqual(["path guid"]);
    expect((document as unknown as { security: unknown }).security).toEqual([{ bearer: [] }]);
  });

  describe("describes what the emulator answers", () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    /** Compiles a schema of the document, its `#/components/...` references resolving against the components placed beside it. */
    const compile = (schema: object) => ajv.compile({ ...schema, components: document.components });
    /** The 200 schema of an operation, or the schema its error response refers to. */
    const schemaOf = (path: string, method: string, status: string): object => {
      const answer = document.paths[path]![method]!.responses[status]!;
      if (answer.$ref) return document.components.responses[answer.$ref.split("/").at(-1)!]!.content["application/json"]!.schema;
      return answer.content!["application/json"]!.schema;
    };
    const check = async (response: Response, schema: object) => {
      const body = (await response.json()) as { detail: string & { loc: string[] }[] };
      const validate = compile(schema);
      expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
      return body;
    };

    it("a list envelope, a record and a bare array", async () => {
      await check(await get("/apps"), schemaOf("/apps", "get", "200"));
      const apps = (await (await get("/apps")).json()) as { data: { guid: string }[] };
      await check(await get(`/apps/${apps.data[0]!.guid}`), schemaOf("/apps/{guid}", "get", "200"));
      await check(await get(`/apps/${apps.data[0]!.guid}/actions`), schemaOf("/apps/{guid}/actions", "get", "200"));
    });

    it("an error: 404, 400 with validation issues, 401", async () => {
      const missing = await check(await get(`/apps/${MISSING_GUID}`), schemaOf("/apps/{guid}", "get", "404"));
      expect(missing.detail).toMatch(/not found/i);
      const malformed = await check(await get("/apps/not-a-guid"), schemaOf("/apps/{guid}", "get", "400"));
      expect(malformed.detail[0]!.loc).toEqual(["path", "guid"]);
      await check(await get("/apps", null), schemaOf("/apps", "get", "401"));
    });

    it("and not a field more: an extra field in a record fails the schema", () => {
      const validate = compile(schemaOf("/apps/{guid}", "get", "200"));
      const app = {
        guid: MISSING_GUID,
        name: "A",
        description: null,
        slug: "a",
        created_at: "",
        updated_at: "",
        created_by_id: "u",
        last_updated_by_id: null,
      };
      expect(validate(app)).toBe(true);
      expect(validate({ ...app, key: "a credential" })).toBe(false);
    });
  });
});
