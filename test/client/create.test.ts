/**
 * `GmsClient.create`: a POST whose answer is lost is resolved by a lookup, never blindly replayed; while
 * the service may still be acting on it, an empty lookup is not proof, and the client looks again until
 * the service's request deadline has passed. The scripted server plays the service; `findCreated` is the
 * caller's list of matching objects. Waits run on a fake clock that only the client's sleeps move; the last
 * tests drive the emulator, whose late fault completes a create after the client has gone.
 */
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { appsApi } from "../../src/api/apps";
import {
  ConnectionError,
  type CreatedCandidate,
  GmsClient,
  LimitExceededError,
  ResponseShapeError,
  ServerError,
  TimeoutError,
  MayExistError,
  type MayExist,
  ValidationError,
  operationTimeout,
  path,
  withOperationTimeout,
} from "../../src/client";
import { mayStillBeActing } from "../../src/client/create";
import { startEmulator } from "../../src/emulator";
import { type Step, destroyAfterReceiving, json, scriptedClients } from "./scripted-server";

const { connect } = scriptedClients();
const GUID = "6f1d0c2a-3b4e-4f5a-8b6c-7d8e9f0a1b2c";
const OTHER = "0a9b8c7d-6e5f-4a3b-9c2d-1e0f2a3b4c5d";
const Record = z.object({ guid: z.string(), name: z.string() });
const noSleep = { retryTiming: { sleep: async () => {}, random: () => 0 } };

/** A clock that only the client's sleeps move: a test counts the waits, it never measures them. */
function fakeClock() {
  const clock = { now: 0, sleeps: [] as number[] };
  const retryTiming = {
    sleep: async (ms: number) => {
      clock.sleeps.push(ms);
      clock.now += ms;
    },
    random: () => 0,
    now: () => clock.now,
  };
  return { clock, retryTiming };
}

function creating(client: Awaited<ReturnType<typeof connect>>["client"], findCreated: () => Promise<CreatedCandidate[]>) {
  return client.create({
    path: path`/apps`,
    body: { name: "support" },
    schema: Record,
    findCreated,
  });
}

/** What a create that may have made its object left unresolved: the window and the candidates. */
function unresolvedOf(error: unknown): Extract<MayExist, { state: "unresolved" }> & { message: string } {
  expect(error).toBeInstanceOf(MayExistError);
  const { made, message, code } = error as MayExistError;
  expect(made.state).toBe("unresolved");
  expect(code).toBe("unresolved_create");
  return { ...(made as Extract<MayExist, { state: "unresolved" }>), message };
}

const methods = (requests: { method: string; url: string }[]) => requests.map((request) => `${request.method} ${request.url}`);

describe("GmsClient.create", () => {
  it("sends one POST when the answer arrives, and claims the GUID", async () => {
    const { server, client } = await connect(json(200, { guid: GUID, name: "support" }), noSleep);
    let lookups = 0;
    await expect(creating(client, async () => (lookups++, []))).resolves.toEqual({ guid: GUID, name: "support" });
    expect(methods(server.requests)).toEqual(["POST /v1/apps"]);
    expect(lookups).toBe(0);
    expect(client.claimed.has(GUID)).toBe(true);
  });

  it("adopts the object a POST created when its answer was lost, instead of creating a second one", async () => {
    const { server, client } = await connect([destroyAfterReceiving, json(200, { guid: GUID, name: "support" })], noSleep);
    const created = await creating(client, async () => [{ guid: GUID, createdAt: new Date().toISOString() }]);
    expect(created).toEqual({ guid: GUID, name: "support" });
    expect(methods(server.requests)).toEqual(["POST /v1/apps", `GET /v1/apps/${GUID}`]);
  });

  it("reports the object it found as made, though unread, when reading it back fails: it exists", async () => {
    const { server, client } = await connect([destroyAfterReceiving, json(400, { detail: "unreadable" })], { ...noSleep, maxRetries: 0 });
    const error = await creating(client, async () => [{ guid: GUID, createdAt: new Date().toISOString() }]).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(MayExistError);
    const { made, message, code } = error as MayExistError;
    expect(made).toEqual({ state: "made", id: GUID, outputs: {} });
    expect(code).toBe("created_but_failed");
    expect(message).toBe(`POST /apps: the answer was lost; the object it made (${GUID}) was found, but reading it failed (400 unreadable)`);
    expect(client.claimed.has(GUID)).toBe(true);
    expect(methods(server.requests)).toEqual(["POST /v1/apps", `GET /v1/apps/${GUID}`]);
  });

  it("sends creates a lookup could not tell apart one at a time, so a lost answer never meets a concurrent twin", async () => {
    const { server, client } = await connect(
      [destroyAfterReceiving, json(200, { guid: GUID, name: "support" }), json(200, { guid: OTHER, name: "support" })],
      noSleep,
    );
    const now = () => new Date().toISOString();
    // Both start at once with the same body; the second POST leaves only once the first create is settled.
    const [first, second] = await Promise.all([
      creating(client, async () => [{ guid: GUID, createdAt: now() }]),
      creating(client, async () => [
        { guid: GUID, createdAt: now() },
        { guid: OTHER, createdAt: now() },
      ]),
    ]);
    expect([first.guid, second.guid]).toEqual([GUID, OTHER]);
    expect(methods(server.requests)).toEqual(["POST /v1/apps", `GET /v1/apps/${GUID}`, "POST /v1/apps"]);
    expect(client.creating.size).toBe(0);
  });

  it("sends the POST again only after the lookup proved nothing was created (a 503)", async () => {
    const { server, client } = await connect([json(503, { detail: "busy" }), json(200, { guid: GUID, name: "support" })], noSleep);
    let lookups = 0;
    await expect(creating(client, async () => (lookups++, []))).resolves.toMatchObject({ guid: GUID });
    expect(methods(server.requests)).toEqual(["POST /v1/apps", "POST /v1/apps"]);
    expect(lookups).toBe(1);
  });

  it("ignores objects created before the POST was sent, and objects this client already holds", async () => {
    const { server, client } = await connect(
      [json(200, { guid: OTHER, name: "support" }), destroyAfterReceiving, json(200, { guid: GUID, name: "support" })],
      noSleep,
    );
    await creating(client, async () => []);
    const old = { guid: "11111111-2222-4333-8444-555555555555", createdAt: "2020-01-01T00:00:00.000Z" };
    const created = await creating(client, async () => [old, { guid: OTHER }, { guid: GUID, createdAt: new Date().toISOString() }]);
    expect(created.guid).toBe(GUID);
    expect(methods(server.requests).slice(1)).toEqual(["POST /v1/apps", `GET /v1/apps/${GUID}`]);
  });

  it("gives up after maxRetries + 1 POSTs that each proved to do nothing, with the count on the error", async () => {
    const { server, client } = await connect(json(503, { detail: "unavailable" }), { ...noSleep, maxRetries: 2 });
    const error = await creating(client, async () => []).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 503, attempts: 3 });
    expect(server.requests).toHaveLength(3);
  });

  it("stops with the creation window when the lookup fails too: it may exist, up to the service's deadline", async () => {
    const { clock, retryTiming } = fakeClock();
    const { server, client } = await connect(destroyAfterReceiving, { retryTiming, requestDeadlineMs: 45_000 });
    const before = Date.now();
    const lookups: number[] = [];
    const error = await creating(client, async () => {
      lookups.push(clock.now);
      throw new Error("lookup unreachable");
    }).catch((caught: unknown) => caught);
    const { window, message } = unresolvedOf(error);
    expect(message).toMatch(/answer was lost .* looking up whether the object was created failed too \(lookup unreachable\); it may exist/);
    expect(Date.parse(window.since)).toBeLessThan(before);
    // The service may still make it until its deadline: a later run searches that far.
    expect(Date.parse(window.until)).toBeGreaterThanOrEqual(before - 1_000 + 45_000);
    // Lookups that failed before the deadline were made again; the one after it settled that it is unknown.
    expect(lookups.length).toBeGreaterThan(1);
    expect(lookups.at(-1)).toBeGreaterThanOrEqual(45_250);
    expect(server.requests).toHaveLength(1);
  });

  it("refuses to guess when several fresh objects match", async () => {
    const { client } = await connect(destroyAfterReceiving, noSleep);
    const now = new Date().toISOString();
    const error = await creating(client, async () => [
      { guid: GUID, createdAt: now },
      { guid: OTHER, createdAt: now },
    ]).catch((caught: unknown) => caught);
    expect(unresolvedOf(error).candidates).toEqual([GUID, OTHER]);
  });

  it.each([
    [400, ValidationError, {}],
    [429, LimitExceededError, {}],
  ] as const)("passes a definite %i through without a lookup", async (status, type, headers) => {
    const { server, client } = await connect(json(status, { detail: "no" }, headers), noSleep);
    let lookups = 0;
    await expect(creating(client, async () => (lookups++, []))).rejects.toBeInstanceOf(type);
    expect(lookups).toBe(0);
    expect(server.requests).toHaveLength(1);
  });
});

describe("GmsClient.create while the service may still be acting on a lost POST", () => {
  /** The POST arrived and the connection was cut: the service may complete it at any time up to its deadline. */
  const lostInFlight: Step = destroyAfterReceiving;

  it("never sends a second POST while the object may still appear: it looks again until it does", async () => {
    const { clock, retryTiming } = fakeClock();
    const { server, client } = await connect([lostInFlight, json(200, { guid: GUID, name: "support" })], {
      retryTiming,
      requestDeadlineMs: 10_000,
    });
    // The service completes the POST 7 s after it was sent, well after the first lookups.
    const lookups: number[] = [];
    const created = await creating(client, async () => {
      lookups.push(clock.now);
      return clock.now >= 7_000 ? [{ guid: GUID, createdAt: new Date().toISOString() }] : [];
    });
    expect(created).toEqual({ guid: GUID, name: "support" });
    expect(methods(server.requests)).toEqual(["POST /v1/apps", `GET /v1/apps/${GUID}`]);
    expect(lookups.length).toBeGreaterThan(2);
    expect(lookups.at(-2)).toBeLessThan(7_000);
    expect(client.claimed.has(GUID)).toBe(true);
  });

  it("looks again after a lookup fails while the service may still act, and adopts what appears", async () => {
    const { clock, retryTiming } = fakeClock();
    const { server, client } = await connect([lostInFlight, json(200, { guid: GUID, name: "support" })], {
      retryTiming,
      requestDeadlineMs: 10_000,
    });
    let lookups = 0;
    const created = await creating(client, async () => {
      if (++lookups === 1) throw new Error("lookup unreachable");
      return clock.now >= 3_000 ? [{ guid: GUID, createdAt: new Date().toISOString() }] : [];
    });
    expect(created.guid).toBe(GUID);
    expect(lookups).toBeGreaterThan(2);
    expect(methods(server.requests)).toEqual(["POST /v1/apps", `GET /v1/apps/${GUID}`]);
  });

  it("sends the POST again once a lookup begun after the deadline (plus a quarter second) finds nothing", async () => {
    const { clock, retryTiming } = fakeClock();
    let secondPostAt: number | undefined;
    const answer = json(200, { guid: GUID, name: "support" });
    const { server, client } = await connect(
      [
        lostInFlight,
        (request, response) => {
          secondPostAt = clock.now;
          answer(request, response);
        },
      ],
      { retryTiming, requestDeadlineMs: 10_000 },
    );
    const lookups: number[] = [];
    await expect(creating(client, async () => (lookups.push(clock.now), []))).resolves.toMatchObject({ guid: GUID });
    expect(methods(server.requests)).toEqual(["POST /v1/apps", "POST /v1/apps"]);
    // Every lookup but the last began before the deadline; the last one after it, and the POST followed.
    expect(lookups.slice(0, -1).every((at) => at < 10_250)).toBe(true);
    expect(lookups.at(-1)).toBeGreaterThanOrEqual(10_250);
    expect(secondPostAt).toBe(lookups.at(-1));
    // Backing off: the waits between lookups grow (the last one is cut short at the deadline).
    expect(clock.sleeps.length).toBe(lookups.length);
    expect(clock.sleeps.slice(1, -1).every((ms, i, waits) => i === 0 || ms >= waits[i - 1]!)).toBe(true);
  });

  it.each([
    ["a gateway's 502", json(502, { detail: "bad gateway" })],
    ["a gateway's 504", json(504, { detail: "gateway timeout" })],
  ])("treats %s as a POST the service may still be running", async (_name, first) => {
    const { clock, retryTiming } = fakeClock();
    const { server, client } = await connect([first, json(200, { guid: GUID, name: "support" })], {
      retryTiming,
      requestDeadlineMs: 4_000,
    });
    let lookups = 0;
    await creating(client, async () => (lookups++, []));
    expect(lookups).toBeGreaterThan(1);
    expect(clock.now).toBeGreaterThanOrEqual(4_250);
    expect(server.requests).toHaveLength(2);
  });

  it("does not wait when the service answered for itself (a 503): one lookup, then the POST again", async () => {
    const { clock, retryTiming } = fakeClock();
    const { server, client } = await connect([json(503, { detail: "busy" }), json(200, { guid: GUID, name: "support" })], {
      retryTiming,
      requestDeadlineMs: 60_000,
    });
    let lookups = 0;
    await creating(client, async () => (lookups++, []));
    expect(lookups).toBe(1);
    expect(clock.now).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(2);
  });

  it("leaves the create unresolved, up to the deadline, when the deadline is further off than it waits", async () => {
    const { clock, retryTiming } = fakeClock();
    const { server, client } = await connect(lostInFlight, {
      retryTiming: { ...retryTiming, maxSettleWaitMs: 30_000 },
      requestDeadlineMs: 600_000,
    });
    const before = Date.now();
    let lookups = 0;
    const error = await creating(client, async () => (lookups++, [])).catch((caught: unknown) => caught);
    const { window, message, candidates } = unresolvedOf(error);
    expect(message).toMatch(
      new RegExp(
        "answer was lost \\(connection .*\\) and the service may still create the object until .* \\(its request deadline, " +
          "600000 ms after sending\\); nothing has appeared yet, .* longer than this client waits \\(30000 ms\\); it may exist",
      ),
    );
    expect(Date.parse(window.until)).toBeGreaterThanOrEqual(before - 1_000 + 600_000);
    expect(candidates).toEqual([]);
    expect(lookups).toBe(1);
    expect(clock.now).toBeLessThan(30_000);
    expect(server.requests).toHaveLength(1);
  });

  it("leaves the create unresolved when the engine's timeout for the step runs out before the deadline, naming it", async () => {
    const { retryTiming } = fakeClock();
    const { server, client } = await connect(lostInFlight, { retryTiming, requestDeadlineMs: 60_000 });
    let lookups = 0;
    const error = await withOperationTimeout("create", 2, () => creating(client, async () => (lookups++, []))).catch(
      (caught: unknown) => caught,
    );
    expect(unresolvedOf(error).message).toMatch(
      /nothing has appeared yet, and that is \d+ s away, longer than the step has left of the create's timeout of 2 s \(customTimeouts\.create\); it may exist/,
    );
    expect(lookups).toBe(1);
    expect(server.requests).toHaveLength(1);
    // Without the engine's bound, the same create waits for the deadline (the fake clock's), as above.
    expect(operationTimeout()).toBeUndefined();
  });

  it("tells the errors after which the service may still act from those after which it has finished", () => {
    const label = { method: "POST", path: "/apps" };
    expect(mayStillBeActing(new TimeoutError({ ...label, detail: "slow" }))).toBe(true);
    expect(mayStillBeActing(new ConnectionError({ ...label, detail: "cut" }, false))).toBe(true);
    expect(mayStillBeActing(new ServerError({ ...label, status: 502, detail: "bad gateway" }))).toBe(true);
    expect(mayStillBeActing(new ServerError({ ...label, status: 504, detail: "gateway timeout" }))).toBe(true);
    // Never sent, or answered by the service: it has finished with the request.
    expect(mayStillBeActing(new ConnectionError({ ...label, detail: "refused" }, true))).toBe(false);
    expect(mayStillBeActing(new ConnectionError({ ...label, detail: "body cut" }, false, true))).toBe(false);
    expect(mayStillBeActing(new ServerError({ ...label, status: 500, detail: "broke" }))).toBe(false);
    expect(mayStillBeActing(new ServerError({ ...label, status: 503, detail: "busy" }))).toBe(false);
    expect(mayStillBeActing(new ResponseShapeError({ ...label, status: 200, detail: "not JSON" }))).toBe(false);
  });

  it("marks a connection cut after the status line as answered, and one cut before it as not", async () => {
    const cutBody: Step = (request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      response.write('{"guid":');
      setTimeout(() => request.socket.destroy(), 20);
    };
    const { client } = await connect([cutBody, lostInFlight], { maxRetries: 0 });
    const request = () => client.request({ method: "GET", path: path`/apps`, schema: z.unknown() }).catch((caught: unknown) => caught);
    expect(await request()).toMatchObject({ name: "ConnectionError", answered: true });
    expect(await request()).toMatchObject({ name: "ConnectionError", answered: false });
  });
});

describe("GmsClient.create against the emulator's late completions", () => {
  /** Creates an App the way the App resource does; `findCreated` lists the Apps of that name. */
  const createApp = (client: GmsClient, name: string) =>
    appsApi.create(client, { name }, async () =>
      (await appsApi.list(client)).filter((app) => app.name === name).map((app) => ({ guid: app.guid, createdAt: app.createdAt })),
    );

  it("adopts the App the service made after the client had gone, with no second POST", async () => {
    const emulator = await startEmulator({ faults: "late=1,late-by=300,deadline=1500,methods=POST" });
    const client = new GmsClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, requestDeadlineMs: 1_500 });
    try {
      const created = await createApp(client, "late support");
      const apps = emulator.store.db.all<{ guid: string }>("SELECT guid FROM apps WHERE name = ?", "late support");
      expect(apps).toEqual([{ guid: created.guid }]);
      // One POST, faulted late; the lookups (GETs) were not subject.
      expect(emulator.faults.stats()).toMatchObject({ requests: 1, late: 1 });
    } finally {
      await client.close();
      await emulator.close();
    }
  });

  it("sends the POST again after the deadline when the first never ran (reset), and makes one App", async () => {
    const emulator = await startEmulator({ faults: "reset=1,methods=POST" });
    const client = new GmsClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, requestDeadlineMs: 200 });
    // The second POST goes through: faults end once the first has been seen.
    const waiting = vi
      .waitFor(() => expect(emulator.faults.stats().requests).toBe(1), { interval: 5 })
      .then(() => emulator.faults.set(undefined));
    try {
      const created = await createApp(client, "reset support");
      await waiting;
      const apps = emulator.store.db.all<{ guid: string }>("SELECT guid FROM apps WHERE name = ?", "reset support");
      expect(apps).toEqual([{ guid: created.guid }]);
    } finally {
      await client.close();
      await emulator.close();
    }
  });
});
