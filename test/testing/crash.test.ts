/**
 * A run killed mid-apply (SIGKILL to the engine and its program and host processes, creates in flight):
 * the state it left (file + journal, with the creates it had sent but not recorded) is enough for the
 * next `up` to converge, with no duplicate and no orphan, and for `destroy` to leave nothing behind.
 * The emulator answers every write 150-300 ms after making it, so that the kill lands while creates are in
 * flight whose objects exist.
 *
 * The first describe follows one kill of a program of Apps step by step. The second kills runs that bring
 * a stack secrets (ProviderConnections and Models with their `key`) at several moments, on fresh and used
 * stacks, the engine alone or with its children, each with its own seed; the third does the same against a
 * service whose clock is minutes away from the engine's. Each then re-runs `up` once and `destroy` once and
 * counts the objects straight in the emulator's SQLite file.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { mulberry32 } from "../../src/emulator/faults";
import { LocalEngine, StateFile, gmsPlaceholders, installPackageCopy } from "../../src/testing";
import { type Census, FIXTURES, KINDS, type KindName, census, fixtureGuids } from "./chaos-scenario";

const NAMES = Array.from({ length: 12 }, (_, i) => `crash-${i}`);
const PASSPHRASE = "crash";
/** When each request reached the emulator (its answer's time less its duration). */
const requestsStarted: number[] = [];

/** The processes whose parent is `pid` (`ps` exits 1 when there is none). */
const childrenOf = (pid: number) =>
  spawnSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
    .stdout.split("\n")
    .map((line) => Number(line.trim()))
    .filter((found) => found > 0);

/** Whether a process runs under `pid`. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("LocalEngine killed mid-apply", () => {
  let dir: string;
  let emulator: RunningEmulator;
  const options = () => ({
    programDir: dir,
    stateFile: join(dir, "state.json"),
    project: "crash",
    stack: "dev",
    config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey } } as Record<string, string | { secret: string }>,
    secretsPassphrase: PASSPHRASE,
    // The emulator handles each request at once (answering 150-300 ms later): a killed run's creates have landed within a second.
    env: { GMS_REQUEST_DEADLINE_MS: "1000" },
  });
  const liveApps = async () => {
    const response = await fetch(`${emulator.url}/apps?limit=100`, { headers: { authorization: `Bearer ${emulator.apiKey}` } });
    return ((await response.json()) as { data: { guid: string; name: string }[] }).data;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gms-crash-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "crash-program", private: true, type: "module" }));
    installPackageCopy(dir);
    writeFileSync(
      join(dir, "index.ts"),
      `import * as gms from "pulumi-gms";\nfor (const name of ${JSON.stringify(NAMES)}) new gms.App(name, { name, description: "crash test" });\n`,
    );
    emulator = await startEmulator({
      port: 0,
      faults: "seed=3,latency=150-300,latency-at=answer,methods=POST+PUT+DELETE",
      onRequestComplete: (entry) => void requestsStarted.push(Date.now() - entry.durationMs),
    });
  });

  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("leaves a journal holding the creates it sent but never recorded", async () => {
    // The engine runs in its own process group, killed at once (no chance to finish) after its third step.
    writeFileSync(
      join(dir, "run.mjs"),
      `import { LocalEngine } from "pulumi-gms/testing";
const engine = new LocalEngine({ ...${JSON.stringify(options())}, parallel: 3, log: (line) => console.log(line) });
await engine.up();
`,
    );
    const child: ChildProcess = spawn(process.execPath, ["run.mjs"], { cwd: dir, detached: true, stdio: ["ignore", "pipe", "inherit"] });
    let created = 0;
    for await (const line of createInterface({ input: child.stdout! })) {
      if (line.includes(" created")) created++;
      if (created === 3) {
        process.kill(-child.pid!, "SIGKILL");
        break;
      }
    }
    await new Promise((resolve) => child.once("exit", resolve));
    expect(created).toBe(3);
    // Let the requests the kill left in flight reach the emulator's handlers.
    await new Promise((resolve) => setTimeout(resolve, 600));

    expect(existsSync(join(dir, "state.json"))).toBe(false);
    const journal = readFileSync(join(dir, "state.json.journal"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, { id?: string }>);
    const settled = new Set(journal.filter((entry) => entry.settled).map((entry) => String(entry.settled)));
    const unsettled = journal.filter((entry) => entry.creating && !settled.has(entry.creating.id!));
    expect(unsettled.length).toBeGreaterThan(0);
    expect(journal.filter((entry) => entry.put)).toHaveLength(settled.size);
    // More objects exist than the journal records: the unsettled creates made theirs.
    expect((await liveApps()).length).toBeGreaterThan(settled.size);
  });

  it("the next up converges: every App once, the placeholders resolved and gone", async () => {
    const result = await new LocalEngine({ ...options(), log: () => undefined }).up();
    const apps = await liveApps();
    expect(apps.map((app) => app.name).sort()).toEqual([...NAMES].sort());
    const state = JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { resources: { id: string; name: string }[] };
    expect(state.resources.map((resource) => resource.name).sort()).toEqual([...NAMES].sort());
    expect(new Set(state.resources.map((resource) => resource.id))).toEqual(new Set(apps.map((app) => app.guid)));
    expect(existsSync(join(dir, "state.json.journal"))).toBe(false);
    expect(result.counts.create + result.counts.same).toBe(NAMES.length);

    const again = await new LocalEngine({ ...options(), log: () => undefined }).up();
    expect(again.counts.same).toBe(NAMES.length);
  });

  it("killing the engine process alone ends its program and provider host too: no request is sent after", async () => {
    // Twelve more Apps to create (their answers come late), so that the program and the host are both busy.
    const more = NAMES.map((name) => `${name}-more`);
    writeFileSync(
      join(dir, "more.ts"),
      `import * as gms from "pulumi-gms";\nfor (const name of ${JSON.stringify([...NAMES, ...more])}) new gms.App(name, { name });\n`,
    );
    writeFileSync(
      join(dir, "run.mjs"),
      `import { LocalEngine } from "pulumi-gms/testing";
await new LocalEngine({ ...${JSON.stringify(options())}, program: "more.ts", parallel: 2, log: (line) => console.log(line) }).up();
`,
    );
    const child: ChildProcess = spawn(process.execPath, ["run.mjs"], { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
    // Once a create is done and more are under way, the engine alone is killed: not its program or its host.
    let created = false;
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => (created ||= line.includes(" created")));
    let children: number[] = [];
    while (children.length < 2 || !created) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      children = childrenOf(child.pid!);
    }
    process.kill(child.pid!, "SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    const killedAt = Date.now();
    const gone = async () => {
      for (let waited = 0; waited < 5_000; waited += 50) {
        if (children.every((pid) => !running(pid))) return true;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return false;
    };
    expect(await gone()).toBe(true);
    // Requests already handed to the service may still complete; none starts after the children are gone.
    const goneAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(requestsStarted.filter((at) => at > goneAt)).toEqual([]);
    expect(goneAt - killedAt).toBeLessThan(5_000);
  });

  it("destroy leaves nothing behind", async () => {
    await new LocalEngine({ ...options(), log: () => undefined }).destroy();
    expect(await liveApps()).toEqual([]);
  });
});

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

interface KillCase {
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
   * recorded, `"ciphertext"`: entries holding a secret), then after a seeded delay of up to 150 ms. The
   * journal, not the progress lines: those come in the program's order, so they lag behind the steps.
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
afterAll(() => {
  if (killDir) rmSync(killDir, { recursive: true, force: true });
});

/**
 * Starts an emulator of its own for the case (its clock `offsetMs` off this machine's), runs and kills,
 * re-runs `up` once and `destroy` once, checking after each that the state loads and that what the service
 * holds is what the state records: every declared object once, then nothing.
 */
async function killAndConverge(offsetMs: number, kill: KillCase): Promise<void> {
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
  await sleep(Math.floor(random() * 150));
  if (child.exitCode !== null) throw new Error(`the run ended before the kill (${child.exitCode}):\n${output.join("\n")}`);
  const children = childrenOf(child.pid!);
  if (kill.kill === "group") process.kill(-child.pid!, "SIGKILL");
  else process.kill(child.pid!, "SIGKILL");
  await exited;
  expect(child.signalCode, "the run was killed before it finished").toBe("SIGKILL");
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

describe("LocalEngine killed at any moment while it brings a stack secrets", () => {
  const cases: KillCase[] = [
    { name: "fresh-group-first-secret", seed: 1, copies: 3, kill: "group", at: { text: "ciphertext", count: 1 } },
    { name: "fresh-engine-2-recorded", seed: 2, copies: 3, kill: "engine", at: { text: '"put"', count: 2 } },
    { name: "fresh-group-6-recorded", seed: 3, copies: 3, kill: "group", at: { text: '"put"', count: 6 } },
    { name: "fresh-engine-first-create", seed: 4, copies: 3, kill: "engine", at: { text: '"creating"', count: 1 } },
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

describe("LocalEngine killed while the service's clock is minutes away from the engine's", () => {
  it.each([
    [-3 * 60_000, { name: "behind-group-2-recorded", seed: 11, copies: 3, kill: "group", at: { text: '"put"', count: 2 } }],
    [
      4 * 60_000,
      {
        name: "ahead-engine-first-secret",
        seed: 12,
        before: { copies: 2, withKeys: false },
        copies: 3,
        kill: "engine",
        at: { text: "ciphertext", count: 1 },
      },
    ],
  ] as [number, KillCase][])("service clock %i ms off: the next up converges and destroy leaves nothing", (offsetMs, kill) =>
    killAndConverge(offsetMs, kill),
  );
});

describe("LocalEngine killed while the service is still making objects the killed run asked for", () => {
  // Each create lands 4 s after it was sent, once the next run has loaded its placeholders and begun: they are
  // settled only after the service's deadline (5 s from sending), so none misses its object (without the wait,
  // seen: the next up made each object again and the late one stayed, a duplicate nobody manages).
  it.each<KillCase>([
    {
      name: "late-group-first-create",
      seed: 21,
      copies: 2,
      kill: "group",
      at: { text: '"creating"', count: 1 },
      late: { byMs: 4000, deadlineMs: 5000 },
    },
    {
      name: "late-engine-3-creates",
      seed: 22,
      before: { copies: 1, withKeys: false },
      copies: 2,
      kill: "engine",
      at: { text: '"creating"', count: 3 },
      late: { byMs: 4000, deadlineMs: 5000 },
    },
  ])("$name: the next up converges and destroy leaves nothing", (kill) => killAndConverge(0, kill));
});
