/**
 * LocalEngine killed at any moment while it brings secrets to a stack that was used before (the kill cases: crash-harness.ts).
 */
import { afterAll, describe, it } from "vitest";
import { type KillCase, killAndConverge, removeKillProgramDir } from "./crash-harness";

afterAll(removeKillProgramDir);

describe("LocalEngine killed at any moment while it brings secrets to a used stack", () => {
  const cases: KillCase[] = [
    // A stack whose resources had no secrets gets its first ones: its secrets header is made in the killed run.
    {
      name: "used-group-first-secret",
      seed: 5,
      before: { copies: 2, withKeys: false },
      copies: 3,
      kill: "group",
      at: { text: "ciphertext", count: 1 },
    },
    {
      name: "used-engine-4-creates",
      seed: 6,
      before: { copies: 2, withKeys: false },
      copies: 3,
      kill: "engine",
      at: { text: '"creating"', count: 4 },
    },
    // A stack that holds secrets already: the header is the file's.
    {
      name: "keyed-group-3-recorded",
      seed: 7,
      before: { copies: 1, withKeys: true },
      copies: 3,
      kill: "group",
      at: { text: '"put"', count: 3 },
    },
    {
      name: "keyed-engine-first-secret",
      seed: 8,
      before: { copies: 1, withKeys: true },
      copies: 3,
      kill: "engine",
      at: { text: "ciphertext", count: 1 },
    },
  ];
  it.each(cases)("$name: the next up converges and destroy leaves nothing", (kill) => killAndConverge(0, kill));
});
