/**
 * LocalEngine killed while the service's clock is minutes away from the engine's, or while the service still makes
 * the objects the killed run asked for (the kill cases: crash-harness.ts).
 */
import { afterAll, describe, it } from "vitest";
import { type KillCase, killAndConverge, removeKillProgramDir } from "./crash-harness";

afterAll(removeKillProgramDir);

describe("LocalEngine killed while the service's clock is minutes away from the engine's", () => {
  it.each([
    [-3 * 60_000, { name: "behind-group-2-recorded", seed: 11, copies: 3, kill: "group", at: { text: '"put"', count: 2 } }],
    [
      4 * 60_000,
      {
        name: "ahead-engine-first-secret",
        seed: 12,
        before: { copies: 2, withKeys: false },
        copies: 3,
        kill: "engine",
        at: { text: "ciphertext", count: 1 },
      },
    ],
  ] as [number, KillCase][])("service clock %i ms off: the next up converges and destroy leaves nothing", (offsetMs, kill) =>
    killAndConverge(offsetMs, kill),
  );
});

describe("LocalEngine killed while the service is still making objects the killed run asked for", () => {
  // Each create lands 4 s after it was sent, once the next run has loaded its placeholders and begun: they are
  // settled only after the service's deadline (5 s from sending), so none misses its object (without the wait,
  // seen: the next up made each object again and the late one stayed, a duplicate nobody manages).
  it.each<KillCase>([
    {
      name: "late-group-first-create",
      seed: 21,
      copies: 2,
      kill: "group",
      at: { text: '"creating"', count: 1 },
      late: { byMs: 4000, deadlineMs: 5000 },
    },
    {
      name: "late-engine-3-creates",
      seed: 22,
      before: { copies: 1, withKeys: false },
      copies: 2,
      kill: "engine",
      at: { text: '"creating"', count: 3 },
      late: { byMs: 4000, deadlineMs: 5000 },
    },
  ])("$name: the next up converges and destroy leaves nothing", (kill) => killAndConverge(0, kill));
});
