/**
 * The program test/testing/rate-limit.test.ts (LocalEngine) and test/pulumi-cli/rate-limit.test.ts (the real CLI) run
 * under a rate limit, and what both check.
 */
import { expect } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { LocalEngine, PulumiCliEngine } from "../../src/testing";

/** Fewer than the benchmark's 100 (test/bench/rate-limit.mts): at 5 requests a second, each operation takes about 4 s. */
export const RATE_LIMITED_APPS = 20;

/** `count` Apps with nothing between them: every create, read and delete may run at once. */
export const rateLimitedProgram = (count: number) => `import * as gms from "pulumi-gms";
for (let i = 0; i < ${count}; i++) new gms.App(\`app-\${i}\`, { name: \`rate limited \${i}\`, description: "rate" });
`;

/** Up, refresh and destroy of the program on `engine`, each in one run with no failure; the emulator's counts after. */
export async function expectConverges(engine: LocalEngine | PulumiCliEngine, emulator: RunningEmulator) {
  const liveApps = () => emulator.store.db.get<{ n: number }>("SELECT count(*) AS n FROM apps WHERE deleted_at IS NULL")!.n;
  expect((await engine.up()).counts.create).toBe(RATE_LIMITED_APPS);
  expect(liveApps()).toBe(RATE_LIMITED_APPS);
  const refresh = await engine.refresh();
  expect(refresh.steps.filter((step) => step.type === "pulumi-nodejs:dynamic/gms:App")).toHaveLength(RATE_LIMITED_APPS);
  expect((await engine.destroy()).counts.delete).toBe(RATE_LIMITED_APPS);
  expect(liveApps()).toBe(0);
  return emulator.faults.stats();
}

/**
 * Up, refresh and destroy of the program on `engine`, each in one run, with the emulator's limit never refusing a
 * request: the provider kept under it. Every request went through the limit (3 x the Apps at least).
 */
export async function expectRateHeld(engine: LocalEngine | PulumiCliEngine, emulator: RunningEmulator): Promise<void> {
  const stats = await expectConverges(engine, emulator);
  expect(stats.requests).toBeGreaterThanOrEqual(3 * RATE_LIMITED_APPS);
  expect(stats.rateLimited).toBe(0);
}

/**
 * The same with no setting, against an emulator of its own limiting its key to 5/s: the provider's adaptive pacing
 * meets the limit, and each operation converges in one run with no failure. `engineFor` makes the engine for that
 * emulator's URL and key (the stack's config).
 */
export async function expectAdaptiveConverges(
  engineFor: (config: { "gms:baseUrl": string; "gms:apiKey": { secret: string } }) => LocalEngine | PulumiCliEngine,
): Promise<void> {
  const emulator = await startEmulator({ faults: "rate=5/s" });
  try {
    const stats = await expectConverges(engineFor({ "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey } }), emulator);
    expect(stats.requests).toBeGreaterThanOrEqual(3 * RATE_LIMITED_APPS);
  } finally {
    await emulator.close();
  }
}
