import { readFileSync } from "node:fs";
import { join } from "node:path";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GmsClient, ResponseShapeError, TimeoutError, path, type GmsClientOptions, type RequestObservation } from "../../src/client";
import { API_KEY, delayed, json, scriptedClients, startScriptedServer, type Step } from "./scripted-server";

/** The version package.json gives, which the client names in its user agent. */
const packageVersion = (JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as { version: string }).version;

/** Any record with a guid, kept as the wire has it: these tests are about the client, not a kind's codec. */
const App = z.looseObject({ guid: z.string(), name: z.string(), slug: z.string() });

const GUID = "6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f";
const APP = {
  guid: GUID,
  name: "Support",
  description: null,
  slug: "support",
  created_at: "2024-01-01T00:00:00Z",
  updated_at: "2024-01-01T00:00:00Z",
  created_by_id: "user-1",
  last_updated_by_id: null,
};

const { connect, track } = scriptedClients();

async function setup(steps: Step[] | Step, options: Partial<GmsClientOptions> = {}) {
  const observations: RequestObservation[] = [];
  const { server, client } = await connect(steps, { onRequest: (seen) => observations.push(seen), ...options });
  return { server, client, observations };
}

describe("GmsClient requests", () => {
  it("sends auth, JSON and user-agent headers and parses the response with the schema", async () => {
    const { server, client, observations } = await setup(json(200, APP));
    const app = await client.request({ method: "GET", path: path`/apps/${GUID}`, schema: App });

    expect(app).toEqual(APP);
    const [received] = server.requests;
    expect(received?.method).toBe("GET");
    expect(received?.url).toBe(`/v1/apps/${GUID}`);
    expect(received?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(received?.headers["content-type"]).toBe("application/json");
    expect(received?.headers["user-agent"]).toBe(`pulumi-gms/${packageVersion}`);
    expect(observations).toEqual([
      { method: "GET", path: `/apps/${GUID}`, attempt: 1, status: 200, errorCode: undefined, durationMs: expect.any(Number) },
    ]);
  });

  it("sends a JSON body and the defined query values, and accepts a base URL with a trailing slash", async () => {
    const server = track(await startScriptedServer(json(200, APP)));
    const client = track(new GmsClient({ baseUrl: `${server.baseUrl}/`, apiKey: API_KEY, userAgent: "custom/1.0" }));
    await client.request({
      method: "POST",
      path: path`/apps`,
      query: { skip: 0, limit: 5, filter: undefined, flag: true },
      body: { name: "Support", description: null },
      schema: App,
    });

    const [received] = server.requests;
    expect(received?.url).toBe("/v1/apps?skip=0&limit=5&flag=true");
    expect(JSON.parse(received?.body ?? "")).toEqual({ name: "Support", description: null });
    expect(received?.headers["user-agent"]).toBe("custom/1.0");
  });

  it("sends encoded path parameters as they are", async () => {
    const { server, client } = await setup(json(200, APP));
    await client.request({ method: "GET", path: path`/skills/${"a/b?c#d e"}/prompt`, schema: App });
    expect(server.requests[0]?.url).toBe("/v1/skills/a%2Fb%3Fc%23d%20e/prompt");
  });

  it("parses an empty body as undefined for routes that answer with none", async () => {
    const { client } = await setup((_request, response) => response.writeHead(204).end());
    await expect(client.request({ method: "DELETE", path: path`/models/${GUID}`, schema: z.undefined() })).resolves.toBeUndefined();
  });

  it("reuses keep-alive connections across requests", async () => {
    const { server, client } = await setup(json(200, APP));
    for (let i = 0; i < 8; i++) await client.request({ method: "GET", path: path`/apps/${GUID}`, schema: App });
    expect(server.requests).toHaveLength(8);
    // undici may open a second socket while the first is being released; never one per request.
    expect(server.connections).toBeLessThanOrEqual(2);
  });

  it("reports a schema mismatch by field path without echoing body values", async () => {
    const secret = "sk-live-provider-credential";
    const { client } = await setup(json(200, { ...APP, name: 42, key: secret, slug: { nested: secret } }));
    const error = await client.request({ method: "POST", path: path`/models`, schema: App }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ResponseShapeError);
    const shape = error as ResponseShapeError;
    expect(shape.message).toMatch(/^POST \/models: response does not match the expected shape: name: .*; slug: /);
    expect(shape).toMatchObject({ code: "invalid_response", status: 200, method: "POST", path: "/models" });
    for (const rendered of [shape.message, JSON.stringify(shape), inspect(shape, { depth: Infinity, showHidden: true })]) {
      expect(rendered).not.toContain(secret);
      expect(rendered).not.toContain(API_KEY);
    }
  });

  it("reports a 2xx body that is not JSON", async () => {
    const { client } = await setup((_request, response) => response.writeHead(200).end("<html>ok</html>"));
    await expect(client.request({ method: "GET", path: path`/apps`, schema: App })).rejects.toThrow(
      new ResponseShapeError({ method: "GET", path: "/apps", status: 200, detail: "response body is not JSON" }),
    );
  });

  it("turns a response slower than the timeout into a TimeoutError with no status", async () => {
    const { client, observations } = await setup(delayed(2_000, json(200, APP)), { timeoutMs: 100, maxRetries: 0 });
    const error = await client.request({ method: "GET", path: path`/apps/${GUID}`, schema: App }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ name: "TimeoutError", code: "timeout", status: undefined, method: "GET", path: `/apps/${GUID}` });
    expect((error as Error).message).toBe(`GET /apps/${GUID}: no complete response within 100 ms`);
    expect(observations).toEqual([
      { method: "GET", path: `/apps/${GUID}`, attempt: 1, status: undefined, errorCode: "timeout", durationMs: expect.any(Number) },
    ]);
    // The attempt lasted as long as the timeout let it.
    expect(observations[0]!.durationMs).toBeGreaterThanOrEqual(90);
  });

  it("times out a body that stalls after the headers", async () => {
    const stall: Step = (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"guid":');
    };
    const { client } = await setup(stall, { timeoutMs: 100, maxRetries: 0 });
    await expect(client.request({ method: "GET", path: path`/apps/${GUID}`, schema: App })).rejects.toBeInstanceOf(TimeoutError);
  });

  it("keeps the API key out of the client's inspection", async () => {
    const { client } = await setup(json(200, APP));
    expect(inspect(client, { depth: Infinity, showHidden: true })).not.toContain(API_KEY);
    expect(JSON.stringify(client)).not.toContain(API_KEY);
  });
});
