/**
 * The adaptive pacer (src/client/pacer.ts) alone, on a simulated clock: N requests, C at once, against a service that
 * keeps a bucket of 5 requests refilling at 5 a second and answers each in 15 ms, refusing with a true `Retry-After`
 * past the bucket, as the emulator's `--faults rate=5/s` does. Each refused request waits out its `Retry-After` and
 * takes a turn again, as the client does. Prints, for each N and C, the refusals and the span of the requests against
 * the floor (N / 5 seconds). No wall clock is read, so the figures are the same on any machine: they isolate the
 * pacer's own choices from the engines', which rate-limit.mts measures end to end.
 *   npm run bench   (or, after `npm run build`: node test/bench/pacer.mts)
 */
import { AdaptivePacer } from "../../dist/client/pacer.js";
import type * as SectionModule from "./section.mts";

// section.mts by a path TypeScript does not resolve (Node strips the types at run time; see cli.mts).
const sectionModule = "./section.mts";
const { Section } = (await import(sectionModule)) as typeof SectionModule;

const RATE = 5;
const BURST = 5;
const LATENCY_MS = 15;

/** One run on its own simulated clock: its refusals and the span from the first request sent to the last answer. */
async function simulate(requests: number, atOnce: number): Promise<{ refused: number; spanMs: number }> {
  let now = 0;
  const timers: { at: number; wake: () => void }[] = [];
  const sleep = (ms: number) => new Promise<void>((wake) => timers.push({ at: now + ms, wake }));
  let tokens = BURST;
  let refilledAt = 0;
  /** 0 when the bucket holds a request, else the whole seconds until it does (the `Retry-After`). */
  const take = () => {
    tokens = Math.min(BURST, tokens + ((now - refilledAt) / 1000) * RATE);
    refilledAt = now;
    if (tokens >= 1) {
      tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - tokens) / RATE);
  };
  const pacer = new AdaptivePacer({ now: () => now, sleep });
  let refused = 0;
  let firstSentAt: number | undefined;
  let lastAnswerAt = 0;
  const send = async () => {
    for (;;) {
      const ticket = await pacer.acquire();
      firstSentAt ??= now;
      const retryAfter = take();
      await sleep(LATENCY_MS);
      lastAnswerAt = now;
      if (retryAfter === 0) return ticket.settle("accepted");
      refused++;
      ticket.settle("refused");
      await sleep(retryAfter * 1000);
    }
  };
  let started = 0;
  let done = false;
  const workers = Promise.all(
    Array.from({ length: atOnce }, async () => {
      while (started < requests) {
        started++;
        await send();
      }
    }),
  ).then(() => (done = true));
  // The clock moves to the next timer once every promise that can settle now has.
  while (!done) {
    await new Promise((resolve) => setImmediate(resolve));
    timers.sort((a, b) => a.at - b.at);
    const next = timers.shift();
    if (!next) continue;
    now = Math.max(now, next.at);
    next.wake();
  }
  await workers;
  return { refused, spanMs: lastAnswerAt - (firstSentAt ?? 0) };
}

const section = new Section();
section.print(`the pacer against a bucket of ${BURST} refilling at ${RATE}/s, ${LATENCY_MS} ms an answer (simulated clock)`);
const rows: string[][] = [];
for (const requests of [20, 100, 300]) {
  for (const atOnce of [3, 10, 100]) {
    const { refused, spanMs } = await simulate(requests, atOnce);
    const floorMs = (requests / RATE) * 1000;
    const ratio = `${(spanMs / floorMs).toFixed(2)}x`;
    rows.push([String(requests), String(atOnce), String(refused), `${(spanMs / 1000).toFixed(1)} s`, ratio]);
    section.print(
      `  ${String(requests).padStart(3)} requests, ${String(atOnce).padStart(3)} at once: ${String(refused).padStart(3)} refused, ` +
        `span ${(spanMs / 1000).toFixed(1)} s (${ratio} the ${(floorMs / 1000).toFixed(0)} s floor)`,
    );
  }
}
section.text(
  `The adaptive pacer (src/client/pacer.ts) alone on a simulated clock, against a service keeping a bucket of ${BURST} requests ` +
    `refilling at ${RATE}/s (as the emulator's \`--faults rate=${RATE}/s\`), ${LATENCY_MS} ms an answer; each refused request waits out ` +
    "its `Retry-After` and takes a turn again. The same figures on any machine: no wall clock is read.",
);
section.table(["requests", "at once", "refused", "span", "span / floor"], rows);
section.write();
