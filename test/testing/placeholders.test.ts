/**
 * Placeholders settled through LocalEngine (the scenario: placeholders-scenario.ts): after a storm leaves
 * three creates as placeholders, with an identical connection of the stack and an anthropic one made outside
 * it in their windows, the next `up` replaces each placeholder without touching another resource's object
 * (the engine tells the provider every id of the loaded state) and deletes the source and names the Model its
 * lost creates made; a `refresh` adopts those instead, and no two resources ever hold one object.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { LocalEngine, StateFile, gmsPlaceholders, installPackageCopy } from "../../src/testing";
import {
  PLACEHOLDER_FIXTURES,
  type PlaceholderStack,
  type StormProxy,
  handbookOf,
  refreshSettles,
  startStormProxy,
  stormyUp,
  upSettles,
} from "./placeholders-scenario";

const PASSPHRASE = "placeholders";

describe("placeholders on LocalEngine", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function localStack(): Promise<PlaceholderStack> {
    const dir = mkdtempSync(join(tmpdir(), "gms-placeholders-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "placeholders-program", private: true, type: "module" }));
    installPackageCopy(dir);
    const emulator: RunningEmulator = await startEmulator({ fixtures: PLACEHOLDER_FIXTURES });
    cleanups.push(() => emulator.close());
    const proxy: StormProxy = await startStormProxy(emulator);
    cleanups.push(() => proxy.close());
    const stateFile = join(dir, "state.json");
    const lines: string[] = [];
    return {
      emulator,
      proxy,
      context: await handbookOf(emulator),
      lines,
      run(operation, program, options = {}) {
        writeFileSync(join(dir, "index.ts"), program);
        const engine = new LocalEngine({
          programDir: dir,
          stateFile,
          project: "placeholders",
          stack: "dev",
          config: { "gms:baseUrl": proxy.baseUrl(), "gms:apiKey": { secret: emulator.apiKey }, "gms:maxRetries": "0" },
          secretsPassphrase: PASSPHRASE,
          log: (line) => lines.push(line),
          ...(options.parallel ? { parallel: options.parallel } : {}),
        });
        return engine[operation]();
      },
      async resources() {
        const { resources } = await new StateFile(stateFile, PASSPHRASE, { lostCreate: gmsPlaceholders.lostCreate }).load();
        return Object.fromEntries(resources.map((resource) => [resource.name, { id: resource.id, outputs: resource.outputs }]));
      },
    };
  }

  it("up replaces each placeholder without taking another resource's object; destroy leaves only what it could not tell apart", async () => {
    const stack = await localStack();
    await upSettles(stack, await stormyUp(stack));
  });

  it("refresh adopts what the lost creates made, drops the placeholder that made nothing, and no two resources share an object", async () => {
    const stack = await localStack();
    // One read at a time, in the state's order: `lost` is read before `sibling`, so only what the engine tells the provider protects it.
    await refreshSettles(stack, await stormyUp(stack), { parallel: 1 });
  });
});
