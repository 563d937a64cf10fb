/**
 * `gms:maxRequestsPerSecond` / GMS_MAX_REQUESTS_PER_SECOND: CheckConfig refuses a value that is not a number above
 * 0, naming the setting and what it takes; the dynamic provider's clients refuse it the same way, naming where it
 * came from; and every client of a process shares the one limiter (held to the rate together, against the
 * emulator's limit for one key), whichever session made them.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type GmsClient, path } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { checkConfig, configFrom } from "../../src/plugin/config";
import { Session, settingTexts } from "../../src/provider/session";
import { ConfigurationError } from "../../src/settings";

const FORM = "must be a number of requests per second above 0, for example 5 or 0.5";

describe("CheckConfig of maxRequestsPerSecond", () => {
  it.each([["0"], ["-1"], ["fast"], ["5/s"], ["1e3"], [" "], [0], [-2], [true]])("refuses %j, naming the setting and its form", (value) => {
    const { failures } = checkConfig({ maxRequestsPerSecond: value });
    expect(failures).toHaveLength(1);
    expect(failures[0]!.property).toBe("maxRequestsPerSecond");
    expect(failures[0]!.reason.startsWith(`gms:maxRequestsPerSecond ${FORM}`), failures[0]!.reason).toBe(true);
  });

  it.each([["5"], ["0.5"], [".25"], ["120"], [5], [0.5]])("takes %j", (value) => {
    expect(checkConfig({ maxRequestsPerSecond: value }).failures).toEqual([]);
  });

  it("reaches the plugin's configuration from an explicit provider's inputs and from stack config alike", () => {
    expect(configFrom({ maxRequestsPerSecond: 0.5 }, {})).toEqual({ maxRequestsPerSecond: "0.5" });
    expect(configFrom(undefined, { "gms:config:maxRequestsPerSecond": "5" })).toEqual({ maxRequestsPerSecond: "5" });
  });
});

describe("the dynamic provider's clients", () => {
  const saved = process.env.GMS_MAX_REQUESTS_PER_SECOND;
  afterEach(() => {
    if (saved === undefined) delete process.env.GMS_MAX_REQUESTS_PER_SECOND;
    else process.env.GMS_MAX_REQUESTS_PER_SECOND = saved;
  });
  const session = new Session();
  const configure = (get: (key: string) => string | undefined, on = session) => on.configure(settingTexts({ get }));
  const clientFor = session.clientFor.bind(session);
  // A base URL per case: clients are kept per service and key, and a refused one is never made.
  let service = 0;
  const connection = () => ({ baseUrl: `http://rate-${++service}.test/v1`, apiKey: "gms_secret_do_not_print" });

  it("refuse a bad GMS_MAX_REQUESTS_PER_SECOND naming it, never the key", () => {
    process.env.GMS_MAX_REQUESTS_PER_SECOND = "lots";
    let thrown: unknown;
    try {
      clientFor(connection());
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigurationError);
    expect((thrown as Error).message).toBe(`GMS_MAX_REQUESTS_PER_SECOND ${FORM}, not "lots"`);
  });

  it("refuse a bad gms:maxRequestsPerSecond naming it, ahead of the environment's", () => {
    process.env.GMS_MAX_REQUESTS_PER_SECOND = "5";
    configure((key) => (key === "gms:maxRequestsPerSecond" ? "0" : undefined));
    // The stack's value is not repeated (a config value may be a secret the provider cannot tell).
    expect(() => clientFor(connection())).toThrow(`gms:maxRequestsPerSecond ${FORM}`);
  });

  describe("against the emulator's limit of 5/s for one key", () => {
    const KEY = "gms_shared_rate_key";
    let emulator: RunningEmulator;
    beforeAll(async () => {
      emulator = await startEmulator({ workspaces: [{ name: "Shared", apiKey: KEY }] });
    });
    afterAll(() => emulator?.close());

    it("share one limiter between every client of the process, of every session, so that together they keep to the rate", async () => {
      const sessions = [new Session(), new Session()];
      for (const each of sessions)
        configure((key) => (key === "gms:maxRequestsPerSecond" ? "5" : key === "gms:maxRetries" ? "0" : undefined), each);
      // Two clients for the one key, each a session's.
      const port = new URL(emulator.url).port;
      const [first, second] = sessions.map((each) => each.clientFor({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: KEY })) as [
        GmsClient,
        GmsClient,
      ];
      expect(second).not.toBe(first);
      emulator.faults.set("rate=5/s");
      try {
        const Apps = z.object({ data: z.array(z.unknown()) }).loose();
        await Promise.all(
          Array.from({ length: 14 }, (_, i) => (i % 2 === 0 ? first : second).request({ method: "GET", path: path`/apps`, schema: Apps })),
        );
        // No retries allowed: a refusal would have failed a request; none was refused.
        expect(emulator.faults.stats()).toMatchObject({ requests: 14, rateLimited: 0 });
      } finally {
        emulator.faults.set(undefined);
      }
    });
  });
});
