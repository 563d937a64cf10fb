/**
 * LocalEngine killed at any moment while it brings a fresh stack secrets (the kill cases: crash-harness.ts).
 */
import { afterAll, describe, it } from "vitest";
import { type KillCase, killAndConverge, removeKillProgramDir } from "./crash-harness";

afterAll(removeKillProgramDir);

describe("LocalEngine killed at any moment while it brings a fresh stack secrets", () => {
  const cases: KillCase[] = [
    { name: "fresh-group-first-secret", seed: 1, copies: 3, kill: "group", at: { text: "ciphertext", count: 1 } },
    { name: "fresh-engine-2-recorded", seed: 2, copies: 3, kill: "engine", at: { text: '"put"', count: 2 } },
    // Four copies (17 resources): with three, the 7 left after the sixth record could all land before a loaded machine's kill.
    { name: "fresh-group-6-recorded", seed: 3, copies: 4, kill: "group", at: { text: '"put"', count: 6 } },
    { name: "fresh-engine-first-create", seed: 4, copies: 3, kill: "engine", at: { text: '"creating"', count: 1 } },
  ];
  it.each(cases)("$name: the next up converges and destroy leaves nothing", (kill) => killAndConverge(0, kill));
});
