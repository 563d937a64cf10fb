import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ConnectionError,
  GmsClient,
  LimitExceededError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  defaultRetryPolicy,
  path,
  retryDelayMs,
  type GmsClientOptions,
  type HttpMethod,
  type RequestObservation,
} from "../../src/client";
import {
  API_KEY,
  closedPort,
  delayed,
  destroyAfterReceiving,
  json,
  startScriptedServer,
  type ScriptedServer,
  type Step,
} from "./scripted-server";

const GUID = "3c2b1a09-8f7e-4d6c-b5a4-938271605f4e";
const OK = { ok: true };
const Ok = z.object({ ok: z.boolean() });

let servers: ScriptedServer[] = [];
let client: GmsClient | undefined;
afterEach(async () => {
  await client?.close();
  await Promise.all(servers.map((server) => server.close()));
  client = undefined;
  servers = [];
});

/** A client whose sleeps are recorded instead of waited, with jitter pinned to half the ceiling. */
function retryingClient(baseUrl: string, options: Partial<GmsClientOptions> = {}) {
  const sleeps: number[] = [];
  const observations: RequestObservation[] = [];
  client = new GmsClient({
    baseUrl,
    apiKey: API_KEY,
    onRequest: (seen) => observations.push(seen),
    ...options,
    retryTiming: { sleep: async (ms) => void sleeps.push(ms), random: () => 0.5, ...options.retryTiming },
  });
  return { client, sleeps, observations };
}

async function scripted(steps: Step[] | Step, options: Partial<GmsClientOptions> = {}) {
  const server = await startScriptedServer(steps);
  servers.push(server);
  return { server, ...retryingClient(server.baseUrl, options) };
}

function send(target: GmsClient, method: HttpMethod) {
  return target.request({
    method,
    path: path`/apps/${GUID}`,
    body: method === "GET" || method === "DELETE" ? undefined : { name: "x" },
    schema: Ok,
  });
}

describe("idempotent requests", () => {
  it("retry a 503 and return the later success", async () => {
    const { server, client, observations, sleeps } = await scripted([
      json(503, { detail: "busy" }, { "x-request-id": "r-busy" }),
      json(200, OK, { "x-request-id": "r-ok" }),
    ]);
    await expect(send(client, "GET")).resolves.toEqual(OK);
    expect(server.requests).toHaveLength(2);
    expect(observations.map(({ attempt, status, errorCode }) => ({ attempt, status, errorCode }))).toEqual([
      { attempt: 1, status: 503, errorCode: "server" },
      { attempt: 2, status: 200, errorCode: undefined },
    ]);
    // Each attempt is told with the service's request id, and a retried one with the wait before the next and why.
    expect(observations.map(({ requestId, retry }) => ({ requestId, retry }))).toEqual([
      { requestId: "r-busy", retry: { inMs: 250, because: "server" } },
      { requestId: "r-ok", retry: undefined },
    ]);
    for (const seen of observations) expect(seen.durationMs).toBeGreaterThanOrEqual(0);
    expect(sleeps).toEqual([250]);
  });

  it.each(["PUT", "DELETE"] as const)("%s retries 500, 502, 408 and a 429 with Retry-After", async (method) => {
    const { server, client } = await scripted(
      [json(500, {}), json(502, {}), json(408, {}), json(429, {}, { "retry-after": "0" }), json(200, OK)],
      { maxRetries: 4 },
    );
    await expect(send(client, method)).resolves.toEqual(OK);
    expect(server.requests.map((request) => request.method)).toEqual(Array(5).fill(method));
  });

  it("sleep exactly the Retry-After seconds instead of the backoff", async () => {
    const { client, sleeps } = await scripted([
      json(503, {}, { "retry-after": "3" }),
      json(429, {}, { "retry-after": "0" }),
      json(200, OK),
    ]);
    await expect(send(client, "GET")).resolves.toEqual(OK);
    expect(sleeps).toEqual([3_000, 0]);
  });

  it("wait out rate-limit 429s apart from maxRetries, up to maxThrottledWaitMs in all", async () => {
    // Many requests refused together would use up three retries in a few seconds: the 429s do not count against them.
    const throttled = json(429, { detail: "slow down" }, { "retry-after": "1" });
    const { server, client, sleeps } = await scripted(
      [throttled, throttled, throttled, throttled, json(503, {}), throttled, json(200, OK)],
      {
        maxRetries: 1,
      },
    );
    await expect(send(client, "GET")).resolves.toEqual(OK);
    expect(server.requests).toHaveLength(7);
    expect(sleeps).toEqual([1_000, 1_000, 1_000, 1_000, 250, 1_000]);

    // The time waiting so is bounded: past it, the 429 surfaces (each wait counts as at least the first backoff).
    const bounded = await scripted(throttled, { retryTiming: { maxThrottledWaitMs: 2_500 } });
    const error = await send(bounded.client, "GET").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(bounded.sleeps).toEqual([1_000, 1_000]);
    expect(bounded.server.requests).toHaveLength(3);
    const zero = await scripted(json(429, {}, { "retry-after": "0" }), { retryTiming: { maxThrottledWaitMs: 1_600 } });
    await expect(send(zero.client, "GET")).rejects.toBeInstanceOf(RateLimitedError);
    expect(zero.sleeps).toEqual([0, 0, 0]);
    // maxRetries 0 sends a request once, and waits for nothing.
    const once = await scripted(throttled, { maxRetries: 0 });
    await expect(send(once.client, "GET")).rejects.toBeInstanceOf(RateLimitedError);
    expect(once.sleeps).toEqual([]);
  });

  it("give up at once on a Retry-After longer than the policy will wait, keeping it on the error", async () => {
    const { server, client, sleeps } = await scripted(json(429, { detail: "slow down" }, { "retry-after": "3600" }));
    const error = await send(client, "GET").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBe(3_600_000);
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it("back off exponentially with full jitter up to the cap", async () => {
    const { server, client, sleeps } = await scripted(json(500, {}), {
      maxRetries: 6,
      retryTiming: { baseDelayMs: 100, maxDelayMs: 1_000 },
    });
    await expect(send(client, "GET")).rejects.toBeInstanceOf(ServerError);
    expect(server.requests).toHaveLength(7);
    // random() = 0.5 of a ceiling 100, 200, 400, 800, then capped at 1000.
    expect(sleeps).toEqual([50, 100, 200, 400, 500, 500]);
  });

  it("respect maxRetries and throw the last error", async () => {
    const { server, client, observations } = await scripted(
      [json(503, { detail: "first" }), json(503, { detail: "second" }), json(502, { detail: "last" })],
      { maxRetries: 2 },
    );
    const error = await send(client, "GET").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 502, detail: "last" });
    expect(server.requests).toHaveLength(3);
    expect(observations.map((seen) => seen.attempt)).toEqual([1, 2, 3]);
  });

  it("do not retry a 429 without Retry-After: a used-up allowance that no wait cures", async () => {
    const { server, client } = await scripted([json(429, { detail: "App limit reached" }), json(200, OK)]);
    const error = await send(client, "GET").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LimitExceededError);
    expect(error).toMatchObject({ attempts: 1, detail: "App limit reached" });
    expect(server.requests).toHaveLength(1);
  });

  it("count the attempts on the final error", async () => {
    const { client } = await scripted(json(503, { detail: "busy" }), { maxRetries: 2 });
    await expect(send(client, "GET")).rejects.toMatchObject({ status: 503, attempts: 3 });
  });

  it("do not retry a client error", async () => {
    const { server, client } = await scripted(json(404, { detail: "App not found" }));
    await expect(send(client, "GET")).rejects.toBeInstanceOf(NotFoundError);
    expect(server.requests).toHaveLength(1);
  });

  it("retry a connection cut after the request arrived, and a timeout", async () => {
    const { server, client } = await scripted([destroyAfterReceiving, delayed(2_000, json(200, OK)), json(200, OK)], { timeoutMs: 200 });
    await expect(send(client, "GET")).resolves.toEqual(OK);
    expect(server.requests).toHaveLength(3);
  });
});

describe("POST", () => {
  it("is not replayed after the server received it and the connection was cut", async () => {
    const { server, client, observations } = await scripted(destroyAfterReceiving);
    const error = await send(client, "POST").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(server.requests).toHaveLength(1);
    expect(observations).toHaveLength(1);
  });

  it.each([500, 502, 503, 408])("is not replayed after a %i", async (status) => {
    const { server, client } = await scripted([json(status, { detail: "boom" }, { "retry-after": "1" }), json(200, OK)]);
    await expect(send(client, "POST")).rejects.toMatchObject({ status });
    expect(server.requests).toHaveLength(1);
  });

  it("is not replayed after a timeout", async () => {
    const { server, client } = await scripted(delayed(2_000, json(200, OK)), { timeoutMs: 150 });
    await expect(send(client, "POST")).rejects.toBeInstanceOf(TimeoutError);
    expect(server.requests).toHaveLength(1);
  });

  it("is retried after a rate-limit 429 (one with Retry-After)", async () => {
    const { server, client, sleeps } = await scripted([json(429, { detail: "slow down" }, { "retry-after": "2" }), json(200, OK)]);
    await expect(send(client, "POST")).resolves.toEqual(OK);
    expect(server.requests.map((request) => request.body)).toEqual(['{"name":"x"}', '{"name":"x"}']);
    expect(sleeps).toEqual([2_000]);
  });

  it("is retried after a refused connect, and reaches a server that came up meanwhile", async () => {
    const port = await closedPort();
    let server: ScriptedServer | undefined;
    const sleeps: number[] = [];
    const observations: RequestObservation[] = [];
    client = new GmsClient({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      apiKey: API_KEY,
      onRequest: (seen) => observations.push(seen),
      retryTiming: {
        random: () => 0.5,
        // The first backoff is when the server comes up on the port that just refused us.
        sleep: async (ms) => {
          sleeps.push(ms);
          server = await startScriptedServer(json(200, OK), port);
          servers.push(server);
        },
      },
    });
    await expect(send(client, "POST")).resolves.toEqual(OK);
    expect(observations.map(({ attempt, errorCode }) => ({ attempt, errorCode }))).toEqual([
      { attempt: 1, errorCode: "connection" },
      { attempt: 2, errorCode: undefined },
    ]);
    expect(sleeps).toEqual([250]);
    expect(server?.requests).toHaveLength(1);
  });

  it("gives up on a port that keeps refusing after maxRetries", async () => {
    const refusing = retryingClient(`http://127.0.0.1:${await closedPort()}/v1`, { maxRetries: 2 });
    const { observations, sleeps } = refusing;
    await expect(send(refusing.client, "POST")).rejects.toMatchObject({ code: "connection", provablyUnsent: true });
    expect(observations.map((seen) => seen.attempt)).toEqual([1, 2, 3]);
    expect(sleeps).toHaveLength(2);
  });
});

describe("retryDelayMs", () => {
  const error = new ServerError({ method: "GET", path: "/apps", status: 503, detail: "busy" });

  it("never exceeds the cap, whatever the jitter and the retry number", () => {
    for (const random of [0, 0.25, 0.999999]) {
      for (let retry = 0; retry < 40; retry++) {
        const delay = retryDelayMs(retry, error, { ...defaultRetryPolicy, random: () => random });
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(defaultRetryPolicy.maxDelayMs);
      }
    }
  });

  it("prefers the server's Retry-After within the policy's limit", () => {
    const withRetryAfter = new ServerError({ method: "GET", path: "/apps", status: 503, detail: "busy", retryAfterMs: 12_000 });
    expect(retryDelayMs(0, withRetryAfter, defaultRetryPolicy)).toBe(12_000);
    expect(retryDelayMs(0, withRetryAfter, { ...defaultRetryPolicy, maxRetryAfterMs: 10_000 })).toBeUndefined();
  });
});
