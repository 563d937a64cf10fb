/**
 * examples/gitops with shared state: the pipeline (`node pipeline.ts <job>`) keeps the stack in an S3 bucket (moto's
 * server on a loopback port, test/examples/s3-backend.ts) against the emulator seeded with the quickstart's fixtures,
 * whose writes answer 50-150 ms after they are made (so that a run can be stopped midway). Two runners share the bucket,
 * each job on them in a checkout and a PULUMI_HOME of its own (gitops-harness.ts):
 *   - preview, up and destroy run there as on a file backend;
 *   - two `up` jobs at the same moment, and an `up` meeting a `refresh`: one applies, the other waits for the lock and
 *     then finds nothing to do;
 *   - a lock held by a run still going is waited for up to GMS_LOCK_WAIT_SECONDS, then the job is refused (exit 4),
 *     naming the holder and what to do; another machine's lock is refused the same way, and released when the CI
 *     system runs one job of the stack at a time (GMS_ONE_JOB_PER_STACK);
 *   - a runner killed mid-`up`: the other runner's next `up` converges with no human step (recover learns the dead
 *     run's lock from the CLI's refusal, since it cannot read a bucket).
 * Afterwards every object the program declares exists exactly once in the service (counted through its API), and no
 * key shows in any output. Skipped, with the reason printed, without a CLI or without `.venv-s3/` (both required under
 * CI=true).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { type AnswerGate, type Deployment, gmsPendingCreates, gmsResources } from "../recover/harness";
import {
  beyond,
  DECLARED,
  heldMidway,
  killedMidway,
  QUICKSTART,
  quickstartGate,
  quickstartObjects,
  type Run,
  type Runner,
  runner,
} from "./gitops-harness";
import { type S3Backend, s3BackendFor, startS3Backend } from "./s3-backend";

const cli = pulumiCliFor("test/examples/gitops-s3.test.ts");
const moto = s3BackendFor("test/examples/gitops-s3.test.ts");
const OPENAI_KEY = "sk-gitops-s3-test-0001";
const STACKS = ".pulumi/stacks/gms-quickstart";
const LOCKS = ".pulumi/locks/organization/gms-quickstart";

describe.skipIf(cli === undefined || moto === undefined)(`examples/gitops on an S3 backend (${cliName(cli)}, moto)`, () => {
  let work: string;
  let emulator: RunningEmulator;
  const gates: AnswerGate[] = [];
  let s3: S3Backend;
  /** Two runners, one bucket. */
  let runners: [Runner, Runner];
  let before: string[];
  const outputs: string[] = [];

  /** `node pipeline.ts <job>` as a job of `on` for `stack` (its output kept, for the check that no key shows). */
  const job = (on: Runner, args: string[], stack: string, env: NodeJS.ProcessEnv = {}): Promise<Run> =>
    on.job(args, { GMS_STACK: stack, ...env });
  /** What the program made: the objects beyond the fixtures, by name. */
  const made = async () => beyond(await quickstartObjects(emulator, "name"), before);
  const checkpoint = async (stack: string): Promise<Deployment> => {
    const text = await s3.get(`${STACKS}/${stack}.json`);
    return text ? ((JSON.parse(text) as { checkpoint: { latest?: Deployment } }).checkpoint.latest ?? {}) : {};
  };
  const locks = (stack: string) => s3.list(`${LOCKS}/${stack}/`);
  /** A lock in the bucket as the CLI writes one, for a run of `host` with process `pid`. */
  const lockOf = (stack: string, host: string, pid: number) =>
    s3.put(
      `${LOCKS}/${stack}/${randomUUID()}.json`,
      JSON.stringify({ pid, username: userInfo().username, hostname: host, timestamp: new Date().toISOString() }),
    );

  /** A job that met the other's lock: refused, nothing changed, the holder and what to do named. */
  const expectRefused = (run: Run, stack: string, holder: string) => {
    expect(run.code, run.output).toBe(4);
    expect(run.result).toBeUndefined();
    expect(run.output).toContain(`pipeline: stack ${stack} is locked by another run: ${holder}`);
    expect(run.output).toContain("Wait for that run to end, then run this job again");
    expect(run.output).toContain(`pulumi cancel --stack ${stack} --yes`);
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "gms-gitops-s3-"));
    emulator = await startEmulator({
      port: 0,
      fixtures: join(QUICKSTART, "fixtures.yaml"),
      faults: "seed=31,latency=50-150,latency-at=answer,methods=POST+PUT+DELETE",
    });
    s3 = await startS3Backend();
    const env: NodeJS.ProcessEnv = {
      ...s3.env,
      GMS_BASE_URL: emulator.url,
      GMS_API_KEY: emulator.apiKey,
      OPENAI_API_KEY: OPENAI_KEY,
      GMS_REQUEST_DEADLINE_MS: "3000",
      GMS_LOCK_WAIT_SECONDS: "180",
      PULUMI_CONFIG_PASSPHRASE: "gitops s3 passphrase",
      PULUMI_BACKEND_URL: s3.url,
    };
    const onRun = (run: Run) => outputs.push(run.output);
    runners = [runner("a", work, { env, cli, onRun }), runner("b", work, { env, cli, onRun })];
    before = await quickstartObjects(emulator, "name");
  }, 120_000);

  afterAll(async () => {
    for (const text of outputs) {
      expect(text).not.toContain(emulator.apiKey);
      expect(text).not.toContain(OPENAI_KEY);
    }
    await s3?.close();
    for (const gate of gates) await gate.close();
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("preview, up and destroy run on the bucket, the checkpoint kept in it for every runner", async () => {
    const preview = await job(runners[0], ["preview"], "solo");
    expect(preview.code, preview.output).toBe(0);
    expect(preview.result?.changes).toEqual({ create: DECLARED + 1 });

    const up = await job(runners[0], ["up"], "solo");
    expect(up.code, up.output).toBe(0);
    expect(up.result?.changes).toEqual({ create: DECLARED + 1 });
    expect(await made()).toHaveLength(DECLARED);
    expect(await s3.list(`${STACKS}/`)).toContain(`${STACKS}/solo.json`);
    const other = await job(runners[1], ["preview"], "solo");
    expect(other.code, other.output).toBe(0);
    expect(other.result?.changes).toEqual({ same: DECLARED + 1 });

    const destroy = await job(runners[1], ["destroy"], "solo");
    expect(destroy.code, destroy.output).toBe(0);
    expect(destroy.result?.changes).toEqual({ delete: DECLARED + 1 });
    expect(await quickstartObjects(emulator, "name")).toEqual(before);
  }, 300_000);

  it("two runners' up at the same moment: one applies, the other runs after it and has nothing to do", async () => {
    const runs = await Promise.all(runners.map((runner) => job(runner, ["up"], "shared")));
    const all = runs.map((run) => run.output).join("\n----\n");
    for (const run of runs) expect(run.code, all).toBe(0);
    const creates = runs.map((run) => run.result?.changes.create ?? 0).sort();
    expect(creates, all).toEqual([0, DECLARED + 1]);
    expect(runs.find((run) => !run.result?.changes.create)?.result?.changes, all).toEqual({ same: DECLARED + 1 });
    // The one that ran second met the lock of the first and waited, or began once the first had ended (the waiting
    // itself is pinned below, with a lock of a run still going).
    const waited = /pipeline: stack shared is locked by \S+@\S+ \(pid \d+\) since \S+: waiting \d+\.\d s, then trying again/.test(all);
    process.stdout.write(
      `gitops s3: two ups at once: the second ${waited ? "waited for the first's lock" : "began after the first had ended"}\n`,
    );
    expect((await made()).filter((object) => object.startsWith("/apps "))).toEqual(["/apps Helpdesk"]);
    expect(await made()).toHaveLength(DECLARED);
    expect(await locks("shared")).toEqual([]);
  }, 300_000);

  it("an up meeting a scheduled refresh: both run, one after the other; each object once", async () => {
    const [refresh, up] = await Promise.all([
      job(runners[0], ["refresh"], "shared", { GMS_DRIFT_REPORT_DIR: join(work, "reports") }),
      job(runners[1], ["up"], "shared"),
    ]);
    const all = `${refresh!.output}\n----\n${up!.output}`;
    expect([refresh!.code, up!.code], all).toEqual([0, 0]);
    expect(refresh!.result?.changes, all).toEqual({ same: DECLARED + 1 });
    expect(refresh!.result?.drift, all).toEqual({});
    expect(up!.result?.changes, all).toEqual({ same: DECLARED + 1 });
    expect(await made()).toHaveLength(DECLARED);
  }, 300_000);

  it("a lock of a run still going is waited for, then the job is refused naming it; another machine's too, unless one job runs at a time", async () => {
    const held = await checkpoint("shared");
    // This test's own process holds it: a run still going on this machine.
    await lockOf("shared", hostname(), process.pid);
    const waited = await job(runners[0], ["up"], "shared", { GMS_LOCK_WAIT_SECONDS: "4" });
    expectRefused(waited, "shared", `${userInfo().username}@${hostname()} (pid ${process.pid})`);
    expect(waited.output).toContain(`pipeline: stack shared is locked by ${userInfo().username}@${hostname()} (pid ${process.pid}) since `);
    expect(waited.output).toMatch(/: waiting \d+\.\d s, then trying again \(\d+ s left of GMS_LOCK_WAIT_SECONDS\)/);
    expect(await checkpoint("shared")).toEqual(held);
    for (const key of await locks("shared")) await s3.delete(key);

    // A runner of another machine, stopped: this one cannot tell, and says what to do.
    await lockOf("shared", "runner-7", 4242);
    const refused = await job(runners[1], ["up"], "shared", { GMS_LOCK_WAIT_SECONDS: "0" });
    expectRefused(refused, "shared", `${userInfo().username}@runner-7 (pid 4242)`);
    expect(refused.output).toContain("GMS_ONE_JOB_PER_STACK=true");
    expect(await locks("shared")).toHaveLength(1);

    // The CI system runs one job of the stack at a time: the lock is a stopped run's, and recover releases it.
    const serial = await job(runners[1], ["up"], "shared", { GMS_ONE_JOB_PER_STACK: "true", GMS_LOCK_WAIT_SECONDS: "0" });
    expect(serial.code, serial.output).toBe(0);
    expect(serial.output).toContain("pulumi-gms recover settles it first and releases its lock");
    expect(serial.result).toMatchObject({ changes: { same: DECLARED + 1 }, recovered: {} });
    expect(await locks("shared")).toEqual([]);
    expect(await made()).toHaveLength(DECLARED);
  }, 300_000);

  it("a runner killed mid-up: the other runner's next up recovers from the bucket and converges, with no human step", async () => {
    // The killed stack's runs go through a gate that holds creates' answers after the second, until the kill lands.
    const gate = await quickstartGate(emulator.url, 2);
    gates.push(gate);
    const throughGate = { GMS_BASE_URL: gate.url };
    const beforeKill = await quickstartObjects(emulator, "guid");
    // A read that meets the CLI writing the checkpoint can get a 500 from moto's server (seen in a CI run): the poll
    // reads again 20 ms later, as it does while the checkpoint is not written yet.
    const polled = () => checkpoint("killed").catch((error: Error) => (/: 5\d\d$/.test(error.message) ? {} : Promise.reject(error)));
    const { killed, stopped } = await killedMidway(runners[0], { GMS_STACK: "killed", ...throughGate }, polled, heldMidway(gate, 2));
    gate.open();
    expect(killed, `the run ended before the moment came:\n${stopped.output}`).toBeGreaterThan(0);
    const left = await checkpoint("killed");
    expect(gmsPendingCreates(left).length).toBeGreaterThan(0);
    expect(await locks("killed")).toHaveLength(1);

    const next = await job(runners[1], ["up"], "killed", throughGate);
    expect(next.code, next.output).toBe(0);
    expect(next.output).toContain("pulumi-gms recover settles it first");
    expect(next.output).toContain("releasing the killed run's lock: pulumi cancel");
    const state = await checkpoint("killed");
    expect(state.pending_operations ?? []).toEqual([]);
    const held = gmsResources(state).map((resource) => resource.id!);
    expect(held).toHaveLength(DECLARED);
    const newObjects = beyond(await quickstartObjects(emulator, "guid"), beforeKill);
    expect(newObjects.map((object) => object.split(" ").at(-1)).sort(), newObjects.join("\n")).toEqual([...held].sort());
    expect(await locks("killed")).toEqual([]);
    process.stdout.write(
      `gitops s3: killed with ${gmsResources(left).length} recorded and ${gmsPendingCreates(left).length} in flight; ` +
        `the next up: recover ${JSON.stringify(next.result?.recovered)}, then ${JSON.stringify(next.result?.changes)}\n`,
    );

    for (const stack of ["killed", "shared"]) {
      const destroy = await job(runners[0], ["destroy"], stack, stack === "killed" ? throughGate : {});
      expect(destroy.code, destroy.output).toBe(0);
    }
    expect(await quickstartObjects(emulator, "name")).toEqual(before);
  }, 360_000);
});
