/**
 * What an `up` does after a step fails, on LocalEngine and on the real Pulumi CLI (when present; required
 * under CI=true), with and without `continueOnError` (`--continue-on-error`). The program's second run
 * removes App "old", declares App "a" whose create fails at once (nothing listens where its connection
 * points), App "c" registered with it, and App "b" registered only once a's step is over (its name waits for
 * a's id to settle), so that b's registration reaches the engine after the failure. Observed on the CLI and
 * matched by LocalEngine:
 * - by default no step starts after the failed one: c (under way with a) is created, b is not;
 * - with `continueOnError` b is created too;
 * - either way the program fails (a's outputs are rejected), so "old", which it no longer declares, is not
 *   deleted: LocalEngine reports that delete as held back, with why, and prints it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { type CliResult, EngineError, LocalEngine, PulumiCliEngine, installPackageCopy } from "../../src/testing";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";

const cli = pulumiCliFor("after-failure.test.ts");
const TIMEOUT = 240_000;

const program = (second: boolean) => `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";
${
  second
    ? `const a = new gms.App("a", { name: "A", connection: { baseUrl: "http://127.0.0.1:1/v1", apiKey: "gms_nowhere" } });
new gms.App("c", { name: "C" });
// Registered once a's step is over (its id settles, here by failing).
const settled = (a.id as unknown as { promise(): Promise<unknown> }).promise().then(() => "B", () => "B");
new gms.App("b", { name: settled });`
    : `new gms.App("old", { name: "Old" });`
}
`;

const engines = [{ name: "LocalEngine", real: false }, ...(cli ? [{ name: `the real CLI, ${cliName(cli)}`, real: true }] : [])];

describe.each(engines)("after a failed step, on $name", ({ real }) => {
  const beds: { dir: string; emulator: RunningEmulator }[] = [];
  afterAll(async () => {
    for (const bed of beds) {
      await bed.emulator.close();
      rmSync(bed.dir, { recursive: true, force: true });
    }
  });

  /** The second run's result and the Apps the service holds after it. */
  async function secondRun(continueOnError: boolean) {
    const dir = mkdtempSync(join(tmpdir(), "gms-after-failure-"));
    const emulator = await startEmulator({});
    beds.push({ dir, emulator });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "after-failure-program", private: true, type: "module" }));
    installPackageCopy(dir);
    const lines: string[] = [];
    const options = {
      programDir: dir,
      project: "after-failure",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey } },
      secretsPassphrase: "after-failure",
      env: { GMS_MAX_RETRIES: "0" },
      log: (line: string) => lines.push(line),
      continueOnError,
    };
    const engine = real
      ? new PulumiCliEngine({ ...options, cli: cli!, stateDir: join(dir, "backend") })
      : new LocalEngine({ ...options, stateFile: join(dir, "state.json") });
    writeFileSync(join(dir, "index.ts"), program(false));
    await engine.up();
    writeFileSync(join(dir, "index.ts"), program(true));
    const failure = await engine.up().then(
      () => expect.unreachable("the second up succeeded"),
      (error: unknown) => error as EngineError,
    );
    expect(failure).toBeInstanceOf(EngineError);
    expect(failure.message).toMatch(/\ba: Cannot create App "A"|App::a failed: Cannot create App "A"/);
    const response = await fetch(`${emulator.url}/apps`, { headers: { authorization: `Bearer ${emulator.apiKey}` } });
    const apps = ((await response.json()) as { data: { name: string }[] }).data.map((app) => app.name).sort();
    const created = (failure.result as CliResult).steps
      .filter((step) => step.op === "create" && step.name !== "a")
      .map((step) => step.name);
    return { apps, created: created.sort(), result: failure.result as CliResult, lines };
  }

  it(
    "by default, starts no step after the failed one, and holds back the delete of what the program dropped",
    async () => {
      const { apps, created, result, lines } = await secondRun(false);
      expect(created).toEqual(["c"]);
      expect(apps).toEqual(["C", "Old"]);
      if (!real) {
        expect(result.heldBack).toEqual([
          expect.objectContaining({
            name: "old",
            reason: expect.stringMatching(/^a step failed \(.*App::a\), so the program did not finish/),
          }),
        ]);
        expect(lines).toContainEqual(expect.stringMatching(/^ {2}- pulumi-nodejs:dynamic\/gms:App old not deleted: a step failed/));
      }
    },
    TIMEOUT,
  );

  it(
    "with continueOnError, starts the steps that do not depend on it, and still deletes nothing",
    async () => {
      const { apps, created, result } = await secondRun(true);
      expect(created).toEqual(["b", "c"]);
      expect(apps).toEqual(["B", "C", "Old"]);
      if (!real) expect(result.heldBack?.map((held) => held.name)).toEqual(["old"]);
    },
    TIMEOUT,
  );
});
