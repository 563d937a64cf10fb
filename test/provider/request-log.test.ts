/**
 * The debug log's lines (src/provider/request-log.ts): one per attempt, with the URN of the resource call that sent it,
 * the status or error code, the duration, the service's request id and a retry's wait and reason; and GMS_LOG=debug
 * turning on the dynamic provider's log through the SDK's `log.debug`. The plugin's lines on the real CLI are
 * test/plugin/debug-log.test.ts.
 */
import { createRequire } from "node:module";
import { afterEach, describe, expect, it, vi } from "vitest";
import { GmsClient } from "../../src/client";
import { path } from "../../src/client/path";
import { AdaptivePacer } from "../../src/client/pacer";
import { asResourceCall, logPacerChange, logRequest, logRequestsTo, pacerLine, requestLine } from "../../src/provider/request-log";
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
    logRequestsTo((line) => written.push(line));
    let now = 0;
    const pacer = new AdaptivePacer({ now: () => now, sleep: async (ms) => void (now += ms), onChange: logPacerChange });
    const send = async (outcome: "accepted" | "refused") => (await pacer.acquire()).settle(outcome);
    for (let i = 0; i < 10; i++) await send("accepted");
    await send("refused");
    expect(written).toEqual([]);
    now = 1000;
    // Refusals that follow the rate: more than half of the last 20 answers; 10 accepted in the last second, 9 learned.
    for (let i = 0; i < 10; i++) await send("refused");
    expect(written).toEqual(["gms: pacing at 9.0 requests/s: 11 of the last 20 requests refused"]);
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
    logRequestsTo((line) => written.push(line));
    try {
      await asResourceCall(URN, () => client.request({ method: "GET", path: path`/apps/${"a"}`, schema: z.unknown() }));
      expect(written).toEqual([
        expect.stringMatching(new RegExp(`^gms: ${URN}: GET /apps/a attempt 1: 503 server in \\d+ ms; retrying in 0 ms \\(server\\)$`)),
        expect.stringMatching(new RegExp(`^gms: ${URN}: GET /apps/a attempt 2: 200 in \\d+ ms$`)),
      ]);
      logRequestsTo(undefined);
      await client.request({ method: "GET", path: path`/apps/${"a"}`, schema: z.unknown() });
      expect(written).toHaveLength(2);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("is on in a process started with GMS_LOG=debug (the dynamic provider's host), through the SDK's log.debug", async () => {
    // The SDK the module loads when it logs, as Node.js's module cache holds it.
    const { log } = createRequire(__filename)("@pulumi/pulumi") as { log: { debug: (line: string) => Promise<void> } };
    const original = log.debug;
    const debug = vi.fn((_line: string) => Promise.resolve());
    log.debug = debug;
    vi.resetModules();
    vi.stubEnv("GMS_LOG", "debug");
    try {
      const fresh = await import("../../src/provider/request-log.js");
      fresh.logRequest({ method: "DELETE", path: "/apps/a", attempt: 1, status: 200, errorCode: undefined, durationMs: 4 });
      expect(debug).toHaveBeenCalledWith("gms: DELETE /apps/a attempt 1: 200 in 4 ms");
      // Without the setting, a fresh process logs nothing.
      vi.stubEnv("GMS_LOG", "");
      vi.resetModules();
      const quiet = await import("../../src/provider/request-log.js");
      quiet.logRequest({ method: "DELETE", path: "/apps/b", attempt: 1, status: 200, errorCode: undefined, durationMs: 4 });
      expect(debug).toHaveBeenCalledTimes(1);
    } finally {
      log.debug = original;
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });
});
