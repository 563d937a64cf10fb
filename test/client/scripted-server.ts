/**
 * A real HTTP server on 127.0.0.1, port 0, that answers each request with the next scripted step (the
 * last step repeats) and records what arrived, so tests see exactly what went over the wire.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach } from "vitest";
import { GmsClient, type GmsClientOptions } from "../../src/client";

export const API_KEY = "gms_secret_key_DO_NOT_LEAK";

export interface ReceivedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  socket: Socket;
}

export type Step = (request: ReceivedRequest, response: ServerResponse) => void;

export interface ScriptedServer {
  baseUrl: string;
  port: number;
  requests: ReceivedRequest[];
  /** Distinct TCP connections accepted. */
  connections: number;
  close(): Promise<void>;
}

export async function startScriptedServer(steps: Step[] | Step, port = 0): Promise<ScriptedServer> {
  const script = Array.isArray(steps) ? steps : [steps];
  const requests: ReceivedRequest[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const request: ReceivedRequest = {
        method: incoming.method ?? "",
        url: incoming.url ?? "",
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        socket: incoming.socket,
      };
      requests.push(request);
      const step = script[Math.min(requests.length, script.length) - 1];
      step?.(request, response);
    });
  });
  const scripted: ScriptedServer = {
    baseUrl: "",
    port: 0,
    requests,
    connections: 0,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on("connection", () => scripted.connections++);
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  scripted.port = (server.address() as AddressInfo).port;
  scripted.baseUrl = `http://127.0.0.1:${scripted.port}/v1`;
  return scripted;
}

/**
 * For one test file: `connect` starts a scripted server with a client on it (options override the defaults),
 * `track` adopts anything else that closes; everything is closed after each test, newest first.
 */
export function scriptedClients() {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const item of open.splice(0).reverse()) await item.close();
  });
  const track = <T extends { close(): Promise<void> }>(item: T): T => {
    open.push(item);
    return item;
  };
  const connect = async (steps: Step[] | Step, options: Partial<GmsClientOptions> = {}) => {
    const server = track(await startScriptedServer(steps));
    const client = track(new GmsClient({ baseUrl: server.baseUrl, apiKey: API_KEY, ...options }));
    return { server, client };
  };
  return { connect, track };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Step {
  return (_request, response) => {
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(JSON.stringify(body));
  };
}

/** The request fully arrived, then the connection is cut without an answer. */
export const destroyAfterReceiving: Step = (request) => request.socket.destroy();

export function delayed(ms: number, step: Step): Step {
  return (request, response) => {
    const timer = setTimeout(() => step(request, response), ms);
    response.on("close", () => clearTimeout(timer));
  };
}

/** A port that was free a moment ago and has nothing listening on it now. */
export async function closedPort(): Promise<number> {
  const probe = await startScriptedServer(json(200, {}));
  await probe.close();
  return probe.port;
}
