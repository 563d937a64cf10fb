/**
 * The debug log's lines (src/provider/request-log.ts): one per attempt, with the URN of the resource call that sent it,
 * the status or error code, the duration, the service's request id and a retry's wait and reason. Where the lines go:
 * test/plugin/engine-log.test.ts; on the real CLI, the plugin's in test/plugin/debug-log.test.ts and the dynamic
 * provider host's (GMS_LOG=debug) in test/pulumi-cli/dynamic-debug-log.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { GmsClient } from "../../src/client";
import { path } from "../../src/client/path";
import { AdaptivePacer } from "../../src/client/pacer";
import {
  afterLogged,
  asResourceCall,
  logPacerChange,
  logRequest,
  logRequestsTo,
  pacerLine,
  requestLine,
} from "../../src/provider/request-log";
import { json, startScriptedServer } from "../client/scripted-server";
import { z } from "zod";

const URN = "urn:pulumi:dev::proj::gms:index:App::support";

describe("requestLine", () => {
  it("names the resource, the request, its outcome and duration, the request id and a retry's wait", () => {
    expect(
      requestLine(
        {
          method: "POST",
          path: "/apps",
          attempt: 1,
          status: 429,
          errorCode: "rate_limited",
          durationMs: 3,
          requestId: "r-7",
          retry: { inMs: 1000, because: "rate_limited" },
        },
        URN,
      ),
    ).toBe(`gms: ${URN}: POST /apps attempt 1: 429 rate_limited in 3 ms (request id r-7); retrying in 1000 ms (rate_limited)`);
    expect(
      requestLine({ method: "GET", path: "/apps/x", attempt: 2, status: undefined, errorCode: "timeout", durationMs: 30000 }, undefined),
    ).toBe("gms: GET /apps/x attempt 2: timeout in 30000 ms");
  });
});

describe("pacerLine and logPacerChange", () => {
  afterEach(() => logRequestsTo(undefined));

  it("says the pacer's new rate, or that it is off, and why", () => {
    expect(pacerLine({ rate: 4.5, because: "6 of the last 11 requests refused" })).toBe(
      "gms: pacing at 4.5 requests/s: 6 of the last 11 requests refused",
    );
    expect(pacerLine({ rate: undefined, because: "accepted past 500/s: unpaced again" })).toBe(
      "gms: pacing off: accepted past 500/s: unpaced again",
    );
  });

  it("writes each change of a pacer's rate once, with its reason, and nothing for a passing refusal", async () => {
    const written: string[] = [];
    logRequestsTo((line) => void written.push(line));
    let now = 0;
    const pacer = new AdaptivePacer({ now: () => now, sleep: async (ms) => void (now += ms), onChange: logPacerChange });
    const send = async (outcome: "accepted" | "refused") => (await pacer.acquire()).settle(outcome);
    for (let i = 0; i < 10; i++) await send("accepted");
    await send("refused");
    expect(written).toEqual([]);
    now = 1000;
    // Refusals that follow the rate: more than half of the last answers; 10 accepted in the last second, 9 learned.
    // Refused again at that rate, it cuts again (src/client/pacer.ts).
    for (let i = 0; i < 10; i++) await send("refused");
    expect(written).toEqual([
      "gms: pacing at 9.0 requests/s: 6 of the last 6 requests refused",
      "gms: pacing at 0.9 requests/s: 4 of the last 4 requests refused",
    ]);
  });
});

describe("logRequest", () => {
  afterEach(() => logRequestsTo(undefined));

  it("writes each attempt of a client's requests with the URN of the call that made it, and nothing once stopped", async () => {
    const server = await startScriptedServer([json(503, { detail: "busy" }), json(200, { ok: true }), json(200, { ok: true })]);
    const client = new GmsClient({
      baseUrl: server.baseUrl,
      apiKey: "k",
      onRequest: logRequest,
      retryTiming: { sleep: async () => {}, random: () => 0 },
    });
    const written: string[] = [];
    const urns: (string | undefined)[] = [];
    logRequestsTo((line, urn) => {
      written.push(line);
      urns.push(urn);
    });
    try {
      await asResourceCall(URN, () => client.request({ method: "GET", path: path`/apps/${"a"}`, schema: z.unknown() }));
      expect(written).toEqual([
        expect.stringMatching(new RegExp(`^gms: ${URN}: GET /apps/a attempt 1: 503 server in \\d+ ms; retrying in 0 ms \\(server\\)$`)),
        expect.stringMatching(new RegExp(`^gms: ${URN}: GET /apps/a attempt 2: 200 in \\d+ ms$`)),
      ]);
      expect(urns).toEqual([URN, URN]);
      logRequestsTo(undefined);
      await client.request({ method: "GET", path: path`/apps/${"a"}`, schema: z.unknown() });
      expect(written).toHaveLength(2);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe("afterLogged", () => {
  afterEach(() => logRequestsTo(undefined));

  it("answers a call only once the lines logged before its end have reached the engine, and even when the call fails", async () => {
    const delivered: (() => void)[] = [];
    logRequestsTo(() => new Promise<void>((resolve) => delivered.push(resolve)));
    const observation = { method: "DELETE", path: "/apps/a", attempt: 1, status: 204, errorCode: undefined, durationMs: 3 } as const;
    const settled: string[] = [];
    const answered = afterLogged(Promise.resolve().then(() => logRequest(observation))).then(() => settled.push("answered"));
    const failed = afterLogged(Promise.reject(new Error("refused"))).catch(() => settled.push("failed"));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(delivered).toHaveLength(1);
    expect(settled).toEqual([]);
    delivered[0]!();
    await Promise.all([answered, failed]);
    expect(settled.sort()).toEqual(["answered", "failed"]);
  });
});
