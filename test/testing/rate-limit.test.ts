/**
 * A stack under a service's rate limit, on LocalEngine: the emulator limits its key to 5 requests a second
 * (`rate=5/s`), the provider is held to the same rate (`gms:maxRequestsPerSecond`, one limiter shared by every
 * resource of its host process), and `up`, `refresh` and `destroy` of 20 Apps, all declared at once and run with
 * unbounded parallelism, each finish in one run without the service refusing a single request; and with no setting,
 * where the provider's adaptive pacing meets the limit, each finishes in one run with no failure (the refusals it
 * meets are waited out; how many is the bench's, test/bench/rate-limit.mts). No timing is asserted: the limit makes
 * them slower, by design. test/pulumi-cli/rate-limit.test.ts runs the same on the real CLI.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { LocalEngine, installPackageCopy } from "../../src/testing";
import { expectAdaptiveConverges, expectRateHeld, RATE_LIMITED_APPS, rateLimitedProgram } from "./rate-limit-scenario";

describe(`${RATE_LIMITED_APPS} Apps under a rate limit of 5 requests a second, on LocalEngine`, () => {
  let dir: string;
  let emulator: RunningEmulator;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gms-rate-limit-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "rate-limit-program", private: true, type: "module" }));
    writeFileSync(join(dir, "index.ts"), rateLimitedProgram(RATE_LIMITED_APPS));
    installPackageCopy(dir);
    emulator = await startEmulator({ faults: "rate=5/s" });
  });
  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("applies, refreshes and destroys in one run each, with the provider held to the rate: no request refused", async () => {
    const engine = new LocalEngine({
      programDir: dir,
      stateFile: join(dir, "state.json"),
      project: "rate",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey }, "gms:maxRequestsPerSecond": "5" },
      secretsPassphrase: "rate",
      log: () => undefined,
    });
    await expectRateHeld(engine, emulator);
  });

  it("converges in one run each with no setting, the provider pacing itself to the limit", () =>
    expectAdaptiveConverges(
      (config) =>
        new LocalEngine({
          programDir: dir,
          stateFile: join(dir, "state-adaptive.json"),
          project: "rate",
          stack: "adaptive",
          config,
          secretsPassphrase: "rate",
          log: () => undefined,
        }),
    ));
});
