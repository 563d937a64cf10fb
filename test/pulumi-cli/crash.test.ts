/**
 * `pulumi up` on the real CLI killed mid-apply (SIGKILL to the `pulumi` process and the plugins it started, creates
 * in flight), what it leaves, and the recovery that ends with no duplicate and no orphan:
 * - the checkpoint holds `pending_operations` of type `creating` for the creates in flight (no ID: the CLI never
 *   learnt it), their objects exist in the service all the same, and the file backend's lock stays behind;
 * - the recovery: `pulumi cancel --yes` (removes the lock), `pulumi stack export`, each pending create whose
 *   object the service holds moved into `resources` with that object's ID (the rest dropped), and every pending
 *   operation removed, `pulumi stack import`, `pulumi refresh --yes` (reads the adopted objects' outputs), then
 *   `pulumi up` creates only what is still missing;
 * - `pulumi refresh --import-pending-creates <urn> <id>`, which the CLI offers for this, does not do it in v3.274.1:
 *   the pending operation is dropped and its object not recorded, so the next `up` makes a duplicate (the second
 *   suite pins this; `--clear-pending-creates` forgets the objects the same way).
 * The emulator answers every write 150-300 ms after making it, so that the kill lands while creates are in flight
 * whose objects exist. Skipped, with the reason printed, without a CLI (required under CI=true).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { EngineError, PulumiCliEngine } from "../../src/testing";
import { cliName, makeProgramDir, pulumiCliFor } from "./harness";

const cli = pulumiCliFor("test/pulumi-cli/crash.test.ts");
const NAMES = Array.from({ length: 12 }, (_, i) => `crash-${i}`);
const PROGRAM = `import * as gms from "pulumi-gms";\nfor (const name of ${JSON.stringify(NAMES)}) new gms.App(name, { name, description: "crash test" });\n`;

interface StateResource {
  urn: string;
  type: string;
  id?: string;
  custom?: boolean;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}
interface PendingOperation {
  type: string;
  resource: StateResource;
}
interface Deployment {
  resources?: StateResource[];
  pending_operations?: PendingOperation[];
}

/** The processes below `root` (children first found first), from `ps`. */
function descendants(root: number): { pid: number; args: string }[] {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line)!)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3]! }));
  const found: { pid: number; args: string }[] = [];
  for (let queue = [root]; queue.length > 0; ) {
    const parent = queue.shift()!;
    const children = rows.filter((row) => row.ppid === parent);
    found.push(...children);
    queue = [...queue, ...children.map((child) => child.pid)];
  }
  return found;
}

/** A program of 12 Apps, its emulator (writes answered late) and CLI stack, set up and removed around the suite it is called in. */
function crashScenario(prefix: string) {
  let dir: string;
  let emulator: RunningEmulator;
  const engine = () =>
    new PulumiCliEngine({
      cli: cli!,
      programDir: dir,
      stateDir: join(dir, "state"),
      project: "crash",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey } },
      secretsPassphrase: "crash",
      parallel: 3,
      log: () => undefined,
    });
  const latest = (): Deployment => {
    const file = engine().checkpointFile();
    try {
      return (JSON.parse(readFileSync(file, "utf8")) as { checkpoint: { latest?: Deployment } }).checkpoint.latest ?? {};
    } catch {
      return {}; // not written yet, or being written
    }
  };
  const apps = (deployment: Deployment) => (deployment.resources ?? []).filter((resource) => resource.type.endsWith("gms:App"));
  const liveApps = async () => {
    const response = await fetch(`${emulator.url}/apps?limit=100`, { headers: { authorization: `Bearer ${emulator.apiKey}` } });
    return ((await response.json()) as { data: { guid: string; name: string }[] }).data;
  };
  /** A `pulumi` command of this stack, as a user runs it (not blocking: the emulator answers in this process). */
  const pulumi = async (...args: string[]): Promise<string> => {
    const child = spawn(cli!.bin, [...args, "--stack", "dev", "--non-interactive"], { cwd: dir, env: engine().environment() });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once("close", (exitCode) => resolve(exitCode)));
    if (code !== 0) throw new Error(`pulumi ${args.join(" ")} exited with ${code}: ${stderr.slice(-2000)}`);
    return stdout;
  };

  beforeAll(async () => {
    dir = makeProgramDir(prefix, PROGRAM);
    emulator = await startEmulator({ port: 0, faults: "seed=3,latency=150-300,latency-at=answer,methods=POST+PUT+DELETE" });
  });

  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `up` and, once three Apps are recorded and more creates are in flight, SIGKILLs the CLI and the plugins it started. */
  const killMidApply = async () => {
    let settled = false;
    const up = engine()
      .up()
      .then(
        () => undefined,
        (error: unknown) => error,
      )
      .finally(() => (settled = true));
    let killed: { pid: number; args: string }[] = [];
    while (killed.length === 0 && !settled) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      const deployment = latest();
      if (apps(deployment).length < 3 || (deployment.pending_operations ?? []).length === 0) continue;
      const clis = descendants(process.pid).filter((found) => found.args.startsWith(cli!.bin));
      killed = clis.flatMap((found) => [found, ...descendants(found.pid)]);
      for (const { pid } of killed) process.kill(pid, "SIGKILL");
    }
    const failure = await up;
    // Let the requests the kill left in flight reach the emulator's handlers.
    await new Promise((resolve) => setTimeout(resolve, 800));
    return { killed, failure };
  };
  return { engine, latest, apps, liveApps, pulumi, killMidApply, dir: () => dir, emulator: () => emulator };
}

describe.skipIf(cli === undefined)(`pulumi up killed mid-apply on the real CLI (${cliName(cli)})`, () => {
  const { engine, latest, apps, liveApps, pulumi, killMidApply, dir: programDir } = crashScenario("gms-cli-crash");

  it("leaves pending creates in the checkpoint, objects it never recorded, and its lock", async () => {
    const { killed, failure } = await killMidApply();
    expect(killed.some((found) => found.args.startsWith(`${cli!.bin} up`))).toBe(true);
    expect(failure).toBeInstanceOf(EngineError);
    expect((failure as EngineError).message).toContain("SIGKILL");

    const deployment = latest();
    const pending = deployment.pending_operations ?? [];
    expect(pending.length).toBeGreaterThan(0);
    expect(pending.every((operation) => operation.type === "creating" && !operation.resource.id)).toBe(true);
    const live = await liveApps();
    const recorded = new Set(apps(deployment).map((resource) => resource.id));
    // The creates in flight made their objects, which the checkpoint does not know.
    const unrecorded = live.filter((app) => !recorded.has(app.guid));
    expect(unrecorded.length).toBeGreaterThan(0);
    expect(unrecorded.every((app) => pending.some((operation) => operation.resource.inputs?.name === app.name))).toBe(true);
    const locks = join(programDir(), "state", ".pulumi", "locks", "organization", "crash", "dev");
    expect(readdirSync(locks).filter((file) => file.endsWith(".json"))).toHaveLength(1);
    process.stdout.write(
      `cli crash: killed ${killed.map((found) => found.args.split(" ")[0]!.split("/").pop()).join(", ")} with ` +
        `${apps(deployment).length} Apps recorded and ${pending.length} pending creates; ${live.length} Apps live\n`,
    );
  }, 600_000);

  it("recovers with cancel, export, adopting each pending create's object, import and refresh; up converges", async () => {
    await pulumi("cancel", "--yes");
    expect(
      readdirSync(join(programDir(), "state", ".pulumi", "locks", "organization", "crash", "dev")).filter((file) => file.endsWith(".json")),
    ).toEqual([]);
    const exported = JSON.parse(await pulumi("stack", "export")) as { deployment: Deployment };
    const live = await liveApps();
    const adopted: string[] = [];
    for (const operation of exported.deployment.pending_operations ?? []) {
      // The service's own record of what each pending create made: an App is found by its name.
      const object = live.find((app) => app.name === operation.resource.inputs?.name);
      if (operation.type !== "creating" || !object) continue;
      // Its outputs are its inputs until the refresh reads the object: `__provider` among them, which the
      // dynamic-provider host needs to serve the read.
      exported.deployment.resources!.push({ ...operation.resource, id: object.guid, outputs: { ...operation.resource.inputs } });
      adopted.push(object.name);
    }
    exported.deployment.pending_operations = [];
    const file = join(programDir(), "recovered.json");
    writeFileSync(file, JSON.stringify(exported));
    await pulumi("stack", "import", "--file", file);
    await pulumi("refresh", "--yes");
    const refreshed = latest();
    expect(refreshed.pending_operations ?? []).toEqual([]);
    for (const name of adopted) {
      const resource = apps(refreshed).find((candidate) => candidate.urn.endsWith(`::${name}`));
      expect(resource?.outputs).toMatchObject({ name, guid: resource?.id, createdAt: expect.any(String) });
    }

    const up = await engine().up();
    expect(up.counts.create).toBe(NAMES.length - live.length);
    expect(up.counts.same).toBe(live.length);
    const after = await liveApps();
    expect(after.map((app) => app.name).sort()).toEqual([...NAMES].sort());
    expect(new Set(apps(latest()).map((resource) => resource.id))).toEqual(new Set(after.map((app) => app.guid)));
    expect((await engine().up()).counts.same).toBe(NAMES.length);
    process.stdout.write(`cli crash: adopted ${adopted.length} pending creates; up created ${up.counts.create}, kept ${up.counts.same}\n`);
  }, 600_000);

  it("destroy leaves nothing behind", async () => {
    await engine().destroy();
    expect(await liveApps()).toEqual([]);
    expect(apps(latest())).toEqual([]);
    expect(existsSync(engine().checkpointFile())).toBe(true);
  }, 600_000);
});

describe.skipIf(cli === undefined)(`the CLI's own flags for pending creates, after pulumi up was killed (${cliName(cli)})`, () => {
  const { engine, latest, apps, liveApps, pulumi, killMidApply, emulator } = crashScenario("gms-cli-crash-flags");

  it("refresh --import-pending-creates <urn> <id> drops the pending create without recording its object: up then duplicates it", async () => {
    await killMidApply();
    const pending = latest().pending_operations ?? [];
    expect(pending.length).toBeGreaterThan(0);
    await pulumi("cancel", "--yes");
    const live = await liveApps();
    const imports = pending.flatMap((operation) => {
      const object = live.find((app) => app.name === operation.resource.inputs?.name);
      return object ? ["--import-pending-creates", operation.resource.urn, "--import-pending-creates", object.guid] : [];
    });
    expect(imports.length).toBeGreaterThan(0);
    await pulumi("refresh", "--yes", ...imports);
    const refreshed = latest();
    expect(refreshed.pending_operations ?? []).toEqual([]);
    const recorded = new Set(apps(refreshed).map((resource) => resource.id));
    const forgotten = live.filter((app) => !recorded.has(app.guid));
    // Every imported object is forgotten: the flag turned the operations into `importing` ones, which the refresh dropped.
    expect(forgotten.length).toBe(imports.length / 4);

    await engine().up();
    const after = await liveApps();
    const names = after.map((app) => app.name);
    expect(names.length - new Set(names).size).toBe(forgotten.length);
    process.stdout.write(
      `cli crash flags: ${forgotten.length} imported pending creates forgotten; up made ${after.length} Apps of 12 names\n`,
    );
    // Leave nothing: destroy what the stack holds, and delete the orphans through the API.
    await engine().destroy();
    for (const app of forgotten)
      await fetch(`${emulator().url}/apps/${app.guid}`, { method: "DELETE", headers: { authorization: `Bearer ${emulator().apiKey}` } });
    expect(await liveApps()).toEqual([]);
  }, 600_000);
});
