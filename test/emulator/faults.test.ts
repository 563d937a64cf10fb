import Fastify from "fastify";
import { Client } from "undici";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  FaultSpecError,
  Store,
  buildServer,
  formatFaultSpec,
  loadFixtures,
  parseFaultSpec,
  startEmulator,
  type FaultSpec,
} from "../../src/emulator";
import { installFaults } from "../../src/emulator/faults";
import { ACME_KEY, TEST_FIXTURES } from "./harness";

describe("parseFaultSpec", () => {
  it("reads every key, in any order, into the spec object", () => {
    expect(
      parseFaultSpec(
        "seed=7,error=0.05,status=502,throttle=.1,retry-after=0,latency=5-50,reset=0.02,lost=0,late=0.03,late-by=10-90,deadline=100,methods=POST+put",
      ),
    ).toEqual({
      seed: 7,
      error: 0.05,
      status: 502,
      throttle: 0.1,
      retryAfter: 0,
      latency: [5, 50],
      reset: 0.02,
      lost: 0,
      late: 0.03,
      lateBy: [10, 90],
      deadline: 100,
      methods: ["POST", "put"],
    });
    expect(parseFaultSpec(" lost=1 , latency=20 ")).toEqual({ lost: 1, latency: 20 });
    expect(parseFaultSpec("")).toEqual({});
    expect(parseFaultSpec("error=0.1,throttle=0.2,reset=0.3,lost=0.4")).toMatchObject({ lost: 0.4 });
    expect(parseFaultSpec("late=1,late-by=250")).toEqual({ late: 1, lateBy: 250 });
  });

  it("formats the spec with its defaults, in a form that reads back the same", () => {
    expect(formatFaultSpec("")).toBe("seed=1");
    const text = formatFaultSpec("lost=0.02,methods=post+PUT,retry-after=0,throttle=0.05,error=0.05,seed=7,latency=3-3");
    expect(text).toBe("seed=7,error=0.05,status=503,throttle=0.05,retry-after=0,latency=3,lost=0.02,methods=POST+PUT");
    expect(formatFaultSpec(parseFaultSpec(text))).toBe(text);
    expect(formatFaultSpec({ seed: 2, latency: [1, 9] })).toBe("seed=2,latency=1-9");
    // A late fault names when its handler runs and the deadline it never passes, defaults included.
    expect(formatFaultSpec("late=0.1")).toBe("seed=1,late=0.1,late-by=1000,deadline=60000");
    expect(formatFaultSpec("deadline=400,late=0.1")).toBe("seed=1,late=0.1,late-by=400,deadline=400");
    const late = formatFaultSpec("late-by=5-50,late=0.2,deadline=900,seed=3");
    expect(late).toBe("seed=3,late=0.2,late-by=5-50,deadline=900");
    expect(formatFaultSpec(parseFaultSpec(late))).toBe(late);
  });

  it.each([
    [
      "colour=red",
      "colour",
      /unknown key "colour"; accepted keys: seed, error, status, throttle, retry-after, latency, latency-at, reset, lost, late, late-by, deadline, methods/,
    ],
    ["error", "error", /"error" is not key=value/],
    ["error=abc", "error", /error=abc is not accepted; expected error=<fraction from 0 to 1>/],
    ["error=1.5", "error", /error=1.5 is not accepted; expected error=<fraction from 0 to 1>/],
    ["throttle=-0.1", "throttle", /throttle=-0.1 is not accepted; expected throttle=<fraction/],
    ["reset=", "reset", /reset= is not accepted; expected reset=<fraction/],
    ["lost=2", "lost", /lost=2 is not accepted; expected lost=<fraction/],
    ["status=404", "status", /status=404 is not accepted; expected status=<500 to 599>/],
    ["retry-after=1.5", "retry-after", /retry-after=1.5 is not accepted; expected retry-after=<whole seconds>/],
    ["latency=fast", "latency", /latency=fast is not accepted; expected latency=<ms> or latency=<min>-<max>/],
    ["latency=50-5", "latency", /latency=50-5: the minimum is above the maximum; expected latency=<ms> or latency=<min>-<max>/],
    ["latency-at=later", "latency-at", /latency-at=later is not accepted; expected latency-at=request \(before the handler/],
    ["methods=POST+FETCH", "methods", /methods=POST\+FETCH is not accepted; expected methods=<METHOD>\[\+<METHOD>...\]/],
    ["methods=", "methods", /methods= is not accepted/],
    ["seed=-1", "seed", /seed=-1 is not accepted; expected seed=<whole number from 0 to 4294967295>/],
    ["seed=4294967296", "seed", /seed=4294967296 is not accepted/],
    ["seed=1,seed=2", "seed", /seed is given twice/],
    ["late=1.5", "late", /late=1.5 is not accepted; expected late=<fraction from 0 to 1>/],
    ["late=0.1,late-by=soon", "late-by", /late-by=soon is not accepted; expected late-by=<ms> or late-by=<min>-<max>/],
    ["late=0.1,late-by=90-10", "late-by", /late-by=90-10: the minimum is above the maximum; expected late-by=/],
    [
      "late=0.1,late-by=3000,deadline=2000",
      "late-by",
      /late-by=3000: above the deadline \(deadline=2000\); expected late-by=.* at most the deadline/,
    ],
    ["deadline=1.5", "deadline", /deadline=1.5 is not accepted; expected deadline=<whole milliseconds>/],
    ["deadline=-1", "deadline", /deadline=-1 is not accepted/],
    ["rate=5", "rate", /rate=5 is not accepted; expected rate=<requests>\/s or rate=<requests>\/min, a number above 0/],
    ["rate=0/s", "rate", /rate=0\/s is not accepted/],
    ["rate=-1/s", "rate", /rate=-1\/s is not accepted/],
    ["rate=5/h", "rate", /rate=5\/h is not accepted/],
    ["rate=5/s,burst=0", "burst", /burst=0 is not accepted; expected burst=<whole number of 1 or more>/],
    ["rate=5/s,burst=2.5", "burst", /burst=2.5 is not accepted/],
    ["burst=3", "burst", /burst=3 without a rate: burst is the rate limit's budget; expected rate=<requests>\/s/],
    ["error=0.6,throttle=0.3,lost=0.2", "error+throttle+reset+lost+late", /error\+throttle\+reset\+lost\+late must add up to at most 1/],
    ["lost=0.5,late=0.6", "error+throttle+reset+lost+late", /must add up to at most 1, .*\(got 1.1\)/],
  ])("refuses %s, naming %s and the accepted form", (text, key, message) => {
    let thrown: unknown;
    try {
      parseFaultSpec(text);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(FaultSpecError);
    expect(thrown).toMatchObject({ name: "FaultSpecError", code: "invalid_fault_spec", key });
    expect((thrown as Error).message).toMatch(/^invalid fault spec: /);
    expect((thrown as Error).message).toMatch(message);
  });

  it("checks spec objects the same way", () => {
    expect(() => formatFaultSpec({ error: 2 })).toThrow(/error=2 is not accepted/);
    expect(() => formatFaultSpec({ latency: [5, 1] })).toThrow(/the minimum is above the maximum/);
    expect(() => formatFaultSpec({ methods: ["TRACE"] })).toThrow(/methods=TRACE is not accepted/);
    expect(() => formatFaultSpec({ reset: 0.5, lost: 0.6 })).toThrow(/must add up to at most 1/);
    expect(() => formatFaultSpec({ late: 0.1, lateBy: [0, 700], deadline: 500 })).toThrow(/late-by=0-700: above the deadline/);
    expect(() => formatFaultSpec({ late: -1 })).toThrow(/late=-1 is not accepted/);
  });
});

type Outcome = number | "dropped";

describe("fault injection over HTTP", () => {
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  beforeEach(async () => {
    // The default workspace: its App allowance (100) leaves room for the sequences below.
    emulator = await startEmulator({ port: 0 });
  });
  afterEach(() => emulator.close());

  /** One request over real HTTP: its status, or `dropped` when the connection ended without an answer. */
  async function attempt(method: string, path: string, body?: unknown, apiKey: string | null = emulator.apiKey) {
    // No Content-Type without a body: a bodiless request then has nothing to parse, and only the hooks stand
    // between a reset and the handler.
    const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
    if (apiKey !== null) headers.authorization = `Bearer ${apiKey}`;
    try {
      const response = await fetch(`${emulator.url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { outcome: response.status as Outcome, body: text ? JSON.parse(text) : undefined, headers: response.headers };
    } catch (error) {
      expect((error as Error).message).toBe("fetch failed");
      return { outcome: "dropped" as Outcome, body: undefined, headers: undefined };
    }
  }

  const appNamed = (name: string) => emulator.store.db.get("SELECT count(*) AS n FROM apps WHERE name = ?", name) as { n: number };

  /** A fixed mix of reads and writes; returns each outcome in order. */
  async function run(count: number): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < count; i++) {
      const reply = i % 2 === 0 ? await attempt("GET", "/apps") : await attempt("POST", "/apps", { name: `app ${i}` });
      outcomes.push(reply.outcome);
    }
    return outcomes;
  }

  it("gives the same outcomes for the same seed and request sequence, others for another seed, and counts them", async () => {
    const spec = "seed=7,error=0.15,throttle=0.15,retry-after=0,reset=0.1,lost=0.1,late=0.1,late-by=0-5,deadline=50";
    emulator.faults.set(spec);
    const first = await run(40);
    const stats = emulator.faults.stats();
    emulator.faults.set(spec);
    const again = await run(40);
    emulator.faults.set(spec.replace("seed=7", "seed=8"));
    const other = await run(40);

    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
    // Every kind happened, and the stats count what the client saw (reset and lost both read as dropped).
    expect(new Set(first)).toEqual(new Set([200, 503, 429, "dropped"]));
    const seen = (outcome: Outcome) => first.filter((candidate) => candidate === outcome).length;
    expect(stats).toMatchObject({ requests: 40, error: seen(503), throttle: seen(429), delayed: 0 });
    expect(stats.reset).toBeGreaterThan(0);
    expect(stats.lost).toBeGreaterThan(0);
    expect(stats.late).toBeGreaterThan(0);
    expect(stats.reset + stats.lost + stats.late).toBe(seen("dropped"));
  });

  it("takes a fixed number of draws per request, whichever fault hit and whether latency is on", async () => {
    emulator.faults.set("seed=3,error=0.25,throttle=0.25,retry-after=0");
    const throttled = await run(24);
    emulator.faults.set("seed=3,error=0.25,reset=0.25,latency=0-1");
    const reset = await run(24);
    expect(throttled).toContain(429);
    expect(reset).toEqual(throttled.map((outcome) => (outcome === 429 ? "dropped" : outcome)));
  });

  it("error: answers 503 (or the chosen 5xx) with a detail before authentication, doing nothing", async () => {
    emulator.faults.set("error=1");
    const refused = await attempt("POST", "/apps", { name: "never made" });
    expect(refused.outcome).toBe(503);
    expect(refused.body).toEqual({ detail: "Service Unavailable (injected fault)" });
    expect(appNamed("never made").n).toBe(0);
    // Faults come before authentication: a request without a key is faulted too.
    expect((await attempt("GET", "/apps", undefined, null)).outcome).toBe(503);

    emulator.faults.set({ error: 1, status: 502 });
    const bad = await attempt("GET", "/workspaces/current");
    expect(bad.outcome).toBe(502);
    expect(bad.body).toEqual({ detail: "Service Unavailable (injected fault)" });
  });

  it("throttle: answers 429 with Retry-After, doing nothing", async () => {
    emulator.faults.set("throttle=1,retry-after=0");
    const refused = await attempt("POST", "/apps", { name: "never made" });
    expect(refused.outcome).toBe(429);
    expect(refused.headers?.get("retry-after")).toBe("0");
    expect(refused.body).toEqual({ detail: "Too Many Requests (injected fault)" });
    expect(appNamed("never made").n).toBe(0);

    emulator.faults.set("throttle=1");
    expect((await attempt("GET", "/apps")).headers?.get("retry-after")).toBe("1");
  });

  it("reset: drops the connection before the handler, so nothing is created or deleted", async () => {
    const kept = (await attempt("POST", "/apps", { name: "kept" })).body as { guid: string };
    emulator.faults.set("reset=1");
    expect((await attempt("POST", "/apps", { name: "reset before work" })).outcome).toBe("dropped");
    expect((await attempt("DELETE", `/apps/${kept.guid}`)).outcome).toBe("dropped");
    expect(emulator.faults.stats()).toMatchObject({ requests: 2, reset: 2 });
    expect(appNamed("reset before work").n).toBe(0);
    expect(emulator.store.db.get("SELECT deleted_at FROM apps WHERE guid = ?", kept.guid)).toEqual({ deleted_at: null });
    emulator.faults.set(undefined);
    expect((await attempt("POST", "/apps", { name: "after the reset" })).outcome).toBe(200);
    expect(appNamed("after the reset").n).toBe(1);
  });

  it("lost: the handler's write commits, then the connection drops without an answer", async () => {
    emulator.faults.set("lost=1");
    expect((await attempt("POST", "/apps", { name: "made but unanswered" })).outcome).toBe("dropped");
    expect(emulator.faults.stats()).toMatchObject({ requests: 1, lost: 1 });
    expect(appNamed("made but unanswered").n).toBe(1);
    emulator.faults.set(undefined);
    const apps = await attempt("GET", "/apps");
    expect(apps.body.data.map((app: { name: string }) => app.name)).toContain("made but unanswered");
  });

  it("hold: a write commits and its answer waits until released; a second hold shares the first's release", async () => {
    const release = emulator.faults.hold();
    expect(emulator.faults.hold()).toBe(release);
    let answered = false;
    const reply = attempt("POST", "/apps", { name: "made while held" }).finally(() => (answered = true));
    for (let waited = 0; appNamed("made while held").n === 0 && waited < 5_000; waited += 10) await sleep(10);
    expect(appNamed("made while held").n).toBe(1);
    await sleep(100);
    expect(answered).toBe(false);
    release();
    expect((await reply).outcome).toBe(200);
    // Released: answers flow again at once.
    expect((await attempt("GET", "/apps")).outcome).toBe(200);
  });

  it("hold: closing the server lets the held answers go", async () => {
    emulator.faults.hold();
    const reply = attempt("POST", "/apps", { name: "held at close" });
    for (let waited = 0; appNamed("held at close").n === 0 && waited < 5_000; waited += 10) await sleep(10);
    // Without the release, the server's close would wait for this answer for ever.
    await emulator.close();
    expect(["dropped", 200]).toContain((await reply).outcome);
  });

  it("late: the connection drops first, and the handler's write commits after the client has gone", async () => {
    emulator.faults.set("late=1,late-by=50,deadline=1000");
    expect((await attempt("POST", "/apps", { name: "made after the client left" })).outcome).toBe("dropped");
    expect(emulator.faults.stats()).toMatchObject({ requests: 1, late: 1 });
    await emulator.faults.idle();
    expect(appNamed("made after the client left").n).toBe(1);
    // Authentication answers before any handler: the client is dropped all the same, and nothing is made.
    expect((await attempt("POST", "/apps", { name: "no key" }, null)).outcome).toBe("dropped");
    expect(emulator.faults.stats()).toMatchObject({ requests: 2, late: 2 });
  });

  it("leaves other keep-alive connections working when one is destroyed", async () => {
    let connections = 0;
    emulator.server.server.on("connection", () => connections++);
    const origin = new URL(emulator.url).origin;
    const steady = new Client(origin);
    const doomed = new Client(origin);
    const headers = { authorization: `Bearer ${emulator.apiKey}`, "content-type": "application/json" };
    try {
      const warm = await steady.request({ method: "GET", path: "/v1/apps", headers });
      expect(warm.statusCode).toBe(200);
      await warm.body.text();
      expect(connections).toBe(1);

      emulator.faults.set("reset=1,methods=POST");
      await expect(doomed.request({ method: "POST", path: "/v1/apps", headers, body: JSON.stringify({ name: "x" }) })).rejects.toThrow();
      emulator.faults.set("lost=1,methods=POST");
      await expect(doomed.request({ method: "POST", path: "/v1/apps", headers, body: JSON.stringify({ name: "y" }) })).rejects.toThrow();
      expect(connections).toBe(3);

      // The first connection is still open and still answers: no new connection was needed.
      const after = await steady.request({ method: "GET", path: "/v1/apps", headers });
      expect(after.statusCode).toBe(200);
      expect((JSON.parse(await after.body.text()) as { data: { name: string }[] }).data.map((app) => app.name)).toEqual(["y"]);
      expect(connections).toBe(3);
    } finally {
      await steady.close();
      await doomed.close();
    }
  });

  it("faults only the methods named", async () => {
    emulator.faults.set("error=1,methods=POST+put");
    const created = await (async () => {
      emulator.faults.set(undefined);
      const reply = await attempt("POST", "/apps", { name: "target" });
      emulator.faults.set("error=1,methods=POST+put");
      return reply.body as { guid: string };
    })();
    expect((await attempt("GET", "/apps")).outcome).toBe(200);
    expect((await attempt("POST", "/apps", { name: "x" })).outcome).toBe(503);
    expect((await attempt("PUT", `/apps/${created.guid}`, { name: "renamed" })).outcome).toBe(503);
    expect((await attempt("DELETE", `/apps/${created.guid}`)).outcome).toBe(200);
    expect(emulator.faults.stats()).toMatchObject({ requests: 2, error: 2 });
  });

  it("never faults signed file downloads or unknown paths, so Context Source processing still indexes", async () => {
    const text = "Returns within 30 days.";
    const upload = await attempt("POST", "/files/upload", { data: `data:text/plain;base64,${Buffer.from(text).toString("base64")}` });
    const contexts = await attempt("GET", "/contexts/nope");
    expect(contexts.outcome).toBe(404); // the default workspace has no Context yet: make one through the store
    const caller = emulator.store.workspaces.authenticate(emulator.apiKey)!;
    const context = emulator.store.contexts.create(caller, { name: "Policies" }).guid;
    const source = await attempt("POST", `/contexts/${context}/context_sources`, { url: upload.body.url });
    expect(source.outcome).toBe(200);

    emulator.faults.set("reset=1,methods=GET");
    const download = await fetch(upload.body.url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(text);
    expect((await attempt("GET", "/nothing-here")).outcome).toBe(404);
    expect(await attempt("GET", "/apps").then((reply) => reply.outcome)).toBe("dropped");
    // Processing (a POST, not subject) fetches the signed URL over HTTP while every API GET is reset.
    expect((await attempt("POST", `/context_sources/${source.body.guid}/process`, { contextGuid: context })).outcome).toBe(200);
    await emulator.store.contextSources.idle();
    expect(emulator.faults.stats()).toMatchObject({ requests: 1, reset: 1 });

    emulator.faults.set(undefined);
    const processed = await attempt("GET", `/contexts/${context}/context_sources/${source.body.guid}`);
    expect(processed.body).toMatchObject({ indexing_status: "indexed", indexing_metadata: { documents: 1 } });
  });

  it("set(undefined) turns faults off and zeroes the stats; a bad spec is refused and the current one kept", async () => {
    emulator.faults.set("error=1");
    expect((await attempt("GET", "/apps")).outcome).toBe(503);
    expect(emulator.faults.stats()).toEqual({ requests: 1, error: 1, throttle: 0, reset: 0, lost: 0, late: 0, delayed: 0, rateLimited: 0 });
    expect(() => emulator.faults.set("error=lots")).toThrow(FaultSpecError);
    expect((await attempt("GET", "/apps")).outcome).toBe(503);
    expect(emulator.faults.stats()).toMatchObject({ requests: 2, error: 2 });

    emulator.faults.set(undefined);
    expect((await attempt("GET", "/apps")).outcome).toBe(200);
    expect(emulator.faults.stats()).toEqual({ requests: 0, error: 0, throttle: 0, reset: 0, lost: 0, late: 0, delayed: 0, rateLimited: 0 });
  });

  it("counts delayed requests: every one with a latency above 0, none without", async () => {
    emulator.faults.set("latency=1-2,methods=GET");
    await run(6);
    expect(emulator.faults.stats()).toMatchObject({ requests: 3, delayed: 3 });
    emulator.faults.set("latency=0,error=0.5");
    await run(6);
    expect(emulator.faults.stats()).toMatchObject({ requests: 6, delayed: 0 });
  });
});

describe("fault injection at startup", () => {
  it("takes the spec from startEmulator's options, as a string or an object", async () => {
    for (const faults of ["error=1,status=500", { error: 1, status: 500 } satisfies FaultSpec]) {
      const emulator = await startEmulator({ port: 0, fixtures: TEST_FIXTURES, faults });
      try {
        const response = await fetch(`${emulator.url}/apps`, { headers: { authorization: `Bearer ${ACME_KEY}` } });
        expect(response.status).toBe(500);
        expect(emulator.faults.stats()).toMatchObject({ requests: 1, error: 1 });
      } finally {
        await emulator.close();
      }
    }
  });

  it("refuses a bad spec before listening", async () => {
    await expect(startEmulator({ port: 0, faults: "error=2" })).rejects.toThrow(/error=2 is not accepted/);
  });
});

describe("fault injection in-process", () => {
  it("under inject, a reset, lost or late request fails as a dropped connection would, and only lost and late do the work", async () => {
    const store = new Store();
    loadFixtures(store, TEST_FIXTURES);
    const server = buildServer(store, { faults: "reset=1" });
    const post = (name: string) =>
      server.inject({ method: "POST", url: "/v1/apps", headers: { authorization: `Bearer ${ACME_KEY}` }, payload: { name } });
    const named = (name: string) => store.db.get("SELECT count(*) AS n FROM apps WHERE name = ?", name);
    try {
      await expect(post("reset in-process")).rejects.toMatchObject({ code: "LIGHT_ECONNRESET" });
      expect(named("reset in-process")).toEqual({ n: 0 });
      server.faults.set("lost=1");
      await expect(post("lost in-process")).rejects.toMatchObject({ code: "LIGHT_ECONNRESET" });
      expect(named("lost in-process")).toEqual({ n: 1 });
      expect(server.faults.stats()).toMatchObject({ requests: 1, lost: 1 });
      server.faults.set("late=1,late-by=20,deadline=1000");
      await expect(post("late in-process")).rejects.toMatchObject({ code: "LIGHT_ECONNRESET" });
      await vi.waitFor(() => expect(named("late in-process")).toEqual({ n: 1 }), { interval: 5 });
      expect(server.faults.stats()).toMatchObject({ requests: 1, late: 1 });
    } finally {
      await server.close();
      store.close();
    }
  });
});

describe("late completions, their order and their deadline", () => {
  /**
   * A bare server with the fault hooks over a real socket: a late request's wait is held until the test
   * releases it, on a clock the test moves (a late wait honours the server's closing signal).
   */
  async function lateServer(spec: string) {
    const clock = { now: 0 };
    const waits: { ms: number; release: () => void }[] = [];
    const app = Fastify();
    const handled: string[] = [];
    const faults = installFaults(app, spec, {
      now: () => clock.now,
      sleep: (ms, signal) =>
        new Promise<void>((resolve, reject) => {
          waits.push({ ms, release: resolve });
          signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
        }),
    });
    app.post("/v1/things", async (request) => {
      handled.push((request.body as { name: string }).name);
      return { ok: true };
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = app.server.address() as { port: number };
    const post = (name: string) =>
      fetch(`http://127.0.0.1:${port}/v1/things`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name }),
      }).then(
        (response) => response.status,
        () => "dropped" as const,
      );
    const waitedFor = async (count: number) => vi.waitFor(() => expect(waits).toHaveLength(count), { interval: 5 });
    return { app, clock, waits, handled, faults, post, waitedFor };
  }

  it("runs the handler only after the client's connection is gone, waiting the drawn time", async () => {
    const server = await lateServer("seed=4,late=1,late-by=100-200,deadline=500");
    try {
      // The client has already seen the connection drop while the handler has not run.
      expect(await server.post("first")).toBe("dropped");
      await server.waitedFor(1);
      expect(server.handled).toEqual([]);
      let idle = false;
      const settled = server.faults.idle().then(() => (idle = true));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(idle).toBe(false);
      server.clock.now += server.waits[0]!.ms;
      server.waits[0]!.release();
      // idle() resolves once the handler has run.
      await settled;
      expect(server.handled).toEqual(["first"]);
      expect(server.waits[0]!.ms).toBeGreaterThanOrEqual(100);
      expect(server.waits[0]!.ms).toBeLessThanOrEqual(200);
      expect(server.faults.stats()).toMatchObject({ requests: 1, late: 1 });
    } finally {
      await server.app.close();
    }
  });

  it("never runs a handler past the deadline, and none once the server closes", async () => {
    const server = await lateServer("late=1,late-by=100,deadline=300");
    try {
      expect(await server.post("overdue")).toBe("dropped");
      await server.waitedFor(1);
      // Its wait ended after the deadline (a busy machine's timer): the handler is skipped.
      server.clock.now += 301;
      server.waits[0]!.release();
      expect(await server.post("cut short")).toBe("dropped");
      await server.waitedFor(2);
      await server.app.close();
      // Its wait ends after the server has closed (closing aborted it; a timer would fire now): no handler runs.
      server.waits[1]!.release();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(server.handled).toEqual([]);
      expect(server.faults.stats()).toMatchObject({ requests: 2, late: 2 });
    } finally {
      await server.app.close();
    }
  });
});

describe("latency", () => {
  it("waits out a delay drawn from the range before the handler runs, the same delays for the same seed", async () => {
    const delays: number[] = [];
    let release = () => {};
    const app = Fastify();
    let handled = 0;
    const faults = installFaults(app, "seed=5,latency=10-20", {
      sleep: (ms) => {
        delays.push(ms);
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    app.get("/v1/thing", async () => {
      handled++;
      return { ok: true };
    });
    await app.ready();
    try {
      const pending = app.inject({ method: "GET", url: "/v1/thing" });
      await new Promise((resolve) => setImmediate(resolve));
      expect(delays).toHaveLength(1);
      expect(handled).toBe(0);
      release();
      expect((await pending).statusCode).toBe(200);
      expect(handled).toBe(1);

      const later = async () => {
        const reply = app.inject({ method: "GET", url: "/v1/thing" });
        await new Promise((resolve) => setImmediate(resolve));
        release();
        await reply;
      };
      for (let i = 0; i < 7; i++) await later();
      const firstRun = delays.splice(0);
      faults.set("seed=5,latency=10-20");
      for (let i = 0; i < 8; i++) await later();
      expect(delays).toEqual(firstRun);
      expect(firstRun.every((ms) => ms >= 10 && ms <= 20)).toBe(true);
      expect(new Set(firstRun).size).toBeGreaterThan(1);
      expect(faults.stats()).toMatchObject({ requests: 8, delayed: 8 });
    } finally {
      await app.close();
    }
  });

  it("latency-at=answer runs the handler first and then waits before the answer; format keeps it", async () => {
    let release = () => {};
    const app = Fastify();
    let handled = 0;
    installFaults(app, "seed=5,latency=10-20,latency-at=answer", {
      sleep: () => new Promise<void>((resolve) => (release = resolve)),
    });
    app.get("/v1/thing", async () => {
      handled++;
      return { ok: true };
    });
    await app.ready();
    try {
      let answered = false;
      const pending = app.inject({ method: "GET", url: "/v1/thing" }).then((reply) => {
        answered = true;
        return reply;
      });
      for (let i = 0; i < 5 && handled === 0; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(handled).toBe(1);
      expect(answered).toBe(false);
      release();
      expect((await pending).statusCode).toBe(200);
      expect(parseFaultSpec("latency-at=answer,latency=5")).toEqual({ latencyAt: "answer", latency: 5 });
      expect(formatFaultSpec("latency=5,latency-at=answer")).toBe("seed=1,latency=5,latency-at=answer");
    } finally {
      await app.close();
    }
  });
});
