/**
 * AdaptivePacer (src/client/pacer.ts) on a clock the test moves (each wait for a turn moves it): the window of requests
 * in flight (4 at first, one more a round trip, halved at a refusal); passing refusals, which teach no rate; a limit
 * learned when most answers since the first refusal are refusals (what was accepted in the last second since the
 * first refusal, a little less, a burst before it left out; one in a quarter second when none was), and each change of
 * the rate told once with why; answers to requests sent before a cut not judged; turns spaced by the rate; a probe at
 * once from the first limit and after each calm spell, stepped back from when refused (no higher than what was
 * accepted since its first refusal, halved at a second refusal of a later probe), each refused probe doubling the next
 * spell; and pacing dropped past 500 a second. Its goals against whole services are test/client/pacer-services.test.ts.
 */
import { describe, expect, it } from "vitest";
import { AdaptivePacer, INITIAL_WINDOW, type PacerChange } from "../../src/client/pacer";

function clocked() {
  let now = 0;
  const sleeps: number[] = [];
  const changes: PacerChange[] = [];
  const pacer = new AdaptivePacer({
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    onChange: (change) => changes.push(change),
  });
  const send = async (outcome: "accepted" | "refused") => (await pacer.acquire()).settle(outcome);
  return { pacer, sleeps, changes, send, advance: (ms: number) => (now += ms), now: () => now };
}

/**
 * A limit learned at t = 1 s: a refusal and 2 accepted at t = 0, then 3 refusals: 4 of the last 6 answers refused,
 * 2 a second accepted since the first refusal, 1.8 learned.
 */
async function limited() {
  const clock = clocked();
  await clock.send("refused");
  for (let i = 0; i < 2; i++) await clock.send("accepted");
  clock.advance(1000);
  for (let i = 0; i < 3; i++) await clock.send("refused");
  return clock;
}

describe("AdaptivePacer", () => {
  it("lets the first window through at once, holds the next until one settles, and grows by one a round trip", async () => {
    const { pacer, sleeps } = clocked();
    const tickets = await Promise.all(Array.from({ length: INITIAL_WINDOW }, () => pacer.acquire()));
    let fifthIn = false;
    const fifth = pacer.acquire().then((ticket) => {
      fifthIn = true;
      return ticket;
    });
    await Promise.resolve();
    expect(fifthIn).toBe(false);
    tickets[0]!.settle("accepted");
    (await fifth).settle("accepted");
    expect(fifthIn).toBe(true);
    // One over the window per accepted request: a window's worth of them adds one.
    expect(pacer.window).toBeCloseTo(INITIAL_WINDOW + 1 / INITIAL_WINDOW + 1 / (INITIAL_WINDOW + 1 / INITIAL_WINDOW));
    expect(pacer.rate).toBeUndefined();
    expect(sleeps).toEqual([]);
    // A ticket settles once: a second settle changes nothing.
    const window = pacer.window;
    tickets[0]!.settle("accepted");
    expect(pacer.window).toBe(window);
    for (const ticket of tickets.slice(1)) ticket.settle("failed");
  });

  it("takes refusals among mostly accepted requests for passing ones: the window halves, the rate stays unlearned", async () => {
    const { pacer, changes, send } = clocked();
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 8; i++) await send("accepted");
      const before = pacer.window;
      await send("refused");
      expect(pacer.window).toBe(Math.max(1, Math.floor(before / 2)));
    }
    expect(pacer.refusals).toBe(10);
    expect(pacer.rate).toBeUndefined();
    expect(changes).toEqual([]);
  });

  it("learns a limit once more than half of 6 answers are refusals, from what was accepted in the last second, and says why once", async () => {
    const { pacer, changes } = await limited();
    expect(pacer.rate).toBeCloseTo(1.8);
    expect(changes).toEqual([{ rate: pacer.rate, because: "4 of the last 6 requests refused" }]);
  });

  it("learns a rate when nothing was accepted since the first refusal, so that a window of one no longer lets the callers through", async () => {
    const { send, sleeps, changes, advance } = clocked();
    // A burst of 4 accepted, then refusals answered at once: none accepted since the first, taken as one in a quarter
    // of a second (0.9 of 4 a second). Unpaced, a window of one would let the next caller go at once after each.
    for (let i = 0; i < 4; i++) await send("accepted");
    advance(10);
    for (let i = 0; i < 6; i++) await send("refused");
    expect(changes).toEqual([{ rate: expect.closeTo(3.6), because: "6 of the last 6 requests refused" }]);
    await send("refused");
    expect(sleeps).toEqual([Math.ceil(1000 / 3.6)]);
  });

  it("does not take a burst accepted before the first refusal for the rate", async () => {
    const { pacer, send, advance, changes } = clocked();
    // 8 accepted at once, then at 0.1 s a refusal and 1 accepted; at 0.9 s, more refusals: 9 accepted in the last
    // second, but 1 in the 0.8 s since the first refusal (1.25 a second), 1.125 learned; the 8 judge nothing.
    for (let i = 0; i < 8; i++) await send("accepted");
    advance(100);
    await send("refused");
    await send("accepted");
    advance(800);
    for (let i = 0; i < 9 && pacer.rate === undefined; i++) await send("refused");
    expect(pacer.rate).toBeCloseTo(1.125);
    expect(changes).toEqual([{ rate: pacer.rate, because: "5 of the last 6 requests refused" }]);
  });

  it("does not judge the answers to requests sent before a cut: they tell of the old rate", async () => {
    const clock = clocked();
    // A window of 15 and more (one more a round trip), then 15 requests in flight at once.
    for (let i = 0; i < 110; i++) await clock.send("accepted");
    clock.advance(1000);
    const tickets = await Promise.all(Array.from({ length: 15 }, () => clock.pacer.acquire()));
    // A refusal, an accepted request, and 4 refusals: more than half of the 6 answers since the first refusal, a cut to
    // what was accepted since the first refusal (1, over a quarter of a second at least), a little less.
    tickets[0]!.settle("refused");
    tickets[1]!.settle("accepted");
    for (const ticket of tickets.slice(2, 6)) ticket.settle("refused");
    expect(clock.changes).toEqual([{ rate: expect.closeTo(3.6), because: "5 of the last 6 requests refused" }]);
    // Nine more refusals of requests sent before it would be a second cut, were they judged.
    for (const ticket of tickets.slice(6)) ticket.settle("refused");
    expect(clock.changes).toHaveLength(1);
    expect(clock.pacer.refusals).toBe(14);
  });

  it("gives turns 1 / rate apart to the requests waiting in line", async () => {
    const clock = await limited();
    const sleeps = clock.sleeps.length;
    // Paced at 1.8 a second: two turns, each about 556 ms after the last.
    await Promise.all([clock.send("accepted"), clock.send("accepted")]);
    expect(clock.sleeps.slice(sleeps)).toHaveLength(2);
    for (const ms of clock.sleeps.slice(sleeps)) expect(Math.abs(ms - 1000 / 1.8)).toBeLessThanOrEqual(1);
  });

  it("probes at once from a first limit, steps back when refused, then probes after calm spells, each refused probe doubling the next", async () => {
    const clock = await limited();
    // The first accepted request starts a probe; the next raises the rate, by a quarter at most.
    await clock.send("accepted");
    expect(clock.changes[1]).toEqual({ rate: expect.closeTo(1.8), because: "a first limit: probing above 1.8/s" });
    await clock.send("accepted");
    expect(clock.pacer.rate).toBeCloseTo(1.8 * 1.25);
    // Refused: back to 0.9 of the rate it was sent at, and the first calm spell is 2 s.
    await clock.send("refused");
    expect(clock.changes.at(-1)).toEqual({ rate: expect.closeTo(1.8 * 1.25 * 0.9), because: "a probe above 1.8/s refused" });
    for (const spell of [2, 4]) {
      const cutAt = clock.now();
      const changes = clock.changes.length;
      while (clock.now() < cutAt + spell * 1000 - 600) await clock.send("accepted");
      expect(clock.changes).toHaveLength(changes);
      while (clock.changes.length === changes) await clock.send("accepted");
      expect(clock.changes.at(-1)!.because).toMatch(new RegExp(`^no cut for ${spell} s: probing above `));
      expect(clock.now()).toBeGreaterThan(cutAt + spell * 1000);
      const calm = clock.pacer.rate!;
      await clock.send("accepted");
      expect(clock.pacer.rate!).toBeGreaterThan(calm);
      // Refused: back no lower than the rate the probe started from.
      await clock.send("refused");
      expect(clock.changes.at(-1)!.because).toBe(`a probe above ${calm.toFixed(1)}/s refused`);
      expect(clock.pacer.rate!).toBeGreaterThanOrEqual(calm);
    }
  });

  it("steps back from a probe no higher than what was accepted since its first refusal, once 4 were", async () => {
    const clock = await limited();
    for (let i = 0; i < 12; i++) await clock.send("accepted");
    const high = clock.pacer.rate!;
    await clock.send("refused");
    expect(clock.pacer.rate).toBeCloseTo(high * 0.9);
    const firstRefusalAt = clock.now();
    for (let i = 0; i < 4; i++) await clock.send("accepted");
    await clock.send("refused");
    const since = 4000 / (clock.now() - firstRefusalAt);
    expect(since).toBeLessThan(high * 0.9 * 0.9);
    expect(clock.pacer.rate).toBeCloseTo(Math.max(1.8, since));
  });

  it("halves at a second refusal of a later probe, before 4 were accepted since its first, no lower than where it started", async () => {
    const clock = await limited();
    // The first probe, refused; then, after its calm spell, a later one that climbs well above where it started.
    for (let i = 0; i < 2; i++) await clock.send("accepted");
    await clock.send("refused");
    while (!clock.changes.at(-1)!.because.startsWith("no cut for")) await clock.send("accepted");
    const calm = clock.pacer.rate!;
    for (let i = 0; i < 20; i++) await clock.send("accepted");
    await clock.send("refused");
    const stepped = clock.pacer.rate!;
    expect(stepped / 2).toBeGreaterThan(calm);
    await clock.send("refused");
    expect(clock.pacer.rate).toBeCloseTo(stepped / 2);
    expect(clock.changes.at(-1)!.because).toBe(`a probe above ${calm.toFixed(1)}/s refused`);
    await clock.send("refused");
    expect(clock.pacer.rate).toBeCloseTo(Math.max(calm, stepped / 4));
  });

  it("stops pacing once a probe is accepted past 500 a second, and says so", async () => {
    const clock = await limited();
    for (let i = 0; i < 5000 && clock.pacer.rate !== undefined; i++) await clock.send("accepted");
    expect(clock.pacer.rate).toBeUndefined();
    expect(clock.changes.at(-1)).toEqual({ rate: undefined, because: "accepted past 500/s: unpaced again" });
    const sleeps = clock.sleeps.length;
    await clock.send("accepted");
    expect(clock.sleeps).toHaveLength(sleeps);
  });
});
