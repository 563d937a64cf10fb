/**
 * The emulator's rate limit (`rate`, `burst` in the fault spec): a budget per API key that refills at the rate,
 * 429 with a true `Retry-After` once it is spent. Driven on a clock the test moves (the fault hooks' `now`), so
 * each answer follows from the times requests arrive; then once over real HTTP with two workspaces.
 */
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatFaultSpec, parseFaultSpec, type RunningEmulator, startEmulator } from "../../src/emulator";
import { installFaults, mulberry32 } from "../../src/emulator/faults";

describe("the rate limit's spec", () => {
  it("reads rate=<n>/s or <n>/min and an optional burst, and formats them back with the default burst", () => {
    expect(parseFaultSpec("rate=5/s")).toEqual({ rate: 5 });
    expect(parseFaultSpec("rate=300/min,burst=20")).toEqual({ rate: 5, burst: 20 });
    expect(parseFaultSpec("rate=0.5/s")).toEqual({ rate: 0.5 });
    expect(formatFaultSpec("rate=5/s")).toBe("seed=1,rate=5/s,burst=5");
    expect(formatFaultSpec("rate=0.5/s")).toBe("seed=1,rate=0.5/s,burst=1");
    expect(formatFaultSpec("rate=100/min,seed=3")).toBe("seed=3,rate=100/min,burst=2");
    expect(formatFaultSpec("burst=9,rate=2.5/s,error=0.1")).toBe("seed=1,error=0.1,status=503,rate=2.5/s,burst=9");
    for (const text of ["seed=3,rate=100/min,burst=2", "seed=1,rate=2.5/s,burst=9"])
      expect(formatFaultSpec(parseFaultSpec(text))).toBe(text);
  });

  it("checks spec objects the same way", () => {
    expect(() => formatFaultSpec({ rate: 0 })).toThrow(/rate=0\/s is not accepted/);
    expect(() => formatFaultSpec({ rate: Number.POSITIVE_INFINITY })).toThrow(/rate=Infinity\/s is not accepted/);
    expect(() => formatFaultSpec({ rate: 5, burst: 0 })).toThrow(/burst=0 is not accepted/);
  });
});

/** A bare server with the fault hooks on a clock the test moves, answering through `inject`. */
async function limitedServer(spec: string) {
  const clock = { now: 0 };
  const app = Fastify();
  const faults = installFaults(app, spec, { now: () => clock.now, sleep: async () => undefined });
  app.get("/v1/things", async () => ({ ok: true }));
  app.post("/v1/things", async () => ({ ok: true }));
  await app.ready();
  /** One request with `key` (none: no Authorization header) at `at` ms: its status, Retry-After and body. */
  const send = async (at: number, key?: string, method: "GET" | "POST" = "GET") => {
    clock.now = at;
    const response = await app.inject({ method, url: "/v1/things", headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
    return { status: response.statusCode, retryAfter: response.headers["retry-after"], body: response.json() as unknown };
  };
  return { app, faults, send };
}

describe("the rate limit, on the hooks' clock", () => {
  it("admits a key's budget at once, then answers 429 with a Retry-After and a detail, doing nothing", async () => {
    const server = await limitedServer("rate=5/s");
    try {
      const first = await Promise.all(Array.from({ length: 5 }, () => server.send(0, "key-a")));
      expect(first.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
      const refused = await server.send(0, "key-a");
      expect(refused).toEqual({
        status: 429,
        retryAfter: "1",
        body: { detail: "Rate limit exceeded: 5/s per API key; retry after 1 s" },
      });
      expect(server.faults.stats()).toMatchObject({ requests: 6, rateLimited: 1, throttle: 0 });
    } finally {
      await server.app.close();
    }
  });

  it("refills at the rate: one request per fifth of a second at 5/s, never more than the burst", async () => {
    const server = await limitedServer("rate=5/s,burst=2");
    try {
      const statuses = async (at: number, count: number) =>
        (await Promise.all(Array.from({ length: count }, () => server.send(at, "key-a")))).map((answer) => answer.status);
      expect(await statuses(0, 3)).toEqual([200, 200, 429]);
      expect(await statuses(199, 1)).toEqual([429]);
      expect(await statuses(200, 2)).toEqual([200, 429]);
      expect(await statuses(400, 1)).toEqual([200]);
      // A quiet spell fills the budget to the burst, and no further.
      expect(await statuses(60_000, 3)).toEqual([200, 200, 429]);
    } finally {
      await server.app.close();
    }
  });

  it("gives a true Retry-After: the whole seconds until the budget holds a request again, rounded up", async () => {
    const server = await limitedServer("rate=1/min");
    try {
      expect((await server.send(0, "key-a")).status).toBe(200);
      expect((await server.send(0, "key-a")).retryAfter).toBe("60");
      expect((await server.send(30_000, "key-a")).retryAfter).toBe("30");
      expect((await server.send(59_001, "key-a")).retryAfter).toBe("1");
      expect((await server.send(60_000, "key-a")).status).toBe(200);
    } finally {
      await server.app.close();
    }
  });

  it("keeps Retry-After true for any arrivals: waiting it out always finds the budget holding a request", async () => {
    for (const spec of ["rate=5/s", "rate=0.7/s,burst=3", "rate=90/min,burst=1"]) {
      const server = await limitedServer(spec);
      const random = mulberry32(17);
      try {
        let now = 0;
        let refusals = 0;
        for (let i = 0; i < 200; i++) {
          now += Math.floor(random() * 150);
          const answer = await server.send(now, "key-a");
          if (answer.status === 200) continue;
          refusals++;
          const wait = Number(answer.retryAfter) * 1000;
          expect(wait).toBeGreaterThan(0);
          // Not a second earlier (rounded up: the budget was still short a second before).
          if (wait > 1000) expect((await server.send(now + wait - 1000, "key-a")).status, `${spec} at ${now}`).toBe(429);
          now += wait;
          expect((await server.send(now, "key-a")).status, `${spec} at ${now}`).toBe(200);
        }
        expect(refusals, spec).toBeGreaterThan(0);
      } finally {
        await server.app.close();
      }
    }
  });

  it("keeps one budget per API key, and one for the requests without a key", async () => {
    const server = await limitedServer("rate=1/s");
    try {
      expect((await server.send(0, "key-a")).status).toBe(200);
      expect((await server.send(0, "key-a")).status).toBe(429);
      expect((await server.send(0, "key-b")).status).toBe(200);
      expect((await server.send(0)).status).toBe(200);
      expect((await server.send(0)).status).toBe(429);
      expect((await server.send(0, "key-b")).status).toBe(429);
      expect(server.faults.stats().rateLimited).toBe(3);
    } finally {
      await server.app.close();
    }
  });

  it("refuses before the drawn faults, which neither apply to nor count a refused request; methods narrows it", async () => {
    const server = await limitedServer("rate=1/s,throttle=1,retry-after=0,methods=POST");
    try {
      expect((await server.send(0, "key-a", "POST")).retryAfter).toBe("0");
      const refused = await server.send(0, "key-a", "POST");
      expect(refused.retryAfter).toBe("1");
      expect(server.faults.stats()).toMatchObject({ requests: 2, throttle: 1, rateLimited: 1 });
      // GETs are not subject: neither limited nor counted.
      expect((await Promise.all([server.send(0, "key-a"), server.send(0, "key-a")])).map((answer) => answer.status)).toEqual([200, 200]);
      server.faults.set(undefined);
      expect((await server.send(0, "key-a", "POST")).status).toBe(200);
    } finally {
      await server.app.close();
    }
  });
});

describe("the rate limit over HTTP, from startEmulator's faults", () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({
      faults: "rate=5/s",
      workspaces: [
        { name: "Acme", apiKey: "gms_rate_acme" },
        { name: "Beta", apiKey: "gms_rate_beta" },
      ],
    });
  });
  afterAll(() => emulator?.close());

  const get = (apiKey: string) =>
    fetch(`${emulator.url}/apps`, { headers: { authorization: `Bearer ${apiKey}` } }).then(async (response) => ({
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      body: await response.text(),
    }));

  it("refuses a workspace key past its budget with Retry-After, while another key's budget is untouched", async () => {
    const burst = await Promise.all(Array.from({ length: 8 }, () => get("gms_rate_acme")));
    const refused = burst.filter((answer) => answer.status === 429);
    // Eight at once against a budget of five (a fraction of a request refills while they arrive).
    expect(refused.length).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeLessThanOrEqual(3);
    for (const answer of refused) {
      expect(answer.retryAfter).toBe("1");
      expect(answer.body).not.toContain("gms_rate_acme");
    }
    expect((await get("gms_rate_beta")).status).toBe(200);
    expect(emulator.faults.stats().rateLimited).toBe(refused.length);
  });
});
