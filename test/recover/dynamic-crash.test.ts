/**
 * `pulumi-gms recover` after `pulumi up` of dynamic resources (`pulumi-nodejs:dynamic/gms:<Kind>`, run through the
 * Automation API by PulumiCliEngine) was SIGKILLed with creates in flight, at three moments: once the first creates
 * were sent, midway, and near the end. The emulator answers every write 150-300 ms after making it (latency faults),
 * so that the kill lands while the service holds objects the checkpoint does not know, and its clock runs five
 * minutes ahead of this machine's. After each kill: recover without --yes prints its plan and changes nothing (the
 * checkpoint and the lock are as they were), recover --yes records and drops, then a plain `up` converges (every
 * declared object exactly once in the service, counted through its API, each the one the stack records, no pending
 * operation) and `destroy` leaves nothing. No key shows in what recover prints or in the checkpoint. Skipped, with
 * the reason printed, without a CLI (required under CI=true).
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RecoveryReport } from "../../src/recover/report";
import { EngineError, PulumiCliEngine } from "../../src/testing";
import { cliName, makeProgramDir, pulumiCliFor } from "../pulumi-cli/harness";
import {
  expectConverged,
  gmsPendingCreates,
  gmsResources,
  type AnswerGate,
  answerGate,
  killWhen,
  latestDeployment,
  moment,
  moments,
  runRecover,
  stackObjects,
} from "./harness";

const cli = pulumiCliFor("test/recover/dynamic-crash.test.ts");
const COUNT = 5;
const KEY = "sk-recover-dynamic-5c1f0a";
const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";
const stack = pulumi.getStack();
for (let i = 0; i < ${COUNT}; i++) {
  const app = new gms.App(\`app-\${i}\`, { name: \`\${stack}-app-\${i}\`, description: "recover" });
  new gms.Workflow(\`flow-\${i}\`, { name: \`\${stack}-flow-\${i}\`, app: app.id });
}
for (let i = 0; i < 2; i++) new gms.ProviderConnection(\`conn-\${i}\`, { provider: "openai", key: ${JSON.stringify(KEY)}, name: \`\${stack}-conn-\${i}\` });
`;
const DECLARED = 2 * COUNT + 2;
const TIMEOUT = 240_000;

describe.skipIf(cli === undefined)(`recover after pulumi up of dynamic resources was killed, on the real CLI (${cliName(cli)})`, () => {
  let dir: string;
  let emulator: RunningEmulator;
  const gates: AnswerGate[] = [];

  beforeAll(async () => {
    dir = makeProgramDir("gms-recover-dynamic", PROGRAM);
    emulator = await startEmulator({
      port: 0,
      clockOffsetMs: 300_000,
      faults: "seed=5,latency=150-300,latency-at=answer,methods=POST+PUT+DELETE",
    });
  });
  afterAll(async () => {
    for (const gate of gates) await gate.close();
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const engineFor = (stack: string, baseUrl: string) =>
    new PulumiCliEngine({
      cli: cli!,
      programDir: dir,
      stateDir: join(dir, "state"),
      project: "recover-dynamic",
      stack,
      // A short deadline: recover waits for it (from the killed run's last write) before dropping a create that found nothing.
      config: { "gms:baseUrl": baseUrl, "gms:apiKey": { secret: emulator.apiKey }, "gms:requestDeadlineMs": "3000" },
      secretsPassphrase: "recover",
      parallel: 3,
      log: () => undefined,
    });

  const live = (stack: string) => stackObjects(emulator, stack);

  // The moments: gms resources recorded, with creates in flight, and how long after that the kill lands.
  it.each(moments(DECLARED))(
    "killed once %s: recover prints its plan, then records and drops; up converges; destroy leaves nothing",
    async (_moment, recorded, afterMs) => {
      const stack = `m${recorded}`;
      const gate = await answerGate(emulator.url, recorded);
      gates.push(gate);
      const engine = engineFor(stack, gate.url);
      const checkpoint = engine.checkpointFile();
      const env = engine.environment();
      const up = engine.up();
      const killed = await killWhen(cli!, checkpoint, up, moment(recorded), afterMs);
      gate.open();
      expect(killed.some((found) => found.args.startsWith(`${cli!.bin} up`))).toBe(true);
      expect(
        await up.then(
          () => undefined,
          (error: unknown) => error,
        ),
      ).toBeInstanceOf(EngineError);

      const locks = join(dir, "state", ".pulumi", "locks", "organization", "recover-dynamic", stack);
      const lockFiles = () => readdirSync(locks).filter((file) => file.endsWith(".json"));
      const before = { checkpoint: readFileSync(checkpoint, "utf8"), locks: lockFiles() };
      const pending = gmsPendingCreates(latestDeployment(checkpoint));
      expect(pending.length).toBeGreaterThan(0);
      expect(before.locks).toHaveLength(1);

      const dry = await runRecover(["--stack", stack, "--json"], { env, cwd: dir });
      expect(dry.code, dry.err).toBe(0);
      const plan = JSON.parse(dry.out) as RecoveryReport;
      expect(plan.applied).toBe(false);
      expect(plan.lock.release).toBe(true);
      expect(plan.pendingCreates.map((create) => create.urn).sort()).toEqual(pending.map((operation) => operation.resource.urn).sort());
      expect(plan.pendingCreates.every((create) => create.outcome === "recorded" || create.outcome === "dropped")).toBe(true);
      expect({ checkpoint: readFileSync(checkpoint, "utf8"), locks: lockFiles() }).toEqual(before);

      const done = await runRecover(["--stack", stack, "--yes", "--json"], { env, cwd: dir });
      expect(done.code, done.err).toBe(0);
      const report = JSON.parse(done.out) as RecoveryReport;
      expect(report.applied).toBe(true);
      // The same plan as the dry run's: the objects were there already.
      expect(report.pendingCreates).toEqual(plan.pendingCreates);
      expect(lockFiles()).toEqual([]);
      const recovered = latestDeployment(checkpoint);
      expect(recovered.pending_operations ?? []).toEqual([]);
      const recordedIds = report.pendingCreates.filter((create) => create.outcome === "recorded").map((create) => create.id);
      for (const create of report.pendingCreates.filter((each) => each.outcome === "recorded")) {
        const resource = (recovered.resources ?? []).find((each) => each.urn === create.urn);
        // Refreshed: the outputs are the object's as the service has it, not the inputs recover recorded.
        expect(resource?.outputs).toMatchObject({ guid: create.id, createdAt: expect.any(String) });
      }

      const converged = await engine.up();
      expect(converged.counts.create).toBe(DECLARED - gmsResources(recovered).length);
      await expectConverged(emulator, stack, COUNT, checkpoint, recordedIds);
      expect((await engine.up()).counts.same).toBe(DECLARED);

      for (const text of [dry.out, dry.err, done.out, done.err, readFileSync(checkpoint, "utf8")]) expect(text).not.toContain(KEY);
      for (const text of [dry.out, dry.err, done.out, done.err]) expect(text).not.toContain(emulator.apiKey);

      await engine.destroy();
      expect(await live(stack)).toEqual({ apps: [], workflows: [], connections: [] });
      expect(existsSync(checkpoint)).toBe(true);
      process.stdout.write(
        `recover dynamic ${stack}: ${pending.length} pending creates: ${recordedIds.length} recorded, ` +
          `${report.pendingCreates.length - recordedIds.length} dropped; up created ${converged.counts.create}\n`,
      );
    },
    TIMEOUT,
  );
});
