/**
 * AdaptivePacer (src/client/pacer.ts) on a clock the test moves (each wait for a turn moves it): the window of requests
 * in flight (4 at first, one more a round trip, halved at a refusal); passing refusals, which teach no rate; a limit
 * learned when most answers are refusals (what was accepted in the last second, a little less), and each change of the
 * rate told once with why; answers to requests sent before a cut not judged; turns spaced by the rate; a probe after a
 * calm spell, stepped back from when refused, each refused probe doubling the next spell; and pacing dropped past 500 a
 * second. Its goals against whole services are test/client/pacer-services.test.ts.
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

/** A limit learned at t = 1 s: 2 accepted at t = 0, then 6 refusals of 8 answers: 2 a second accepted, 1.8 learned. */
async function limited() {
  const clock = clocked();
  for (let i = 0; i < 2; i++) await clock.send("accepted");
  clock.advance(1000);
  for (let i = 0; i < 6; i++) await clock.send("refused");
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

  it("learns a limit once more than half of 8 answers are refusals, from what was accepted in the last second, and says why once", async () => {
    const { pacer, changes } = await limited();
    expect(pacer.rate).toBeCloseTo(1.8);
    expect(changes).toEqual([{ rate: pacer.rate, because: "6 of the last 8 requests refused" }]);
  });

  it("does not judge the answers to requests sent before a cut: they tell of the old rate", async () => {
    const clock = clocked();
    // A window of 15 and more (one more a round trip), then 15 requests in flight at once.
    for (let i = 0; i < 110; i++) await clock.send("accepted");
    clock.advance(1000);
    const tickets = await Promise.all(Array.from({ length: 15 }, () => clock.pacer.acquire()));
    // The 11th refusal makes more than half of the last 20 answers: a cut.
    for (const ticket of tickets.slice(0, 11)) ticket.settle("refused");
    expect(clock.changes).toEqual([{ rate: expect.closeTo(99), because: "11 of the last 20 requests refused" }]);
    // Four more refusals of requests sent before it would be a second cut, were they judged.
    for (const ticket of tickets.slice(11)) ticket.settle("refused");
    expect(clock.changes).toHaveLength(1);
    expect(clock.pacer.refusals).toBe(15);
  });

  it("gives turns 1 / rate apart to the requests waiting in line", async () => {
    const clock = await limited();
    const sleeps = clock.sleeps.length;
    // Paced at 1.8 a second: two turns, each about 556 ms after the last.
    await Promise.all([clock.send("accepted"), clock.send("accepted")]);
    expect(clock.sleeps.slice(sleeps)).toHaveLength(2);
    for (const ms of clock.sleeps.slice(sleeps)) expect(Math.abs(ms - 1000 / 1.8)).toBeLessThanOrEqual(1);
  });

  it("probes above the limit after a calm spell, steps back when refused, and waits twice as long before the next probe", async () => {
    const clock = await limited();
    const learned = clock.pacer.rate!;
    // Within the first calm spell (2 s from the cut at 1 s) the rate rises only up to 0.95 of the limit; then it probes.
    while (clock.changes.length === 1) await clock.send("accepted");
    const calm = (learned / 0.9) * 0.95;
    expect(clock.now()).toBeGreaterThan(3000);
    expect(clock.changes[1]).toEqual({ rate: expect.closeTo(calm), because: `no cut for 2 s: probing above ${calm.toFixed(1)}/s` });
    await clock.send("accepted");
    expect(clock.pacer.rate!).toBeGreaterThan(calm);
    // Refused: back no lower than the rate the probe started from, and the next spell is 4 s.
    await clock.send("refused");
    expect(clock.changes.at(-1)!.because).toBe(`a probe above ${calm.toFixed(1)}/s refused`);
    expect(clock.pacer.rate!).toBeGreaterThanOrEqual(calm);
    const cutAt = clock.now();
    const changes = clock.changes.length;
    while (clock.now() < cutAt + 3500) await clock.send("accepted");
    expect(clock.changes).toHaveLength(changes);
    while (clock.changes.length === changes) await clock.send("accepted");
    expect(clock.changes.at(-1)!.because).toMatch(/^no cut for 4 s: probing above /);
    expect(clock.now()).toBeGreaterThan(cutAt + 4000);
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
