/**
 * The emulator's OpenAPI 3.1 document, generated from the endpoint entries of src/api (the same entries the client
 * calls and the emulator serves, see ../api/endpoint.ts): each entry's method, path, query, body and response become
 * one operation, so the document cannot describe a route other than the one served. Schemas are the entries' zod
 * schemas on their wire side (a `wire(...)` codec's input: the service's snake_case names), through `z.toJSONSchema`
 * in JSON Schema 2020-12, the dialect of OpenAPI 3.1.
 *
 * Routes served by hand and not from an entry (a signed file download, a generation's event stream, the Experiment
 * prompt, this document, `/_emulator/...`) are described by hand below (`handServed`), from the schemas their routes
 * parse and answer with: test/emulator/openapi.test.ts fails when a route the emulator registers is in neither.
 */
import { z } from "zod";
import { Envelope, Guid, PageQuery } from "../api/common";
import { type Endpoint, pathParameters } from "../api/endpoint";
import { ExperimentPrompt, ExperimentPromptResponse } from "../api/experiments";
import { SignedFileQuery } from "../api/files";
import { NumericId } from "../api/fine-tunes";
import { packageManifest } from "../manifest";
import { API_AREAS } from "./areas";
import { ErrorBody } from "./routes/error-handler";

export type JsonSchema = { [keyword: string]: unknown };

/**
 * A zod schema as JSON Schema, on its wire side: `io: "input"` takes a codec's input (the wire's names, see
 * ../api/wire.ts) and a transform's input, which is what travels. A check JSON Schema cannot say (a refinement)
 * is left out: the document is looser there than the emulator, never stricter.
 */
function wireSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    io: "input",
    target: "draft-2020-12",
    unrepresentable: "any",
  }) as JsonSchema;
  // Inline schemas only: a `$defs` of their own would be referred to from the document's root, where it is not.
  if ("$defs" in json) throw new TypeError("a schema of an endpoint entry is recursive or has an id; the OpenAPI document inlines schemas");
  return json;
}

/**
 * A response schema with every object closed (`additionalProperties: false`) that does not say otherwise: a
 * response is encoded by its entry's codec, which keeps the declared fields only, so an extra field on the wire is a
 * defect (a leaked column, a credential) that a conformance check should catch.
 */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== "object") return schema;
  const entries = Object.entries(schema as JsonSchema).map(([keyword, value]) => {
    // `properties` maps names to schemas, `default` and `const` are values: only the schemas in them are closed.
    if (keyword === "properties")
      return [keyword, Object.fromEntries(Object.entries(value as JsonSchema).map(([name, field]) => [name, closed(field)]))];
    if (keyword === "default" || keyword === "const" || keyword === "enum") return [keyword, value];
    return [keyword, closed(value)];
  });
  const json = Object.fromEntries(entries) as JsonSchema;
  if (json.type === "object" && "properties" in json && !("additionalProperties" in json)) json.additionalProperties = false;
  return json;
}

/** A query parameter's schema: a query string has no null, so a nullable one is its other types. */
function queryValueSchema(schema: JsonSchema): JsonSchema {
  const options = schema.anyOf as JsonSchema[] | undefined;
  if (options) {
    const kept = options.filter((option) => option.type !== "null");
    return kept.length === 1 ? { ...kept[0], ...withoutKeys(schema, ["anyOf"]) } : { ...schema, anyOf: kept };
  }
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((type) => type !== "null");
    return { ...schema, type: types.length === 1 ? types[0] : types };
  }
  return schema;
}

const withoutKeys = (object: JsonSchema, keys: string[]): JsonSchema =>
  Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)));

/** The query an entry's route reads: its declared query, and skip/limit for a list (src/emulator/routes/serve.ts parses those). */
function queryShape(entry: Endpoint): Record<string, z.ZodType> {
  return { ...(entry.list ? PageQuery.shape : {}), ...(entry.query?.shape as Record<string, z.ZodType> | undefined) };
}

function parameters(entry: Endpoint): JsonSchema[] {
  const path = pathParameters(entry).map((name) => ({ name, in: "path", required: true, schema: wireSchema(Guid) }));
  const query = Object.entries(queryShape(entry)).map(([name, schema]) => ({
    name,
    in: "query",
    required: !schema.safeParse(undefined).success,
    schema: queryValueSchema(wireSchema(schema)),
  }));
  return [...path, ...query];
}

/** What the route answers with 200: the record, or each item as its list form wraps them. */
function answerSchema(entry: Endpoint): JsonSchema {
  const item = entry.response as z.ZodType;
  const answer = entry.list === "envelope" || entry.list === "unpaged" ? Envelope(item) : entry.list === "bare" ? z.array(item) : item;
  return closed(wireSchema(answer)) as JsonSchema;
}

/** Whether a request may carry a body the server reads: the entry's, or any that a POST, PUT or DELETE is sent with (Fastify parses it). */
const readsBody = (entry: Endpoint) => entry.body !== undefined || entry.method !== "GET";

const ERROR_SCHEMA = { $ref: "#/components/schemas/Error" };
const json = (schema: JsonSchema) => ({ "application/json": { schema } });

/** The error answers every operation may give, by status; `when` says which operations document them. */
const ERROR_RESPONSES: { status: string; name: string; description: string; when: (entry: Endpoint) => boolean }[] = [
  {
    status: "400",
    name: "BadRequest",
    description: "The path, query or body is malformed or invalid: `detail` lists each problem (`loc`, `msg`, `type`) or says it.",
    when: (entry) => readsBody(entry) || pathParameters(entry).length > 0 || Object.keys(queryShape(entry)).length > 0,
  },
  {
    status: "401",
    name: "Unauthorized",
    description: "No bearer API key, or one no workspace holds (`WWW-Authenticate: Bearer`).",
    when: () => true,
  },
  {
    status: "404",
    name: "NotFound",
    description: "A record the path or the body names does not exist in the caller's workspace: `detail` says which.",
    when: (entry) => entry.body !== undefined || pathParameters(entry).length > 0,
  },
  {
    status: "414",
    name: "URITooLong",
    description: "A path parameter is longer than the router takes (100 characters).",
    when: (entry) => pathParameters(entry).length > 0,
  },
  { status: "413", name: "PayloadTooLarge", description: "The body is larger than the emulator accepts.", when: readsBody },
  {
    status: "415",
    name: "UnsupportedMediaType",
    description: "The body is not `application/json`: `detail` names the type sent.",
    when: readsBody,
  },
  {
    status: "429",
    name: "TooManyRequests",
    description: "A workspace allowance is used up (App creation), or the request rate of the API key (`Retry-After`).",
    when: () => true,
  },
];

const errorRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** The operation of one entry. */
function operation(group: string, name: string, entry: Endpoint): JsonSchema {
  const body = entry.body as z.ZodType | undefined;
  const responses: JsonSchema = {
    "200": {
      description:
        entry.shown === false
          ? "The spec does not show this response; this is the emulator's answer (a client must not rely on it)."
          : "Success.",
      content: json(answerSchema(entry)),
    },
  };
  for (const error of ERROR_RESPONSES) if (error.when(entry)) responses[error.status] = errorRef(error.name);
  return {
    operationId: `${group}.${name}`,
    tags: [group],
    parameters: parameters(entry),
    ...(body && {
      requestBody: { required: !body.safeParse(undefined).success, content: json(wireSchema(body)) },
    }),
    responses,
  };
}

const guidParameter = () => ({ name: "guid", in: "path", required: true, schema: wireSchema(Guid) });
const signedQuery = () =>
  Object.entries(SignedFileQuery.shape).map(([name, schema]) => ({
    name,
    in: "query",
    required: true,
    schema: queryValueSchema(wireSchema(schema)),
  }));
/** A signed capability URL's refusals: the signature or the expiry (403), then the record (404). */
const SIGNED_REFUSALS = {
  "400": errorRef("BadRequest"),
  "403": { description: "The signature does not match, or the URL has expired.", content: json(ERROR_SCHEMA) },
  "404": errorRef("NotFound"),
  "414": errorRef("URITooLong"),
};

/** The emulator's own routes, outside `/v1`: each path names the origin as its server (`openApiDocument`). */
const EMULATOR_PREFIX = "/_emulator/";

/** The routes the emulator serves by hand, by path (relative to `/v1`; `/_emulator` ones to the origin) and method. */
function handServed(): Record<string, Record<string, unknown>> {
  const numericId = (what: string) => ({
    get: {
      operationId: `emulator.${what}NumericId`,
      tags: ["emulator"],
      description: `Emulator only: the numeric id of a ${what === "data" ? "Data record" : "ProviderConnection"}, which a fine-tune's create names.`,
      parameters: [guidParameter()],
      responses: {
        "200": { description: "Success.", content: json(closed(wireSchema(NumericId)) as JsonSchema) },
        "400": errorRef("BadRequest"),
        "401": errorRef("Unauthorized"),
        "404": errorRef("NotFound"),
        "414": errorRef("URITooLong"),
        "429": errorRef("TooManyRequests"),
      },
    },
  });
  return {
    "/files/{guid}": {
      get: {
        operationId: "files.download",
        tags: ["files"],
        description: "A file's bytes at the signed URL its upload answered: the query's signature authorises the read, not a key.",
        security: [],
        parameters: [guidParameter(), ...signedQuery()],
        responses: { "200": { description: "The file, as a download.", content: { "*/*": { schema: {} } } }, ...SIGNED_REFUSALS },
      },
    },
    "/generations/{guid}/stream": {
      get: {
        operationId: "generations.stream",
        tags: ["actions"],
        description:
          'A streaming run\'s tokens at the signed URL the run answered: server-sent events, one `{"token": ...}` each, then END_STREAM.',
        security: [],
        parameters: [guidParameter(), ...signedQuery()],
        responses: {
          "200": { description: "The event stream.", content: { "text/event-stream": { schema: { type: "string" } } } },
          ...SIGNED_REFUSALS,
        },
      },
    },
    "/experiments/{guid}/prompt": {
      post: {
        operationId: "experiments.prompt",
        tags: ["experiments"],
        description: "Runs one of the Experiment's two Actions (or the one `force_action` names) as an Action run.",
        parameters: [guidParameter()],
        requestBody: { required: true, content: json(wireSchema(ExperimentPrompt)) },
        responses: {
          "200": {
            description:
              "The spec does not show this response; this is the emulator's answer: a run's, with the Action that served it and its side.",
            content: json(closed(wireSchema(ExperimentPromptResponse)) as JsonSchema),
          },
          ...Object.fromEntries(
            ["400", "401", "404", "413", "414", "415", "429"].map((status) => [
              status,
              errorRef(ERROR_RESPONSES.find((error) => error.status === status)!.name),
            ]),
          ),
        },
      },
    },
    "/openapi.json": {
      get: {
        operationId: "openapi.document",
        tags: ["emulator"],
        description: "This document.",
        security: [],
        responses: { "200": { description: "The emulator's OpenAPI 3.1 document.", content: json({ type: "object" }) } },
      },
    },
    "/_emulator/data/{guid}": numericId("data"),
    "/_emulator/providers/{guid}": numericId("providers"),
  };
}

/** `paths` and the components they refer to: the same for every request, made once. */
let described: { paths: JsonSchema; components: JsonSchema } | undefined;

function describeEndpoints(): { paths: JsonSchema; components: JsonSchema } {
  const paths: Record<string, Record<string, unknown>> = handServed();
  for (const [group, { endpoints }] of Object.entries(API_AREAS)) {
    for (const [name, entry] of Object.entries(endpoints as Record<string, Endpoint>)) {
      const methods = (paths[entry.path] ??= {});
      const method = entry.method.toLowerCase();
      if (methods[method]) throw new TypeError(`${entry.method} ${entry.path} is described twice`);
      methods[method] = operation(group, name, entry);
    }
  }
  const responses = Object.fromEntries(
    ERROR_RESPONSES.map((error) => [
      error.name,
      {
        description: error.description,
        ...(error.status === "401" && { headers: { "WWW-Authenticate": { schema: { type: "string", const: "Bearer" } } } }),
        ...(error.status === "429" && { headers: { "Retry-After": { schema: { type: "string" } } } }),
        content: json(ERROR_SCHEMA),
      },
    ]),
  );
  return {
    paths,
    components: {
      schemas: { Error: closed(wireSchema(ErrorBody)) },
      responses,
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "The API key of a workspace: it selects the workspace." } },
    },
  };
}

/** The document, its server being `apiBase` (the origin plus `/v1`, where every path of it sits). */
export function openApiDocument(apiBase: string): JsonSchema {
  described ??= describeEndpoints();
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "Generation management service (pulumi-gms emulator)",
      version: packageManifest.version,
      description:
        "The routes the emulator serves from the endpoint entries of pulumi-gms, in the wire's names. Generated from those " +
        "entries; where the service's spec does not show a response, the emulator's own answer is described.",
    },
    servers: [{ url: apiBase }],
    security: [{ bearer: [] }],
    paths: Object.fromEntries(
      Object.entries(described.paths).map(([path, item]) => [
        path,
        path.startsWith(EMULATOR_PREFIX)
          ? {
              servers: [{ url: apiBase.replace(/\/v1$/, ""), description: "The emulator's own routes, outside /v1." }],
              ...(item as object),
            }
          : item,
      ]),
    ),
    components: described.components,
  };
}
