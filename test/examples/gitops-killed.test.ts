/**
 * examples/gitops recovers by itself: a pipeline's `up` job (`node pipeline.ts up`, the Automation API driving the
 * real CLI over the quickstart) is stopped as a runner is, SIGKILL to its whole process group, while creates are in
 * flight: a gate in front of the emulator lets three creates' answers through and holds the next ones' (their objects
 * made) until the kill has landed, and the emulator's clock runs five minutes ahead of this machine's. The
 * checkpoint is left with pending creates and the lock. The next `up` job, on another runner (each job in a checkout and a
 * PULUMI_HOME of its own, gitops-harness.ts), with no human step, runs
 * `pulumi-gms recover` first and converges: every object the program declares exists exactly once in the service
 * (counted through its API against what the fixtures held before), each the one the stack records, no pending
 * operation, and an `up` after it changes nothing. A lock alone (a run stopped before its first step) is released by
 * recover too, and the job runs. `destroy` then leaves the service as the fixtures made it. No key
 * shows in any output or in the checkpoint. Skipped, with the reason printed, without a CLI (required under CI=true).
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { type AnswerGate, gmsPendingCreates, gmsResources, latestDeployment } from "../recover/harness";
import { DECLARED, heldMidway, killedMidway, QUICKSTART, quickstartGate, quickstartObjects, type Runner, runner } from "./gitops-harness";

const cli = pulumiCliFor("test/examples/gitops-killed.test.ts");
const OPENAI_KEY = "sk-gitops-killed-7d02e4";

describe.skipIf(cli === undefined)(`examples/gitops after a pipeline run was killed midway (${cliName(cli)})`, () => {
  let work: string;
  let emulator: RunningEmulator;
  let gate: AnswerGate;
  /** The runner that is stopped, and the one whose jobs run after it. */
  let stopped: Runner;
  let next: Runner;
  const outputs: string[] = [];

  const objects = () => quickstartObjects(emulator, "guid");

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "gms-gitops-killed-"));
    emulator = await startEmulator({
      port: 0,
      fixtures: join(QUICKSTART, "fixtures.yaml"),
      clockOffsetMs: 300_000,
    });
    // Every run of the stack goes through the gate; once the kill has landed it lets everything through.
    gate = await quickstartGate(emulator.url, 3);
    const env = {
      GMS_BASE_URL: gate.url,
      GMS_API_KEY: emulator.apiKey,
      OPENAI_API_KEY: OPENAI_KEY,
      // A short deadline for a request: recover waits it out (from the killed run's last write) before dropping a create that found nothing.
      GMS_REQUEST_DEADLINE_MS: "3000",
      PULUMI_CONFIG_PASSPHRASE: "gitops killed passphrase",
      PULUMI_BACKEND_URL: pathToFileURL(join(work, "backend")).href,
      GMS_STACK: "killed",
    };
    const onRun = (run: { output: string }) => outputs.push(run.output);
    stopped = runner("a", work, { env, cli, onRun });
    next = runner("b", work, { env, cli, onRun });
  });
  afterAll(async () => {
    await gate?.close();
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("the next up job runs recover first and converges: every declared object once, none orphaned; destroy leaves the fixtures", async () => {
    const before = await objects();
    const checkpoint = join(work, "backend", ".pulumi", "stacks", "gms-quickstart", "killed.json");
    const locks = join(work, "backend", ".pulumi", "locks", "organization", "gms-quickstart", "killed");

    // Midway: a third of the objects recorded, creates in flight whose answers the gate holds.
    const { killed, stopped: run } = await killedMidway(stopped, {}, () => latestDeployment(checkpoint), heldMidway(gate, 3));
    gate.open();
    expect(killed, `the run ended before the moment came:\n${run.output}`).toBeGreaterThan(0);
    expect(run.result).toBeUndefined();
    const left = latestDeployment(checkpoint);
    const pending = gmsPendingCreates(left);
    expect(pending.length).toBeGreaterThan(0);
    expect(readdirSync(locks).filter((file) => file.endsWith(".json"))).toHaveLength(1);

    const after = await next.job(["up"]);
    expect(after.code, after.output).toBe(0);
    expect(after.output).toContain("pulumi-gms recover settles it first");
    const recovered = after.result?.recovered ?? {};
    expect(
      Object.keys(recovered).every((outcome) => outcome === "recorded" || outcome === "dropped"),
      after.output,
    ).toBe(true);
    expect((recovered.recorded ?? 0) + (recovered.dropped ?? 0)).toBe(pending.length);
    expect(after.result?.changes.create).toBe(DECLARED - gmsResources(left).length - (recovered.recorded ?? 0));

    const state = latestDeployment(checkpoint);
    expect(state.pending_operations ?? []).toEqual([]);
    const held = gmsResources(state).map((resource) => resource.id!);
    expect(held).toHaveLength(DECLARED);
    // Exactly the objects the stack holds were made: no duplicate, no orphan.
    const made = (await objects()).filter((object) => !before.includes(object));
    expect(made.map((object) => object.split(" ").at(-1)).sort(), made.join("\n")).toEqual([...held].sort());
    expect(readdirSync(locks).filter((file) => file.endsWith(".json"))).toEqual([]);

    const again = await next.job(["up"]);
    expect(again.code, again.output).toBe(0);
    expect(again.result?.changes).toEqual({ same: DECLARED + 1 });
    expect(again.result?.recovered).toBeUndefined();

    // A run stopped before its first step leaves only its lock: the job meets it as a concurrent update, before the
    // program runs; recover releases it (its process is gone, on this machine) and the job runs.
    const gone = spawnSync(process.execPath, ["-e", ""]).pid!;
    const lock = { pid: gone, username: userInfo().username, hostname: hostname(), timestamp: new Date().toISOString() };
    writeFileSync(join(locks, `${randomUUID()}.json`), JSON.stringify(lock));
    const unlocked = await next.job(["up"]);
    expect(unlocked.code, unlocked.output).toBe(0);
    expect(unlocked.output).toContain("releasing the killed run's lock: pulumi cancel");
    expect(unlocked.result).toMatchObject({ changes: { same: DECLARED + 1 }, recovered: {} });
    expect(readdirSync(locks).filter((file) => file.endsWith(".json"))).toEqual([]);

    const destroyed = await next.job(["destroy"]);
    expect(destroyed.code, destroyed.output).toBe(0);
    expect(await objects()).toEqual(before);
    for (const text of [run.output, ...outputs, existsSync(checkpoint) ? readFileSync(checkpoint, "utf8") : ""]) {
      expect(text).not.toContain(OPENAI_KEY);
      expect(text).not.toContain(emulator.apiKey);
    }
    process.stdout.write(
      `gitops killed: ${killed} processes stopped with ${gmsResources(left).length} recorded and ${pending.length} creates in flight; ` +
        `the next up: recover ${JSON.stringify(recovered)}, then ${JSON.stringify(after.result?.changes)}\n`,
    );
  }, 360_000);
});
