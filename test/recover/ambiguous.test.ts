/**
 * What `pulumi-gms recover` settles on its own and what it leaves to a person, on the real CLI with a YAML project of
 * native resources, from a checkpoint written as a killed `pulumi up` leaves it (Apps moved back into pending creates,
 * a lock of a process of this machine that is gone), so that every case is certain rather than a matter of when a
 * kill lands:
 * - a pending create whose object lands while recover waits out the service's deadline after the run's last checkpoint
 *   write: recorded, where a lookup without the wait would have dropped it;
 * - a pending create with two objects that match it made in the update (its own, and a twin made through the API):
 *   nothing is changed at all, with or without --yes (the checkpoint and the lock stay as they were), both GUIDs are
 *   named with their creation times and what to do, exit 1; the other creates' plans are shown (one recorded, one
 *   dropped: its object was deleted);
 * - a lock of a run still going, or of another machine: named, nothing changed, exit 1;
 * - `--choose` of a GUID that is no candidate, and of a URN with no pending create: named, nothing changed, exit 1;
 * - a pending create whose resource the stack holds already (a later run made it) and whose object exists too:
 *   that object recorded as pending deletion, which the next `up` deletes;
 * - `--choose URN=GUID` settles it: recorded, the twin deleted through the API, then `pulumi up` converges (each
 *   App once, the superseded object deleted, `preview --expect-no-changes`), and `destroy` leaves nothing.
 * The CLI and the YAML language host are required under CI=true.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RecoveryReport } from "../../src/recover/report";
import { cliEnvironment } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { type CliProject, startCliProject, yamlCliFor } from "../plugin/cli-project";
import { cliName } from "../pulumi-cli/harness";
import { type Deployment, runRecover } from "./harness";

const cli = yamlCliFor("test/recover/ambiguous.test.ts");
const PREFIX = "gms-recover-ambiguous";
const PROJECT = "recover-ambiguous";
const STACK = "dev";
const API_KEY = "gms_recover_ambiguous_key_0e3a";
const TIMEOUT = 180_000;
/**
 * The service's deadline for a request. Recover waits for it only while it has not passed since the checkpoint's last
 * write, so it must outlast recover's start (its CLI calls) on a busy machine: at 2 s the first case missed it there.
 */
const DEADLINE_MS = 15_000;
const APPS = ["twin", "solo", "gone", "late", "kept"];
const PROGRAM = [
  `name: ${PROJECT}`,
  "runtime: yaml",
  "resources:",
  ...APPS.flatMap((app) => [
    `  ${app}:`,
    "    type: gms:index:App",
    "    properties:",
    `      name: amb-${app}`,
    "      description: recover",
  ]),
  "",
].join("\n");

const urnOf = (app: string) => `urn:pulumi:${STACK}::${PROJECT}::gms:index:App::${app}`;

describe.skipIf(!cli)(
  `recover of a checkpoint as a killed run leaves it, and what it leaves to a person, on the real CLI (${cliName(cli)})`,
  () => {
    let emulator: RunningEmulator;
    let project: CliProject;
    let env: NodeJS.ProcessEnv;
    const service = () => ({ url: emulator.url, apiKey: API_KEY });
    const checkpoint = () => join(project.root, "state", ".pulumi", "stacks", PROJECT, `${STACK}.json`);
    const lockDir = () => join(project.root, "state", ".pulumi", "locks", "organization", PROJECT, STACK);
    const lockFile = () => join(lockDir(), "4b1d5e0c-killed-run.json");
    const lockFiles = () => readdirSync(lockDir()).filter((file) => file.endsWith(".json"));
    const writeLock = (holder: { pid: number; hostname: string; timestamp: string }) =>
      writeFileSync(lockFile(), JSON.stringify({ ...holder, username: "ci" }));
    const liveApps = async () =>
      (await callOverHttp<{ data: { guid: string; name: string }[] }>(service(), "GET", "/apps?limit=100")).body.data;
    const recover = (...argv: string[]) => runRecover(["--stack", STACK, ...argv], { env, cwd: project.dir });
    /** The checkpoint and the lock files, to show that nothing changed. */
    const snapshot = () => ({ checkpoint: readFileSync(checkpoint(), "utf8"), locks: lockFiles() });
    let started: string;
    let dead: number;
    let original: { guid: string; name: string }[];
    let twin: string;
    let late: string;
    let orphan: string;

    beforeAll(async () => {
      emulator = await startEmulator({
        port: 0,
        workspaces: [{ name: "Recover", apiKey: API_KEY }],
        faults: "seed=2,latency=50-100,latency-at=answer,methods=POST+PUT+DELETE",
      });
      project = startCliProject(cli!, PREFIX, PROGRAM);
      env = cliEnvironment(
        cli!,
        { backendDir: join(project.root, "state"), passphrase: `${PREFIX}-passphrase`, pulumiHome: join(project.root, "home") },
        { ...process.env, PATH: `${join(project.root, "bin")}:${process.env.PATH ?? ""}` },
      );
      await project.initStack(STACK, {
        "gms:baseUrl": emulator.url,
        "gms:apiKey": { secret: API_KEY },
        "gms:requestDeadlineMs": String(DEADLINE_MS),
      });
      started = new Date().toISOString();
      await project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK);
      original = await liveApps();

      // What a kill with three creates in flight leaves: their resources as pending creates (no id, no outputs), the lock.
      const file = JSON.parse(readFileSync(checkpoint(), "utf8")) as { checkpoint: { latest: Deployment } };
      const latest = file.checkpoint.latest;
      const inFlight = ["twin", "solo", "gone", "late"].map(urnOf);
      latest.pending_operations = (latest.resources ?? [])
        .filter((resource) => inFlight.includes(resource.urn))
        .map(({ id: _id, outputs: _outputs, ...resource }) => ({ type: "creating", resource }));
      latest.resources = (latest.resources ?? []).filter((resource) => !inFlight.includes(resource.urn));
      // "kept" was made by a later run (recorded) while the killed run's create of it had made an object too.
      const kept = latest.resources.find((resource) => resource.urn === urnOf("kept"))!;
      const { id: _id, outputs: _outputs, ...keptCreate } = kept;
      latest.pending_operations.push({ type: "creating", resource: keptCreate });
      writeFileSync(checkpoint(), JSON.stringify(file));
      // A process of this machine that has ended.
      dead = spawnSync("true").pid!;
      writeLock({ pid: dead, hostname: hostname(), timestamp: started });
      // The creates of "gone" and "late" made nothing (yet); someone made a second "amb-twin" meanwhile (an App is looked
      // up by name and description).
      for (const name of ["amb-gone", "amb-late"]) {
        const app = original.find((each) => each.name === name)!;
        expect((await callOverHttp(service(), "DELETE", `/apps/${app.guid}`)).status).toBeLessThan(300);
      }
      twin = (await callOverHttp<{ guid: string }>(service(), "POST", "/apps", { name: "amb-twin", description: "recover" })).body.guid;
      orphan = (await callOverHttp<{ guid: string }>(service(), "POST", "/apps", { name: "amb-kept", description: "recover" })).body.guid;
    }, TIMEOUT);
    afterAll(async () => {
      await emulator?.close();
      project?.close();
    });

    it(
      "records a create whose object lands while it waits out the service's deadline after the run's last write",
      async () => {
        // The killed run wrote its checkpoint last just now: a create it had in flight may land for the deadline more.
        const file = JSON.parse(readFileSync(checkpoint(), "utf8")) as { checkpoint: { latest: { manifest: { time: string } } } };
        file.checkpoint.latest.manifest.time = new Date().toISOString();
        writeFileSync(checkpoint(), JSON.stringify(file));
        let waiting: () => void;
        const waited = new Promise<void>((resolve) => (waiting = resolve));
        const running = runRecover(["--stack", STACK, "--json"], {
          env,
          cwd: project.dir,
          onErr: (text) => text.includes("waiting") && waiting(),
        });
        // After the first lookups found nothing for it, while recover waits.
        await waited;
        late = (await callOverHttp<{ guid: string }>(service(), "POST", "/apps", { name: "amb-late", description: "recover" })).body.guid;
        const { code, out, err } = await running;
        expect(code).toBe(1);
        expect(err).toMatch(/waiting \d+ s before dropping 2 create\(s\) that found nothing/);
        const plans = (JSON.parse(out) as RecoveryReport).pendingCreates;
        expect(plans.find((plan) => plan.urn === urnOf("late"))).toMatchObject({ outcome: "recorded", id: late });
        expect(plans.find((plan) => plan.urn === urnOf("gone"))).toMatchObject({ outcome: "dropped" });
      },
      TIMEOUT,
    );

    it(
      "names both objects of the ambiguous create and changes nothing, with or without --yes",
      async () => {
        const before = snapshot();
        const own = original.find((app) => app.name === "amb-twin")!.guid;
        const dry = await recover("--json");
        expect(dry.code).toBe(1);
        const plan = JSON.parse(dry.out) as RecoveryReport;
        const byUrn = Object.fromEntries(plan.pendingCreates.map((create) => [create.urn, create]));
        expect(byUrn[urnOf("twin")]).toMatchObject({ outcome: "ambiguous" });
        expect(byUrn[urnOf("twin")]!.candidates.map((candidate) => candidate.guid).sort()).toEqual([own, twin].sort());
        expect(byUrn[urnOf("twin")]!.candidates.every((candidate) => typeof candidate.createdAt === "string")).toBe(true);
        expect(byUrn[urnOf("solo")]).toMatchObject({ outcome: "recorded", id: original.find((app) => app.name === "amb-solo")!.guid });
        expect(byUrn[urnOf("gone")]).toMatchObject({ outcome: "dropped" });
        expect(byUrn[urnOf("kept")]).toMatchObject({ outcome: "superseded", id: orphan });
        expect(plan.lock).toMatchObject({ readable: true, release: true });
        expect(plan.blockers).toEqual([expect.stringContaining(urnOf("twin"))]);
        expect(plan.applied).toBe(false);

        const yes = await recover("--yes");
        expect(yes.code).toBe(1);
        expect(yes.out).toBe("");
        for (const guid of [own, twin]) expect(yes.err).toMatch(new RegExp(`${guid}  created \\d{4}-\\d\\d-\\d\\dT`));
        expect(yes.err).toContain(`--choose '${urnOf("twin")}=<GUID>'`);
        expect(yes.err).toContain("Nothing was changed");
        expect(snapshot()).toEqual(before);
      },
      TIMEOUT,
    );

    it(
      "refuses a lock of a run still going or of another machine, naming it, and a --choose that settles nothing",
      async () => {
        const own = original.find((app) => app.name === "amb-twin")!.guid;
        const choose = `--choose=${urnOf("twin")}=${own}`;
        writeLock({ pid: process.pid, hostname: hostname(), timestamp: started });
        const before = snapshot();
        const running = await recover("--yes", choose);
        expect(running.code).toBe(1);
        expect(running.err).toContain(`ci@${hostname()} (pid ${process.pid})`);
        expect(running.err).toContain("still going");
        // Its creates may be in flight: recover does not wait for them to land, since it changes nothing anyway.
        expect(running.err).not.toContain("waiting");
        // Vouching that the lock's runs are gone (--release-lock) does not release a process still running here.
        const stillRunning = JSON.parse((await recover("--json", "--release-lock", choose)).out) as RecoveryReport;
        expect(stillRunning).toMatchObject({ underway: true, lock: { release: false } });
        expect(stillRunning.blockers.join("\n")).toContain("still going");
        writeLock({ pid: dead, hostname: "ci-runner-7", timestamp: started });
        const elsewhere = await recover("--yes", choose);
        expect(elsewhere.code).toBe(1);
        expect(elsewhere.err).toContain(`ci@ci-runner-7 (pid ${dead})`);
        expect(elsewhere.err).toContain(`pulumi cancel --stack ${STACK} --yes`);
        expect(elsewhere.err).toContain("--release-lock");
        // Vouched for, another machine's lock is released, its time taken five minutes early.
        const vouched = JSON.parse((await recover("--json", "--release-lock", choose)).out) as RecoveryReport;
        expect(vouched).toMatchObject({ underway: false, lock: { release: true } });
        expect(vouched.blockers.filter((blocker) => blocker.includes("locked"))).toEqual([]);
        expect(Date.parse(vouched.since!)).toBe(Date.parse(started) - 5 * 60_000);
        expect(snapshot()).toEqual(before);
        writeLock({ pid: dead, hostname: hostname(), timestamp: started });

        const stranger = await recover("--json", `--choose=${urnOf("twin")}=${original.find((app) => app.name === "amb-kept")!.guid}`);
        expect(stranger.code).toBe(1);
        const strangerPlan = JSON.parse(stranger.out) as RecoveryReport;
        expect(strangerPlan.pendingCreates.find((create) => create.urn === urnOf("twin"))).toMatchObject({
          outcome: "unsettled",
          reason: expect.stringContaining("which a resource of the stack holds already"),
        });
        const unknown = await recover("--json", choose, `--choose=${urnOf("nothing")}=none`);
        expect(unknown.code).toBe(1);
        expect((JSON.parse(unknown.out) as RecoveryReport).blockers).toEqual([
          `--choose names ${urnOf("nothing")}, which has no pending create in the stack`,
        ]);
        expect(snapshot().checkpoint).toEqual(before.checkpoint);
      },
      TIMEOUT,
    );

    it(
      "--choose settles the ambiguous create; with the twin deleted, up converges and destroy leaves nothing",
      async () => {
        const own = original.find((app) => app.name === "amb-twin")!.guid;
        const done = await recover("--yes", "--json", `--choose=${urnOf("twin")}=${own}`);
        expect(done.code, done.err).toBe(0);
        const report = JSON.parse(done.out) as RecoveryReport;
        expect(report.applied).toBe(true);
        const outcomes = report.pendingCreates.map((create) => [create.urn, create.outcome, create.id]);
        expect(outcomes.sort()).toEqual(
          [
            [urnOf("twin"), "recorded", own],
            [urnOf("solo"), "recorded", original.find((app) => app.name === "amb-solo")!.guid],
            [urnOf("gone"), "dropped", undefined],
            [urnOf("late"), "recorded", late],
            [urnOf("kept"), "superseded", orphan],
          ].sort(),
        );
        expect(lockFiles()).toEqual([]);
        expect((await callOverHttp(service(), "DELETE", `/apps/${twin}`)).status).toBeLessThan(300);
        const recorded = (JSON.parse(readFileSync(checkpoint(), "utf8")) as { checkpoint: { latest: Deployment } }).checkpoint.latest;
        expect(recorded.resources?.find((resource) => resource.id === orphan)).toMatchObject({ urn: urnOf("kept"), delete: true });

        await project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK);
        const apps = await liveApps();
        expect(apps.map((app) => app.name).sort()).toEqual(APPS.map((app) => `amb-${app}`).sort());
        const state = (JSON.parse(readFileSync(checkpoint(), "utf8")) as { checkpoint: { latest: Deployment } }).checkpoint.latest;
        expect(state.pending_operations ?? []).toEqual([]);
        expect(
          new Set((state.resources ?? []).filter((resource) => resource.type === "gms:index:App").map((resource) => resource.id)),
        ).toEqual(new Set(apps.map((app) => app.guid)));
        await project.pulumi("preview", "--expect-no-changes", "--stack", STACK);
        await project.pulumi("destroy", "--yes", "--skip-preview", "--stack", STACK);
        expect(await liveApps()).toEqual([]);
        for (const text of [done.out, done.err]) expect(text).not.toContain(API_KEY);
      },
      TIMEOUT,
    );
  },
);
