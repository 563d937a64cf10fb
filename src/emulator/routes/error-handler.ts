import type { FastifyError, FastifyInstance, FastifyRequest } from "fastify";
import { StoreError } from "../store/errors";
import { RequestValidationError } from "./wire";

/** Receives one entry per 500: see {@link serverErrorEntry}. */
export type ErrorLog = (entry: string) => void;

export const logToStderr: ErrorLog = (entry) => {
  process.stderr.write(entry);
};

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

  app.setNotFoundHandler((_request, reply) => reply.status(404).send({ detail: "Not Found" }));
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
