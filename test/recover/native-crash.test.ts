/**
 * `pulumi-gms recover` after `pulumi up` of a Pulumi YAML project of native resources (`gms:index:<Kind>`, served by
 * the plugin `pulumi-resource-gms` on PATH) was SIGKILLed with creates in flight, at three moments: once the first
 * creates were sent, midway, and near the end. The emulator answers every write 150-300 ms after making it (latency
 * faults) and its clock runs five minutes behind this machine's, so that an update's start read off the lock without
 * the skew would leave every object out. After each kill: recover without --yes prints its plan and changes nothing
 * (checkpoint and lock as they were), recover --yes records and drops, a plain `pulumi up` converges (every declared
 * object exactly once in the service, counted through its API, each the one the stack records, no pending
 * operation, then `preview --expect-no-changes`), and `destroy` leaves nothing. No key shows in what recover prints
 * or in the checkpoint. The CLI and the YAML language host are required under CI=true.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RecoveryReport } from "../../src/recover/report";
import { cliEnvironment } from "../../src/testing";
import { type CliProject, startCliProject, yamlCliFor } from "../plugin/cli-project";
import { cliName } from "../pulumi-cli/harness";
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

const cli = yamlCliFor("test/recover/native-crash.test.ts");
const PREFIX = "gms-recover-native";
const PROJECT = "recover-native";
const COUNT = 5;
const KEY = "sk-recover-native-9d24e1";
const API_KEY = "gms_recover_native_key_1b7c";
const TIMEOUT = 240_000;

/** Five Apps, a Workflow under each, two ProviderConnections with a key: named after the stack, so that stacks never share an object's identity. */
const PROGRAM = [
  `name: ${PROJECT}`,
  "runtime: yaml",
  "config:",
  "  connKey:",
  "    type: string",
  "    secret: true",
  "resources:",
  ...Array.from({ length: COUNT }, (_, i) => [
    `  app-${i}:`,
    "    type: gms:index:App",
    "    properties:",
    `      name: \${pulumi.stack}-app-${i}`,
    "      description: recover",
    `  flow-${i}:`,
    "    type: gms:index:Workflow",
    "    properties:",
    `      name: \${pulumi.stack}-flow-${i}`,
    `      app: \${app-${i}.id}`,
  ]).flat(),
  ...Array.from({ length: 2 }, (_, i) => [
    `  conn-${i}:`,
    "    type: gms:index:ProviderConnection",
    "    properties:",
    "      provider: openai",
    `      key: \${connKey}`,
    `      name: \${pulumi.stack}-conn-${i}`,
  ]).flat(),
  "",
].join("\n");
const DECLARED = 2 * COUNT + 2;

describe.skipIf(!cli)(`recover after pulumi up of a YAML project of native resources was killed, on the real CLI (${cliName(cli)})`, () => {
  let emulator: RunningEmulator;
  let project: CliProject;
  const gates: AnswerGate[] = [];
  let env: NodeJS.ProcessEnv;
  const service = () => ({ url: emulator.url, apiKey: API_KEY });

  beforeAll(async () => {
    emulator = await startEmulator({
      port: 0,
      workspaces: [{ name: "Recover", apiKey: API_KEY }],
      clockOffsetMs: -300_000,
      faults: "seed=9,latency=150-300,latency-at=answer,methods=POST+PUT+DELETE",
    });
    project = startCliProject(cli!, PREFIX, PROGRAM);
    // As startCliProject runs the CLI: its backend, passphrase and home, the plugin on PATH.
    env = cliEnvironment(
      cli!,
      { backendDir: join(project.root, "state"), passphrase: `${PREFIX}-passphrase`, pulumiHome: join(project.root, "home") },
      { ...process.env, PATH: `${join(project.root, "bin")}:${process.env.PATH ?? ""}` },
    );
  }, TIMEOUT);
  afterAll(async () => {
    for (const gate of gates) await gate.close();
    await emulator?.close();
    project?.close();
  });

  const live = (stack: string) => stackObjects(service(), stack);

  /** `pulumi up` of `stack`, as a user types it (not awaited here: it is to be killed). */
  const upToKill = (stack: string) =>
    new Promise<number | null>((resolve) => {
      const child = spawn(cli!.bin, ["up", "--yes", "--skip-preview", "--parallel", "3", "--stack", stack, "--non-interactive"], {
        cwd: project.dir,
        env,
        stdio: "ignore",
      });
      child.once("close", resolve);
    });

  it.each(moments(DECLARED))(
    "killed once %s: recover prints its plan, then records and drops; up converges; destroy leaves nothing",
    async (_moment, recorded, afterMs) => {
      const stack = `n${recorded}`;
      const gate = await answerGate(emulator.url, recorded);
      gates.push(gate);
      await project.initStack(stack, {
        "gms:baseUrl": gate.url,
        "gms:apiKey": { secret: API_KEY },
        "gms:requestDeadlineMs": "3000",
        connKey: { secret: KEY },
      });
      const checkpoint = join(project.root, "state", ".pulumi", "stacks", PROJECT, `${stack}.json`);
      const locks = join(project.root, "state", ".pulumi", "locks", "organization", PROJECT, stack);
      const lockFiles = () => readdirSync(locks).filter((file) => file.endsWith(".json"));
      const up = upToKill(stack);
      const killed = await killWhen(cli!, checkpoint, up, moment(recorded), afterMs);
      gate.open();
      expect(killed.some((found) => found.args.startsWith(`${cli!.bin} up`))).toBe(true);
      expect(await up).not.toBe(0);

      const pending = gmsPendingCreates(latestDeployment(checkpoint));
      expect(pending.length).toBeGreaterThan(0);
      const before = { checkpoint: readFileSync(checkpoint, "utf8"), locks: lockFiles() };
      expect(before.locks).toHaveLength(1);

      const dry = await runRecover(["--stack", stack], { env, cwd: project.dir });
      expect(dry.code, dry.err).toBe(0);
      expect(dry.out).toBe("");
      expect(dry.err).toMatch(/Would release the lock \(pulumi cancel\), then record \d+ objects? and clear the pending operations/);
      for (const operation of pending) expect(dry.err).toContain(operation.resource.urn);
      expect({ checkpoint: readFileSync(checkpoint, "utf8"), locks: lockFiles() }).toEqual(before);

      const done = await runRecover(["--stack", stack, "--yes", "--json"], { env, cwd: project.dir });
      expect(done.code, done.err).toBe(0);
      const report = JSON.parse(done.out) as RecoveryReport;
      expect(report.applied).toBe(true);
      expect(report.pendingCreates.map((create) => create.urn).sort()).toEqual(pending.map((operation) => operation.resource.urn).sort());
      expect(report.pendingCreates.every((create) => create.outcome === "recorded" || create.outcome === "dropped")).toBe(true);
      expect(lockFiles()).toEqual([]);
      const recovered = latestDeployment(checkpoint);
      expect(recovered.pending_operations ?? []).toEqual([]);
      const recordedIds = report.pendingCreates.filter((create) => create.outcome === "recorded").map((create) => create.id);
      for (const create of report.pendingCreates.filter((each) => each.outcome === "recorded")) {
        const resource = (recovered.resources ?? []).find((each) => each.urn === create.urn);
        // Refreshed: the outputs are the object's as the service has it, not the inputs recover recorded.
        expect(resource?.outputs).toMatchObject({ guid: create.id });
      }

      await project.pulumi("up", "--yes", "--skip-preview", "--stack", stack);
      await expectConverged(service(), stack, COUNT, checkpoint, recordedIds);
      await project.pulumi("preview", "--expect-no-changes", "--stack", stack);

      for (const text of [dry.out, dry.err, done.out, done.err, readFileSync(checkpoint, "utf8")]) expect(text).not.toContain(KEY);
      for (const text of [dry.out, dry.err, done.out, done.err]) expect(text).not.toContain(API_KEY);

      await project.pulumi("destroy", "--yes", "--skip-preview", "--stack", stack);
      expect(await live(stack)).toEqual({ apps: [], workflows: [], connections: [] });
      process.stdout.write(
        `recover native ${stack}: ${pending.length} pending creates: ${recordedIds.length} recorded, ` +
          `${report.pendingCreates.length - recordedIds.length} dropped; ${gmsResources(recovered).length} of ${DECLARED} recorded before up\n`,
      );
    },
    TIMEOUT,
  );
});
