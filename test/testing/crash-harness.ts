/**
 * The kill cases of the crash suites (crash-*.test.ts): a run that brings a stack secrets (ProviderConnections and
 * Models with their `key`) is killed with SIGKILL at a moment its journal shows, on a fresh or a used stack, the
 * engine alone or with its children, each case with its own seed, emulator, stack and database file; the next `up`
 * must converge and `destroy` leave nothing, counted straight in the emulator's SQLite file. The cases are spread
 * over several files so that they run side by side.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { mulberry32 } from "../../src/emulator/faults";
import { LocalEngine, StateFile, gmsPlaceholders, installPackageCopy } from "../../src/testing";
import { type Census, FIXTURES, KINDS, type KindName, census, fixtureGuids } from "./chaos-scenario";

export const PASSPHRASE = "crash";

/** The processes whose parent is `pid` (`ps` exits 1 when there is none). */
export const childrenOf = (pid: number) =>
  spawnSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
    .stdout.split("\n")
    .map((line) => Number(line.trim()))
    .filter((found) => found > 0);

/** Whether a process runs under `pid`. */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The program of the kill cases: per copy an App and a Workflow under it; with `withKeys`, per copy a
 * ProviderConnection and a Model that hold the secret `key`, and one Skill (Skills are made under the
 * workspace's configured name, so a stack has one, whose object its name cannot tell from the template's).
 */
const KILL_PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";

const config = new pulumi.Config();
const copies = config.requireNumber("copies");
const withKeys = config.requireBoolean("withKeys");
const key = config.requireSecret("openaiKey");
for (let i = 0; i < copies; i++) {
  const app = new gms.App("app-" + i, { name: "kill app " + i, description: "kill" });
  new gms.Workflow("flow-" + i, { name: "kill flow " + i, app: app.id });
  if (withKeys) {
    new gms.ProviderConnection("connection-" + i, { provider: "openai", key, name: "kill connection " + i });
    new gms.Model("model-" + i, { llm: "kill-llm-" + i, provider: "openai", key });
  }
}
if (withKeys) new gms.Skill("skill", { name: "web-search", type: "web" });
`;

/** What the program declares of each kind (the census of a converged stack). */
function declared(copies: number, withKeys: boolean): Record<KindName, Census> {
  const counts: Partial<Record<KindName, number>> = { App: copies, Workflow: copies };
  if (withKeys) Object.assign(counts, { ProviderConnection: copies, Model: copies, Skill: 1 });
  return Object.fromEntries(
    (Object.keys(KINDS) as KindName[]).map((kind) => {
      const count = counts[kind] ?? 0;
      return [kind, { live: count, recorded: count, duplicates: 0, orphans: 0, missing: 0, missingResources: [] as string[] }];
    }),
  ) as Record<KindName, Census>;
}

export interface KillCase {
  name: string;
  /**
   * Every create of the killed run is one the service finishes `byMs` after the client has gone (the emulator's
   * `late` fault), within its deadline of `deadlineMs`, which the engines are told (GMS_REQUEST_DEADLINE_MS):
   * objects the kill left in flight land while the next run is settling their placeholders.
   */
  late?: { byMs: number; deadlineMs: number };
  /** Seeds the emulator's latencies and the moment of the kill. */
  seed: number;
  /** The stack before the killed run: none (fresh), or an `up` of the program with these settings. */
  before?: { copies: number; withKeys: boolean };
  /** What the killed run declares; it brings the keyed kinds. */
  copies: number;
  /** SIGKILL to the engine's process group (the engine with its children), or to the engine alone. */
  kill: "group" | "engine";
  /**
   * When: once `count` lines of the journal hold `text` (`"creating"`: creates sent, `"put"`: results
   * recorded, `"ciphertext"`: entries holding a secret), then after a seeded delay of up to 150 ms, the service
   * holding its answers from the moment on (`faults.hold()`). The journal, not the progress lines: those come in
   * the program's order, so they lag behind the steps.
   */
  at: { text: string; count: number };
}

/** One program directory for every kill case (each has its own stack, state and database file in it). */
let killDir: string | undefined;
function killProgramDir(): string {
  if (killDir) return killDir;
  killDir = mkdtempSync(join(tmpdir(), "gms-kill-"));
  writeFileSync(join(killDir, "package.json"), JSON.stringify({ name: "kill-program", private: true, type: "module" }));
  installPackageCopy(killDir);
  writeFileSync(join(killDir, "kill.ts"), KILL_PROGRAM);
  return killDir;
}
/** Removes the program directory of the file's kill cases (an `afterAll` of each crash file). */
export function removeKillProgramDir(): void {
  if (killDir) rmSync(killDir, { recursive: true, force: true });
  killDir = undefined;
}

/**
 * Starts an emulator of its own for the case (its clock `offsetMs` off this machine's), runs and kills,
 * re-runs `up` once and `destroy` once, checking after each that the state loads and that what the service
 * holds is what the state records: every declared object once, then nothing.
 */
export async function killAndConverge(offsetMs: number, kill: KillCase): Promise<void> {
  const dir = killProgramDir();
  const dbFile = join(dir, `${kill.name}.db`);
  const emulator = await startEmulator({ port: 0, db: dbFile, fixtures: FIXTURES, clockOffsetMs: offsetMs });
  try {
    await killedRunConverges(emulator, dbFile, dir, kill);
  } finally {
    await emulator.close();
  }
}

async function killedRunConverges(emulator: RunningEmulator, dbFile: string, dir: string, kill: KillCase): Promise<void> {
  const fixtures = fixtureGuids(emulator);
  // The workspace's configured Skill was made long before any run, as on a real service: made with the
  // emulator a moment ago, it would fall in the first kill window, where a Skill placeholder's lookup meets it.
  const longAgo = new Date(emulator.store.clock.now() - 3_600_000).toISOString();
  for (const { table } of Object.values(KINDS))
    emulator.store.db.run(`UPDATE ${table} SET created_at = ?, updated_at = ?`, longAgo, longAgo);
  const stateFile = join(dir, `${kill.name}.json`);
  const options = (copies: number, withKeys: boolean) => ({
    programDir: dir,
    program: "kill.ts",
    stateFile,
    project: "kill",
    stack: kill.name,
    config: {
      "gms:baseUrl": emulator.url,
      "gms:apiKey": { secret: emulator.apiKey },
      copies: String(copies),
      withKeys: String(withKeys),
      openaiKey: { secret: "sk-kill-7c2d0e" },
    } as Record<string, string | { secret: string }>,
    secretsPassphrase: PASSPHRASE,
    // Without `late`, the emulator handles each request at once: a killed run's creates have landed within a second.
    env: { GMS_REQUEST_DEADLINE_MS: String(kill.late?.deadlineMs ?? 1000) },
  });
  const recorded = () =>
    (JSON.parse(readFileSync(stateFile, "utf8")) as { resources: { urn: string; type: string; id: string }[] }).resources;
  if (kill.before) await new LocalEngine({ ...options(kill.before.copies, kill.before.withKeys), log: () => undefined }).up();

  emulator.faults.set(
    kill.late
      ? `seed=${kill.seed},late=1,late-by=${kill.late.byMs},deadline=${kill.late.deadlineMs},methods=POST`
      : `seed=${kill.seed},latency=150-300,latency-at=answer,methods=POST+PUT+DELETE`,
  );
  const random = mulberry32(kill.seed); // the same seed, the same kill moment
  const script = join(dir, `${kill.name}.mjs`);
  writeFileSync(
    script,
    `import { LocalEngine } from "pulumi-gms/testing";
await new LocalEngine({ ...${JSON.stringify(options(kill.copies, true))}, log: (line) => console.log(line) }).up();
`,
  );
  const child: ChildProcess = spawn(process.execPath, [script], {
    cwd: dir,
    detached: kill.kill === "group",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  // What the run printed, to say why it ended before the kill (the engine blanks secrets from its messages).
  const output: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on("line", (line) => output.push(line));
  const journal = () => (existsSync(`${stateFile}.journal`) ? readFileSync(`${stateFile}.journal`, "utf8") : "");
  const reached = () =>
    journal()
      .split("\n")
      .filter((line) => line.includes(kill.at.text)).length >= kill.at.count;
  while (!reached() && child.exitCode === null) await sleep(5);
  // From the moment on, the service answers nothing until the kill has landed: the run may send more (which the
  // service makes, its answers held) for the seeded delay, but cannot move past the moment, however busy the machine.
  const release = emulator.faults.hold();
  await sleep(Math.floor(random() * 150));
  if (child.exitCode !== null) throw new Error(`the run ended before the kill (${child.exitCode}):\n${output.join("\n")}`);
  const children = childrenOf(child.pid!);
  if (kill.kill === "group") process.kill(-child.pid!, "SIGKILL");
  else process.kill(child.pid!, "SIGKILL");
  await exited;
  release();
  expect(child.signalCode, `the run was killed before it finished (exit ${child.exitCode}):\n${output.join("\n")}`).toBe("SIGKILL");
  // The engine's children end on their own once it is gone; requests they had sent land meanwhile.
  for (let waited = 0; children.some(running) && waited < 5_000; waited += 50) await sleep(50);
  expect(children.filter(running), "the engine's children outlived it").toEqual([]);
  await sleep(600);
  emulator.faults.set(undefined);
  expect(journal(), "the kill left a journal").toContain(kill.at.text);

  // Whatever the kill left loads, secrets included.
  await expect(new StateFile(stateFile, PASSPHRASE, { lostCreate: gmsPlaceholders.lostCreate }).load()).resolves.toBeDefined();
  await new LocalEngine({ ...options(kill.copies, true), log: () => undefined }).up();
  // Nothing of the killed run is still to land (with `late`, the up waited out the deadline of what was in flight).
  await emulator.faults.idle();
  expect(census(dbFile, recorded(), fixtures)).toEqual(declared(kill.copies, true));

  await new LocalEngine({ ...options(kill.copies, true), log: () => undefined }).destroy();
  expect(recorded()).toEqual([]);
  expect(census(dbFile, [], fixtures)).toEqual(declared(0, false));
}
