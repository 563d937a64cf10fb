import Fastify, { type FastifyInstance } from "fastify";
import type { Store } from "./store";
import type { Caller } from "./store/records";
import { type ErrorLog, answerFrameworkError, installErrorHandler } from "./routes/error-handler";
import { installJsonBodyParser } from "./routes/json-body";
import { originResolver } from "./routes/origin";
import { routeModules } from "./routes";
import { emulatorControlRoutes } from "./routes/fine-tunes";
import { type FaultSpec, installFaults } from "./faults";

declare module "fastify" {
  interface FastifyRequest {
    caller: Caller;
  }
  interface FastifyContextConfig {
    /** Routes that authenticate by other means (signed file URLs) skip the bearer check. */
    public?: boolean;
  }
}

export interface ServerOptions {
  /** Largest accepted request body in bytes (413 past it). Default 10 MiB: uploads travel as base64. */
  bodyLimit?: number;
  /** Log one line per request (method, path, status, time); never headers or bodies. */
  logRequests?: boolean;
  /** Observes every answered request (tests count API calls per Pulumi operation with it). */
  onRequestComplete?: (entry: RequestLogEntry) => void;
  /**
   * Where clients reach the emulator, e.g. `https://gms.example.test` or `http://proxy:8080/gms` (without
   * `/v1`): the start of every absolute URL it hands out (signed file URLs, Workflow result URLs). Default:
   * the address it listens on (a wildcard address names loopback); the request's Host header is never used.
   */
  publicUrl?: string;
  /**
   * Receives every 500 as `500 METHOD /path Name: message` plus the stack frames; never headers, bodies
   * or query strings. Default: written to stderr.
   */
  logError?: ErrorLog;
  /** Seeded fault injection (`seed=7,error=0.05,...` or a FaultSpec); off without it, switchable through `app.faults`. */
  faults?: FaultSpec | string;
}

export interface RequestLogEntry {
  method: string;
  /** The path without the query string. */
  path: string;
  status: number;
  durationMs: number;
}

export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

/** Every route a server registered, as `METHOD /path` with Fastify's `:param`s (HEAD, which Fastify adds to each GET, left out). */
const registered = new WeakMap<FastifyInstance, string[]>();
export const registeredRoutes = (app: FastifyInstance): readonly string[] => registered.get(app) ?? [];

/** Builds the HTTP layer over a store: every route under `/v1` (emulator-only ones under `/_emulator`), bearer auth, one error handler. */
export function buildServer(store: Store, options: ServerOptions = {}): FastifyInstance {
  const app = Fastify({
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true },
    logger: false,
    frameworkErrors: answerFrameworkError,
  });
  const routes: string[] = [];
  registered.set(app, routes);
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) if (method !== "HEAD") routes.push(`${method} ${route.url}`);
  });
  installErrorHandler(app, options.logError);
  installJsonBodyParser(app);
  app.decorateRequest("caller", null as unknown as Caller);
  // The service's clock, not this machine's, dates every answer (Node's own Date header would be this machine's):
  // clients measure their skew against the service from it. The header counts whole seconds, so its text is
  // made once a second. The hooks on every request's path take a callback: an async one costs a promise each time.
  let dateSecond = Number.NaN;
  let dateText = "";
  app.addHook("onSend", (_request, reply, payload, done) => {
    const now = store.clock.now();
    const second = Math.floor(now / 1000);
    if (second !== dateSecond) {
      dateText = new Date(now).toUTCString();
      dateSecond = second;
    }
    reply.header("date", dateText);
    done(null, payload);
  });
  // First of the onRequest hooks: faults stand for the gateway in front of the service, before authentication.
  installFaults(app, options.faults);

  // Answering from a callback hook: send, and do not call `done`.
  app.addHook("onRequest", (request, reply, done) => {
    if (request.routeOptions.config.public || !request.routeOptions.url) return done();
    const header = request.headers.authorization;
    const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
    if (!match) {
      reply.status(401).header("www-authenticate", "Bearer").send({ detail: "Not authenticated" });
      return;
    }
    const caller = store.workspaces.authenticate(match[1]!);
    if (!caller) {
      reply.status(401).header("www-authenticate", "Bearer").send({ detail: "Invalid API key" });
      return;
    }
    request.caller = caller;
    done();
  });

  if (options.logRequests || options.onRequestComplete) {
    app.addHook("onResponse", async (request, reply) => {
      const entry = { method: request.method, path: request.url.split("?")[0]!, status: reply.statusCode, durationMs: reply.elapsedTime };
      options.onRequestComplete?.(entry);
      if (options.logRequests) process.stdout.write(`${entry.method} ${entry.path} ${entry.status} ${entry.durationMs.toFixed(1)}ms\n`);
    });
  }

  const context = { origin: originResolver(app, options.publicUrl) };
  app.register(
    (v1, _options, done) => {
      for (const register of routeModules) register(v1, store, context);
      done();
    },
    { prefix: "/v1" },
  );
  // What the emulator offers beyond the spec, outside `/v1` so that no spec route changes; the same key applies.
  app.register(
    (emulator, _options, done) => {
      emulatorControlRoutes(emulator, store, context);
      done();
    },
    { prefix: "/_emulator" },
  );
  return app;
}
