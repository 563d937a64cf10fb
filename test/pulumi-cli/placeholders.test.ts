/**
 * Placeholders settled on the real Pulumi CLI, the scenario LocalEngine's suite runs too
 * (test/testing/placeholders-scenario.ts): the CLI driver exports the stack before each operation and names the
 * file of its ids in the environment the CLI hands the provider host. After a storm leaves three creates as
 * placeholders, the next `up` replaces each without taking the object of another resource of the stack or of
 * another provider type, deletes the source its lost create made and names the Model it cannot tell apart
 * (the provider's warning reaches the CLI's output); a `refresh` adopts those instead, two resources never
 * holding one object.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { PulumiCliEngine } from "../../src/testing";
import { readCheckpoint } from "../../src/testing/cli-engine";
import {
  PLACEHOLDER_FIXTURES,
  type PlaceholderStack,
  type StormProxy,
  handbookOf,
  refreshSettles,
  startStormProxy,
  stormyUp,
  upSettles,
} from "../testing/placeholders-scenario";
import { cliName, makeProgramDir, pulumiCliFor } from "./harness";

const cli = pulumiCliFor("placeholders.test.ts");
const TIMEOUT = 180_000;

describe.skipIf(!cli)(`placeholders on the real engine: ${cliName(cli)}`, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function cliStack(): Promise<PlaceholderStack> {
    const dir = makeProgramDir("gms-cli-placeholders");
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const emulator: RunningEmulator = await startEmulator({ fixtures: PLACEHOLDER_FIXTURES });
    cleanups.push(() => emulator.close());
    const proxy: StormProxy = await startStormProxy(emulator);
    cleanups.push(() => proxy.close());
    const lines: string[] = [];
    const engineFor = (parallel?: number) =>
      new PulumiCliEngine({
        cli: cli!,
        programDir: dir,
        stateDir: join(dir, "state"),
        project: "placeholders",
        stack: "dev",
        config: { "gms:baseUrl": proxy.baseUrl(), "gms:apiKey": { secret: emulator.apiKey }, "gms:maxRetries": "0" },
        secretsPassphrase: "placeholders",
        log: (line) => lines.push(line),
        ...(parallel ? { parallel } : {}),
      });
    return {
      emulator,
      proxy,
      context: await handbookOf(emulator),
      lines,
      run(operation, program, options = {}) {
        writeFileSync(join(dir, "index.ts"), program);
        return engineFor(options.parallel)[operation]();
      },
      async resources() {
        const resources = (readCheckpoint(engineFor()).checkpoint.latest?.resources ?? []) as {
          urn: string;
          type: string;
          id?: string;
          outputs?: Record<string, unknown>;
        }[];
        return Object.fromEntries(
          resources
            .filter((resource) => resource.type.includes("dynamic/gms:"))
            .map((resource) => [
              resource.urn.slice(resource.urn.lastIndexOf("::") + 2),
              { id: resource.id!, outputs: resource.outputs ?? {} },
            ]),
        );
      },
    };
  }

  it(
    "up replaces each placeholder without taking another resource's object; destroy leaves only what it could not tell apart",
    async () => {
      const stack = await cliStack();
      await upSettles(stack, await stormyUp(stack));
    },
    TIMEOUT,
  );

  it(
    "refresh adopts what the lost creates made, drops the placeholder that made nothing, and no two resources share an object",
    async () => {
      const stack = await cliStack();
      await refreshSettles(stack, await stormyUp(stack));
    },
    TIMEOUT,
  );
});
