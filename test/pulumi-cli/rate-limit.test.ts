/**
 * test/testing/rate-limit.test.ts on the real Pulumi CLI (PulumiCliEngine: the CLI's engine and its
 * dynamic-provider host): the emulator limits its key to 5 requests a second, the provider is held to the same
 * rate, here through GMS_MAX_REQUESTS_PER_SECOND, and `up`, `refresh` and `destroy` of 20 Apps each finish in one
 * run without the service refusing a single request. No timing is asserted. Skipped, with the reason printed,
 * without a CLI (required under CI=true).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { PulumiCliEngine } from "../../src/testing";
import { expectAdaptiveConverges, expectRateHeld, RATE_LIMITED_APPS, rateLimitedProgram } from "../testing/rate-limit-scenario";
import { cliName, makeProgramDir, pulumiCliFor } from "./harness";

const cli = pulumiCliFor("test/pulumi-cli/rate-limit.test.ts");
/**
 * Sized to the work, never to a pass: three operations of 20 Apps at 5 requests a second are some 12 s of pacing, and
 * three CLI runs with their program and provider host starting come on top, slower on a busy 2-core machine.
 */
const TIMEOUT = 180_000;

describe.skipIf(cli === undefined)(
  `${RATE_LIMITED_APPS} Apps under a rate limit of 5 requests a second, on the real CLI (${cliName(cli)})`,
  () => {
    let dir: string;
    let emulator: RunningEmulator;
    beforeAll(async () => {
      dir = makeProgramDir("gms-cli-rate-limit", rateLimitedProgram(RATE_LIMITED_APPS));
      emulator = await startEmulator({ faults: "rate=5/s" });
    });
    afterAll(async () => {
      await emulator?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it(
      "applies, refreshes and destroys in one run each, with the provider held to the rate: no request refused",
      async () => {
        const engine = new PulumiCliEngine({
          cli: cli!,
          programDir: dir,
          stateDir: join(dir, "state"),
          project: "rate",
          stack: "dev",
          config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey } },
          env: { GMS_MAX_REQUESTS_PER_SECOND: "5" },
          secretsPassphrase: "rate",
          log: () => undefined,
        });
        await expectRateHeld(engine, emulator);
      },
      TIMEOUT,
    );

    it(
      "converges in one run each with no setting, the provider pacing itself to the limit",
      () =>
        expectAdaptiveConverges(
          (config) =>
            new PulumiCliEngine({
              cli: cli!,
              programDir: dir,
              stateDir: join(dir, "state-adaptive"),
              project: "rate",
              stack: "adaptive",
              config,
              secretsPassphrase: "rate",
              log: () => undefined,
            }),
        ),
      TIMEOUT,
    );
  },
);
