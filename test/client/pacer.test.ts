/**
 * AdaptivePacer (src/client/pacer.ts) on a clock the test moves: the window of requests in flight (4 at first, one
 * more per accepted request, halved at a refusal), and the rate a refusal teaches (what the service accepted in the
 * last second, a little less; turns spaced by it, and taken again after a cut; raised by accepted requests up to 0.95
 * of the limit learned, faster once a calm spell is over, which each cut doubles; dropped past 500 a second; cut at
 * most once a second; not learned from a refusal with nothing accepted lately).
 */
import { describe, expect, it } from "vitest";
import { AdaptivePacer, INITIAL_WINDOW } from "../../src/client/pacer";

function clocked() {
  let now = 0;
  const sleeps: number[] = [];
  const pacer = new AdaptivePacer({
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  });
  return { pacer, sleeps, advance: (ms: number) => (now += ms), now: () => now };
}

describe("AdaptivePacer", () => {
  it("lets the first window through at once, holds the next until one settles, and grows by one per accepted request", async () => {
    const { pacer, sleeps } = clocked();
    const tickets = await Promise.all(Array.from({ length: INITIAL_WINDOW }, () => pacer.acquire()));
    let ninthIn = false;
    const ninth = pacer.acquire().then((ticket) => {
      ninthIn = true;
      return ticket;
    });
    await Promise.resolve();
    expect(ninthIn).toBe(false);
    tickets[0]!.settle("accepted");
    (await ninth).settle("accepted");
    expect(ninthIn).toBe(true);
    expect(pacer.window).toBe(INITIAL_WINDOW + 2);
    expect(pacer.rate).toBeUndefined();
    expect(sleeps).toEqual([]);
    // A ticket settles once: a second settle changes nothing.
    tickets[0]!.settle("accepted");
    expect(pacer.window).toBe(INITIAL_WINDOW + 2);
  });

  it("learns a rate at a refusal from what was accepted in the last second, spaces turns by it, and halves the window", async () => {
    const { pacer, sleeps, advance } = clocked();
    for (let i = 0; i < 5; i++) (await pacer.acquire()).settle("accepted");
    advance(100);
    (await pacer.acquire()).settle("refused");
    expect(pacer.refusals).toBe(1);
    expect(pacer.rate).toBeCloseTo(4.5);
    expect(pacer.window).toBe(Math.floor((INITIAL_WINDOW + 5) / 2));
    // Turns 1/4.5 s apart (rounded up to whole milliseconds), the first no sooner than one interval after the refusal.
    const first = await pacer.acquire();
    const second = await pacer.acquire();
    expect(sleeps).toHaveLength(2);
    for (const ms of sleeps) expect(Math.abs(ms - 1000 / 4.5)).toBeLessThanOrEqual(1);
    first.settle("failed");
    second.settle("failed");
  });

  it("raises the rate with each accepted request and cuts it at most once a second", async () => {
    const { pacer, advance } = clocked();
    for (let i = 0; i < 10; i++) (await pacer.acquire()).settle("accepted");
    (await pacer.acquire()).settle("refused");
    const learned = pacer.rate!;
    expect(learned).toBeCloseTo(9);
    (await pacer.acquire()).settle("refused");
    expect(pacer.rate).toBe(learned);
    for (let i = 0; i < 9; i++) (await pacer.acquire()).settle("accepted");
    expect(pacer.rate!).toBeGreaterThan(learned + 0.4);
    advance(2000);
    // Nothing accepted in the last second: the rate halves.
    const before = pacer.rate!;
    (await pacer.acquire()).settle("refused");
    expect(pacer.rate).toBeCloseTo(before / 2);
  });

  it("learns no rate from a refusal with nothing accepted in the last second, and stops pacing once calm and fast", async () => {
    const { pacer, advance } = clocked();
    (await pacer.acquire()).settle("refused");
    expect(pacer.rate).toBeUndefined();
    expect(pacer.window).toBe(INITIAL_WINDOW / 2);
    for (let i = 0; i < 20; i++) (await pacer.acquire()).settle("accepted");
    advance(1500);
    (await pacer.acquire()).settle("accepted");
    (await pacer.acquire()).settle("refused");
    expect(pacer.rate).toBeCloseTo(0.9);
    advance(3000);
    // Calm: each accepted request raises the rate by 5%, until pacing stops past 500 a second.
    const calm = pacer.rate!;
    (await pacer.acquire()).settle("accepted");
    expect(pacer.rate).toBeCloseTo(calm * 1.05);
    for (let i = 0; i < 200 && pacer.rate !== undefined; i++) (await pacer.acquire()).settle("accepted");
    expect(pacer.rate).toBeUndefined();
  });

  it("rises to 0.95 of the limit it learned and no further until a calm spell is over, each cut doubling the spell", async () => {
    // Time moves only when the test says: the turns' waits take none.
    let now = 0;
    const pacer = new AdaptivePacer({ now: () => now, sleep: async () => undefined });
    const advance = (ms: number) => (now += ms);
    for (let i = 0; i < 10; i++) (await pacer.acquire()).settle("accepted");
    (await pacer.acquire()).settle("refused");
    expect(pacer.rate).toBeCloseTo(9);
    for (let i = 0; i < 50; i++) (await pacer.acquire()).settle("accepted");
    expect(pacer.rate).toBeCloseTo(9.5);
    // The first calm spell is 2 s: then each accepted request raises the rate by 5%.
    advance(2001);
    (await pacer.acquire()).settle("accepted");
    expect(pacer.rate).toBeCloseTo(9.5 * 1.05);
    // A second cut: the spell is now 4 s, so 3 s later the rate is still held under the new limit.
    for (let i = 0; i < 8; i++) (await pacer.acquire()).settle("accepted");
    (await pacer.acquire()).settle("refused");
    const limit = pacer.rate! / 0.9;
    advance(3000);
    for (let i = 0; i < 50; i++) (await pacer.acquire()).settle("accepted");
    expect(pacer.rate).toBeCloseTo(limit * 0.95);
    advance(1001);
    (await pacer.acquire()).settle("accepted");
    expect(pacer.rate).toBeCloseTo(limit * 0.95 * 1.05);
  });

  it("takes the turns that wait again from the new schedule after a cut", async () => {
    let now = 0;
    const sleeping: { until: number; wake: () => void }[] = [];
    const pacer = new AdaptivePacer({
      now: () => now,
      sleep: (ms) => new Promise<void>((wake) => sleeping.push({ until: now + ms, wake })),
    });
    // A rate of 9 a second learned at t=0; a second later, three turns taken at once: now, +111 ms and +222 ms.
    for (let i = 0; i < 10; i++) (await pacer.acquire()).settle("accepted");
    (await pacer.acquire()).settle("refused");
    now = 1000;
    const first = await pacer.acquire();
    const waiting = [pacer.acquire(), pacer.acquire()];
    await Promise.resolve();
    expect(sleeping.map((sleep) => sleep.until)).toEqual([1112, 1223]);
    // A refusal with nothing accepted in the last second halves the rate to 4.5: the waiting turns are spaced by it.
    now = 1001;
    first.settle("refused");
    expect(pacer.rate).toBeCloseTo(4.5);
    for (const sleep of sleeping.splice(0)) {
      now = sleep.until;
      sleep.wake();
      await new Promise((resolve) => setImmediate(resolve));
    }
    // The first no sooner than one interval of the new rate after the cut, the second one interval later.
    const [second, third] = sleeping.map((sleep) => sleep.until);
    expect(second).toBeGreaterThanOrEqual(1001 + 222);
    expect(Math.abs(third! - second! - 1000 / 4.5)).toBeLessThanOrEqual(1);
    for (const sleep of sleeping.splice(0)) {
      now = sleep.until;
      sleep.wake();
    }
    for (const ticket of await Promise.all(waiting)) ticket.settle("accepted");
  });
});
