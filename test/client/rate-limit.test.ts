/**
 * The client's side of a rate limit: RequestRateLimiter's turns on a clock the test moves; then GmsClient against
 * the emulator's limiter on a loopback port: without a limiter of its own it retries each 429 after the true
 * `Retry-After` and every request succeeds; with one shared by two clients it is never refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { GmsClient, type RequestObservation, RequestRateLimiter, path } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";

describe("RequestRateLimiter", () => {
  /** A limiter on a clock that only moves when the test says; each wait is recorded, not slept. */
  function fakeLimiter(rate: number) {
    const clock = { now: 0 };
    const waits: number[] = [];
    const limiter = new RequestRateLimiter(rate, {
      now: () => clock.now,
      sleep: async (ms) => void waits.push(ms),
    });
    return { clock, waits, limiter };
  }

  it("gives turns 1/rate apart in the order asked for, the first at once", async () => {
    const { limiter } = fakeLimiter(5);
    expect(await Promise.all(Array.from({ length: 6 }, () => limiter.turn()))).toEqual([0, 200, 400, 600, 800, 1000]);
  });

  it("does not save up turns over a quiet spell (no burst), and rounds a wait up to whole milliseconds", async () => {
    const { clock, waits, limiter } = fakeLimiter(3);
    await limiter.turn();
    clock.now = 10_000;
    expect(await limiter.turn()).toBe(0);
    expect(await limiter.turn()).toBeCloseTo(1000 / 3);
    expect(waits).toEqual([334]);
    clock.now = 10_100;
    // The next turn is two intervals after 10 000 ms, whoever asks and when.
    expect(await limiter.turn()).toBeCloseTo(2000 / 3 - 100);
  });

  it("takes fractional rates, and refuses a rate that is not a number above 0", async () => {
    const { limiter } = fakeLimiter(0.5);
    expect(await Promise.all([limiter.turn(), limiter.turn()])).toEqual([0, 2000]);
    for (const rate of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => new RequestRateLimiter(rate)).toThrow(RangeError);
  });
});

describe("GmsClient against the emulator's rate limit", () => {
  const KEY = "gms_client_rate_key";
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ workspaces: [{ name: "Rate", apiKey: KEY }] });
  });
  afterAll(() => emulator?.close());

  const Apps = z.object({ data: z.array(z.unknown()) }).loose();
  const listApps = (client: GmsClient) => client.request({ method: "GET", path: path`/apps`, schema: Apps });

  it("without a limiter of its own, retries each 429 after the emulator's Retry-After, and every request succeeds", async () => {
    emulator.faults.set("rate=5/s");
    const sleeps: number[] = [];
    const observations: RequestObservation[] = [];
    const client = new GmsClient({
      baseUrl: emulator.url,
      apiKey: KEY,
      onRequest: (observation) => observations.push(observation),
      retryTiming: {
        sleep: (ms) => {
          sleeps.push(ms);
          return new Promise((resolve) => setTimeout(resolve, ms));
        },
        random: () => 0.5,
      },
    });
    try {
      // Eight at once against a budget of five: three or so are refused and come back after a second.
      const answers = await Promise.all(Array.from({ length: 8 }, () => listApps(client)));
      expect(answers).toHaveLength(8);
      const refused = observations.filter((observation) => observation.status === 429);
      expect(refused.length).toBeGreaterThanOrEqual(2);
      expect(refused.every((observation) => observation.errorCode === "rate_limited")).toBe(true);
      expect(emulator.faults.stats().rateLimited).toBe(refused.length);
      // Each retry waited what Retry-After said (1 s), not a backoff of its own.
      expect(sleeps).toEqual(refused.map(() => 1000));
      expect(observations.filter((observation) => observation.status === 200)).toHaveLength(8);
    } finally {
      await client.close();
      emulator.faults.set(undefined);
    }
  });

  it("retries a create refused by the rate limit (it provably did nothing) and makes the App once", async () => {
    emulator.faults.set("rate=1/s");
    const client = new GmsClient({ baseUrl: emulator.url, apiKey: KEY });
    const App = z.object({ guid: z.string() }).loose();
    try {
      await listApps(client);
      const app = await client.request({ method: "POST", path: path`/apps`, body: { name: "made after a 429" }, schema: App });
      expect(emulator.faults.stats().rateLimited).toBe(1);
      expect(emulator.store.db.get("SELECT count(*) AS n FROM apps WHERE name = ?", "made after a 429")).toEqual({ n: 1 });
      expect(app.guid).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await client.close();
      emulator.faults.set(undefined);
    }
  });

  it("with one limiter shared by two clients, the pair is never refused; with one each, it is", async () => {
    const run = async (limiters: [RequestRateLimiter, RequestRateLimiter]) => {
      emulator.faults.set("rate=5/s");
      const clients = limiters.map((rateLimiter) => new GmsClient({ baseUrl: emulator.url, apiKey: KEY, rateLimiter, maxRetries: 5 }));
      try {
        await Promise.all(Array.from({ length: 16 }, (_, i) => listApps(clients[i % 2]!)));
        return emulator.faults.stats().rateLimited;
      } finally {
        await Promise.all(clients.map((client) => client.close()));
        emulator.faults.set(undefined);
      }
    };
    const shared = new RequestRateLimiter(5);
    expect(await run([shared, shared])).toBe(0);
    // Each client alone keeps to 5/s, the pair sends 10/s against the key's 5/s.
    expect(await run([new RequestRateLimiter(5), new RequestRateLimiter(5)])).toBeGreaterThan(0);
  });
});
