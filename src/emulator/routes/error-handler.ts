import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { StoreError } from "../store/errors";
import { RequestValidationError } from "./wire";
import { MalformedJsonError } from "./json-body";

/** Receives one entry per 500: see {@link serverErrorEntry}. */
export type ErrorLog = (entry: string) => void;

export const logToStderr: ErrorLog = (entry) => {
  process.stderr.write(entry);
};

/** One problem of a request that failed validation, as FastAPI words it: where (`loc`), what (`msg`), its kind (`type`). */
export const ValidationIssue = z.object({
  loc: z.array(z.string()).min(1),
  msg: z.string().min(1),
  type: z.string().min(1),
});

/**
 * What every 4xx and 5xx answers: `detail`, a sentence naming the problem, or the validation issues. Never empty,
 * so that a caller always learns what is wrong (the emulator's OpenAPI document holds it to that).
 */
export const ErrorBody = z.object({ detail: z.union([z.string().min(1), z.array(ValidationIssue).min(1)]) });
export type ErrorBody = z.infer<typeof ErrorBody>;

/**
 * The one place that turns errors into responses: domain errors carry their status and text, request
 * validation answers 400 with FastAPI-style `detail` entries, framework errors keep their status.
 * Every body is `{"detail": ...}`. Every 500 is a bug of the emulator and goes to `logError`.
 */
export function installErrorHandler(app: FastifyInstance, logError: ErrorLog = logToStderr): void {
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    if (error instanceof StoreError) {
      return reply.status(error.status).send({ detail: error.detail });
    }
    if (error instanceof RequestValidationError) {
      const detail = error.issues.map((issue) => ({
        loc: [error.location, ...issue.path.map(String)],
        // A field left out reads as FastAPI words it.
        ...(issue.code === "invalid_type" && issue.message.endsWith("received undefined")
          ? { msg: "Field required", type: "missing" }
          : { msg: issue.message, type: issue.code }),
      }));
      return reply.status(400).send({ detail });
    }
    const framework = error as FastifyError;
    if (framework.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      return reply.status(413).send({ detail: "Request body is too large" });
    }
    if (framework.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
      return reply.status(415).send({ detail: unsupportedMediaType(request.headers["content-type"]) });
    }
    if (error instanceof MalformedJsonError) {
      return reply.status(400).send({ detail: error.message });
    }
    if (
      framework.code === "FST_ERR_CTP_INVALID_JSON_BODY" ||
      framework.code === "FST_ERR_CTP_EMPTY_JSON_BODY" ||
      error instanceof SyntaxError
    ) {
      return reply.status(400).send({ detail: "Malformed JSON body" });
    }
    if (framework.statusCode && framework.statusCode >= 400 && framework.statusCode < 500) {
      return reply.status(framework.statusCode).send({ detail: framework.message });
    }
    logError(serverErrorEntry(request, error));
    return reply.status(500).send({ detail: "Internal Server Error" });
  });

  const routes = new RouteTable();
  app.addHook("onRoute", (route) => routes.add(route.url, route.method));
  app.setNotFoundHandler((request, reply) => {
    const answer = routes.explain(request.method, request.url.split("?")[0]!);
    if (answer.allow) reply.header("allow", answer.allow.join(", "));
    return reply.status(answer.status).send({ detail: answer.detail });
  });
}

/**
 * What a 415 says: that a body must be JSON, and which type was sent (its essence, when it reads as a media type,
 * since the header is the client's text), so that `Unsupported Media Type` alone never leaves the caller guessing.
 */
export function unsupportedMediaType(contentType: string | undefined): string {
  const essence = contentType?.split(";")[0]!.trim().toLowerCase() ?? "";
  const sent =
    essence === ""
      ? "a body without a Content-Type"
      : /^[\w.+-]{1,64}\/[\w.+-]{1,64}$/.test(essence)
        ? essence
        : "a malformed Content-Type";
  return `Unsupported Media Type: a request body must be application/json, not ${sent}`;
}

/**
 * Fastify's `frameworkErrors`: what the router refuses before any route or hook runs, answered as every error is,
 * `{detail}` naming the problem, in place of Fastify's own `{error, code, message, statusCode}` body. Fuzzing found
 * both: a path parameter over the router's length limit (414) and a path whose percent-encoding does not decode (400).
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = echo(request.url.split("?")[0]!);
  if (error.code === "FST_ERR_MAX_PARAM_LENGTH") {
    reply.status(414).send({ detail: `URI Too Long: a path parameter of ${path} is longer than ${MAX_PARAM_LENGTH} characters` });
  } else if (error.code === "FST_ERR_BAD_URL") {
    reply.status(400).send({ detail: `Bad Request: ${path} is not a valid URL (a percent-encoding in it does not decode)` });
  } else {
    reply.status(error.statusCode ?? 400).send({ detail: `${error.message} (${error.code})` });
  }
}

/** The longest path parameter Fastify's router takes (its default); a GUID has 36 characters. */
const MAX_PARAM_LENGTH = 100;

/** The prefix every route of the spec sits under (spec, Versioning 1). */
const API_PREFIX = "v1";
/** How much of a requested path an answer repeats. */
const MAX_ECHOED_PATH = 200;

interface KnownRoute {
  /** As registered, e.g. `/v1/apps/:guid`. */
  url: string;
  segments: string[];
  methods: Set<string>;
}

/**
 * The routes the server has (fed by `onRoute`), to explain a request none of them took: a path that
 * exists under other methods is a 405 with `Allow`; a path without the `/v1` prefix says so and what the
 * path would be with it; any other path names the nearest known route.
 */
export class RouteTable {
  private readonly routes = new Map<string, KnownRoute>();

  add(url: string, method: string | string[]): void {
    const key = url.length > 1 ? url.replace(/\/+$/, "") : url;
    let route = this.routes.get(key);
    if (!route) {
      route = { url: key, segments: splitPath(key), methods: new Set() };
      this.routes.set(key, route);
    }
    for (const one of [method].flat()) route.methods.add(one.toUpperCase());
  }

  /** The methods of every route whose pattern matches `path`, in a stable order. */
  methodsFor(path: string): string[] {
    const segments = splitPath(path);
    const methods = new Set<string>();
    for (const route of this.routes.values()) if (matches(route.segments, segments)) for (const m of route.methods) methods.add(m);
    return sortMethods([...methods]);
  }

  /** Status, detail and (for a 405) the Allow list for a request no route took. */
  explain(method: string, rawPath: string): { status: number; detail: string; allow?: string[] } {
    const path = echo(rawPath);
    const allow = this.methodsFor(rawPath);
    if (allow.length > 0 && !allow.includes(method)) {
      return { status: 405, detail: `Method Not Allowed: ${path} allows ${allow.join(", ")}, not ${method}`, allow };
    }
    if (allow.length > 0) return { status: 404, detail: "Not Found" };
    const segments = splitPath(rawPath);
    if (segments[0] !== API_PREFIX && segments[0] !== "_emulator") {
      // The path from a later `v1` segment on (`/api/v1/apps`), else the path under `/v1`.
      const at = segments.indexOf(API_PREFIX);
      const candidate = `/${(at > 0 ? segments.slice(at) : [API_PREFIX, ...segments]).join("/")}`;
      const candidateMethods = this.methodsFor(candidate);
      const prefix = `Not Found: ${path} does not start with /${API_PREFIX}, under which every route sits`;
      if (candidateMethods.includes(method)) return { status: 404, detail: `${prefix}; try ${echo(candidate)}` };
      if (candidateMethods.length > 0) {
        return { status: 404, detail: `${prefix}; ${echo(candidate)} exists, allowing ${candidateMethods.join(", ")}` };
      }
      return { status: 404, detail: `${prefix}, and no route matches ${echo(candidate)} either${this.nearest(candidate, method)}` };
    }
    return { status: 404, detail: `Not Found: no route matches ${method} ${path}${this.nearest(rawPath, method)}` };
  }

  /** `; nearest known route: /v1/apps/{guid} (GET, HEAD, PUT, DELETE)`, or nothing when no route is near. */
  private nearest(path: string, method: string): string {
    const segments = splitPath(path);
    let best: { route: KnownRoute; cost: number } | undefined;
    for (const route of this.routes.values()) {
      // A route with the request's method wins a tie.
      const cost = segmentDistance(route.segments, segments) + (route.methods.has(method) ? 0 : 0.01);
      if (!best || cost < best.cost) best = { route, cost };
    }
    // Farther than half of the longer path's segments: a guess, not a suggestion.
    if (!best || best.cost > Math.max(best.route.segments.length, segments.length) / 2) return "";
    const shown = `/${best.route.segments.map((segment) => (segment.startsWith(":") ? `{${segment.slice(1)}}` : segment)).join("/")}`;
    return `; nearest known route: ${shown} (${sortMethods([...best.route.methods]).join(", ")})`;
  }
}

const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const sortMethods = (methods: string[]) =>
  methods.sort((a, b) => (METHOD_ORDER.indexOf(a) + 1 || 99) - (METHOD_ORDER.indexOf(b) + 1 || 99) || a.localeCompare(b));

/** The path as an answer may repeat it: never the query string (a signature), at most {@link MAX_ECHOED_PATH} characters. */
const echo = (path: string) => (path.length > MAX_ECHOED_PATH ? `${path.slice(0, MAX_ECHOED_PATH)}...` : path);

const splitPath = (path: string) => path.split("/").filter((segment) => segment !== "");

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether a concrete path fits a registered pattern: a literal matches itself, `*` the rest, a `:...Guid`
 * parameter a UUID (`/finetune/process` is no fine-tune's path, though the router would try it as one), any
 * other parameter any segment.
 */
function matches(pattern: string[], path: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const segment = pattern[i]!;
    if (segment === "*") return true;
    if (i >= path.length) return false;
    if (!segment.startsWith(":")) {
      if (segment !== path[i]) return false;
    } else if (/guid$/i.test(segment) && !UUID.test(path[i]!)) {
      return false;
    }
  }
  return pattern.length === path.length;
}

/**
 * Edit distance over segments: inserting or dropping a segment costs 1, replacing a literal segment costs
 * its character distance relative to the longer one (0 to 1); a `:name` segment takes any segment for 0.2, so
 * that an exact literal is nearer than a parameter.
 */
function segmentDistance(pattern: string[], path: string[]): number {
  const previous = Array.from({ length: path.length + 1 }, (_, j) => j);
  for (let i = 1; i <= pattern.length; i++) {
    const current = [i];
    for (let j = 1; j <= path.length; j++) {
      const segment = pattern[i - 1]!;
      const substitute = segment.startsWith(":") || segment === "*" ? 0.2 : characterDistance(segment, path[j - 1]!);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + substitute);
    }
    previous.splice(0, previous.length, ...current);
  }
  return previous[path.length]!;
}

/** Levenshtein distance of two segments over the longer length: 0 for equal, 1 for nothing in common. */
function characterDistance(a: string, b: string): number {
  if (a === b) return 0;
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let row = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    row = next;
  }
  return row[y.length]! / Math.max(x.length, y.length, 1);
}

/**
 * `500 METHOD /path Name: message` on one line, then the stack frames. Never headers, bodies or the
 * query string: they carry API keys, provider credentials and file URL signatures.
 */
export function serverErrorEntry(request: Pick<FastifyRequest, "method" | "url">, error: unknown): string {
  const path = request.url.split("?")[0]!;
  const name = error instanceof Error ? error.name : typeof error;
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
  // Only the "    at ..." lines: the stack's first lines repeat the message.
  const frames = error instanceof Error && error.stack ? error.stack.split("\n").filter((line) => /^\s+at /.test(line)) : [];
  return [`500 ${request.method} ${path} ${name}: ${message}`, ...frames].join("\n") + "\n";
}
