/**
 * The adaptive pacer (src/client/pacer.ts) alone, on a simulated clock, against every kind of service of
 * ./pacer-sim.mts (the simulation test/client/pacer-services.test.ts holds to its goals): 100 callers, 10 ms an
 * answer, `Retry-After` in whole seconds. For each service it prints the refusals, the time to finish, and that time
 * against its reference. No wall clock is read, so the figures are the same on any machine: they isolate the pacer's
 * own choices from the engines', which rate-limit.mts measures end to end.
 *   npm run bench   (or, after `npm run build`: node test/bench/pacer.mts)
 */
import { AdaptivePacer } from "../../dist/client/pacer.js";
import { defaultRetryPolicy, retryDelayMs } from "../../dist/client/retry.js";
import type * as SimModule from "./pacer-sim.mts";
import type * as SectionModule from "./section.mts";

// The simulation and section.mts by paths TypeScript does not resolve (Node strips the types at run time; see cli.mts).
const simModule = "./pacer-sim.mts";
const sim = (await import(simModule)) as typeof SimModule;
const sectionModule = "./section.mts";
const { Section } = (await import(sectionModule)) as typeof SectionModule;

const pacer: SimModule.MakePacer = (options) => new AdaptivePacer(options);
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const x = (value: number, base: number) => `${(value / base).toFixed(2)}x`;
const section = new Section();
const rows: string[][] = [];

section.print(
  `the pacer on a simulated clock: ${sim.CALLERS} callers, ${sim.LATENCY_MS} ms an answer (or, in turn, a refusal at once), Retry-After in whole seconds`,
);
section.print(
  `1. token buckets (goal: at most ${sim.BUCKET_GOAL.refusals} refusals, within ${sim.BUCKET_GOAL.ofFloor}x the floor N / rate)`,
);
for (const shape of sim.ANSWER_SHAPES) {
  section.print(`  ${shape.name}:`);
  for (const bucket of sim.BUCKETS) {
    const { refused, spanMs, floorMs } = await sim.bucket(pacer, bucket, shape.answers);
    const service = `bucket ${bucket.rate}/s, burst ${bucket.burst}, N = ${bucket.requests}`;
    rows.push([`${service}, ${shape.name}`, String(refused), s(spanMs), `${x(spanMs, floorMs)} the floor (${s(floorMs)})`]);
    section.print(
      `  ${service.padEnd(30)} ${String(refused).padStart(4)} refused  ${s(spanMs).padStart(7)}  ${x(spanMs, floorMs)} the floor`,
    );
  }
}
section.print(
  `2. no limit, refusals at random, N = ${sim.NOISE.requests}, median of ${sim.NOISE.seeds} seeds (goal: 1.5x the unpaced client at 1-10%, 3x at 20%)`,
);
for (const share of sim.NOISE.shares) {
  const { spanMs, referenceMs, refused } = await sim.noise(pacer, share);
  const service = `${share * 100}% refused at random, N = ${sim.NOISE.requests}`;
  rows.push([service, String(refused), s(spanMs), `${x(spanMs, referenceMs)} unpaced (${s(referenceMs)})`]);
  section.print(
    `  ${service.padEnd(30)} ${String(refused).padStart(4)} refused  ${s(spanMs).padStart(7)}  ${x(spanMs, referenceMs)} unpaced (${s(referenceMs)})`,
  );
}
section.print(
  `3. a moving limit (goal: ${sim.MOVING.goal.ofAllowed * 100}% of the allowed requests accepted, at most ${sim.MOVING.goal.refusals} refusals)`,
);
for (const shape of sim.ANSWER_SHAPES) {
  const { refused, accepted, allowed } = await sim.moving(pacer, shape.answers);
  const service = `limit ${sim.MOVING.phases.join("/s, ")}/s, ${sim.MOVING.phaseMs / 1000} s each`;
  const share = `${((accepted / allowed) * 100).toFixed(0)}% of the ${allowed} allowed accepted`;
  rows.push([`${service}, ${shape.name}`, String(refused), s(sim.MOVING.phases.length * sim.MOVING.phaseMs), share]);
  section.print(`  ${`${service}, ${shape.name}`.padEnd(30)} ${String(refused).padStart(4)} refused  ${share}`);
}
section.print(
  `4. a shared limit (goal: at most ${sim.SHARED.goal.refusals} refusals, within ${sim.SHARED.goal.ofFloor}x the floor of the half left)`,
);
for (const shape of sim.ANSWER_SHAPES) {
  const { refused, spanMs, floorMs } = await sim.shared(pacer, shape.answers);
  const service = `limit ${sim.SHARED.rate}/s shared with ${sim.SHARED.other}/s, N = ${sim.SHARED.requests}, ${shape.name}`;
  rows.push([service, String(refused), s(spanMs), `${x(spanMs, floorMs)} the floor (${s(floorMs)})`]);
  section.print(
    `  ${service.padEnd(30)} ${String(refused).padStart(4)} refused  ${s(spanMs).padStart(7)}  ${x(spanMs, floorMs)} the floor`,
  );
}
{
  // The client's own backoff for a 503 (full jitter, its retries at most), drawn from a fixed generator.
  let seed = 1;
  const random = () => (seed = (Math.imul(seed, 48271) >>> 0) % 2147483647) / 2147483647;
  const policy = { ...defaultRetryPolicy, random };
  const backoff = {
    delayMs: (retry: number) => retryDelayMs(retry, { retryAfterMs: undefined } as never, policy)!,
    maxRetries: policy.maxRetries,
  };
  section.print("5. refusals without Retry-After (a 503, the client's backoff; no goal)");
  for (const [name, make] of [
    ["paced", pacer],
    ["unpaced", undefined],
  ] as const) {
    seed = 1;
    const { refused, failed, spanMs, floorMs } = await sim.noRetryAfter(make, backoff);
    const service = `bucket ${sim.NO_RETRY_AFTER.rate}/s without Retry-After, ${name}`;
    rows.push([
      service,
      String(refused),
      s(spanMs),
      `${x(spanMs, floorMs)} the floor (${s(floorMs)}); ${failed} of ${sim.NO_RETRY_AFTER.requests} failed`,
    ]);
    section.print(
      `  ${service.padEnd(30)} ${String(refused).padStart(4)} refused  ${s(spanMs).padStart(7)}  ${x(spanMs, floorMs)} the floor, ${failed} failed`,
    );
  }
}

section.text(
  "The adaptive pacer (src/client/pacer.ts) alone on a simulated clock (test/bench/pacer-sim.mts, which " +
    `test/client/pacer-services.test.ts holds to the goals), ${sim.CALLERS} callers, ${sim.LATENCY_MS} ms an answer, ` +
    "each refused request waiting out its `Retry-After` (whole seconds) and taking a turn again. The same figures on any machine: no wall clock is read. " +
    "Each limit is met twice: with every answer after 10 ms, those to requests sent together answered together, and answered in turn as the " +
    "emulator does (one process serving its requests one at a time, in the order they came), a refusal at once (1 ms: it costs no work) " +
    "and an accepted request after 10 ms. Only the second shows a pacer whose window of one request in flight lets the next caller go the " +
    "millisecond the last was refused: LocalEngine's bench showed it (a hundred refusals in an operation), the first shape did not. " +
    "The services: token buckets (the floor N / rate is the reference); no limit but a share of attempts refused at random, " +
    "drawn from a generator seeded by the request and the attempt, so that the pacer and the same client unpaced meet the same refusals " +
    "(the median of 20 seeds); " +
    "a limit that moves from 50 a second to 5 and back; a limit of 10 a second shared with another client steadily sending 5; " +
    "and refusals without `Retry-After`, " +
    "which the client backs off from itself.",
);
section.text(
  "How it differs from TCP BBR and the AWS SDKs' adaptive retry mode. The AWS SDKs' adaptive mode (a CUBIC-shaped client rate limiter) treats every " +
    "throttling answer as congestion: each one cuts the rate to a share of the rate measured, which is why AWS recommends it only for a client that alone " +
    "uses the resource throttled. BBR does not react to loss as such: it paces at the largest delivery rate of its recent rounds and probes above it " +
    "periodically; its second version cuts only once the loss in a round passes a threshold (2%). " +
    "Ours sits between: like BBR it does not slow for an isolated " +
    "refusal but only when the share refused since its last cut is large (more than half while unpaced, a quarter while paced), " +
    "and it probes after calm spells; " +
    "like the AWS limiter it learns its rate from what was accepted and steps back at a refused probe. Unlike either, it measures no round-trip time (a " +
    "service's limit is a rate, not a queue), its answers come with `Retry-After` in whole seconds, and requests already in flight when a limit is reached " +
    "cannot be recalled, so its window grows by one a round trip rather than doubling. A window is no brake on a service that refuses at once, though: " +
    "a window of one lets the next request go the moment a refusal comes back, a millisecond later. So, where BBR's delivery rate rests on acknowledged " +
    "data, ours learns a rate even when nothing was accepted since the first refusal (as if one was in a quarter of a second), and leaves out of it a burst " +
    "the service took before refusing, which a token bucket grants once and not again.",
);
section.table(["service", "refused", "time", "against the reference"], rows);
section.write();
