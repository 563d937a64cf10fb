/**
 * A run killed mid-apply (SIGKILL to the engine and its program and host processes, creates in flight):
 * the state it left (file + journal, with the creates it had sent but not recorded) is enough for the
 * next `up` to converge, with no duplicate and no orphan, and for `destroy` to leave nothing behind.
 * The emulator answers every write 150-300 ms after making it, so that the kill lands while creates are in
 * flight whose objects exist.
 *
 * This file follows one kill of a program of Apps step by step. The kill cases (crash-harness.ts) kill runs that
 * bring a stack secrets at several moments: crash-fresh and crash-used on fresh and used stacks, crash-clock
 * against a service whose clock is minutes away from the engine's or whose creates land late.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { LocalEngine, installPackageCopy } from "../../src/testing";
import { PASSPHRASE, childrenOf, running } from "./crash-harness";

const NAMES = Array.from({ length: 12 }, (_, i) => `crash-${i}`);
/** When each request reached the emulator (its answer's time less its duration). */
const requestsStarted: number[] = [];

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
      if (created === 3) break;
    }
    // The kill lands at a moment the test holds, not one a busy machine may pass by: from here on the service answers
    // nothing, and the kill waits for a fourth App in it, whose create was sent and made but never answered.
    const release = emulator.faults.hold();
    // Counted in the database: the API's answers are held too.
    const made = () => (emulator.store.db.get("SELECT count(*) AS n FROM apps") as { n: number }).n;
    for (const deadline = Date.now() + 20_000; made() <= 3 && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 5));
    process.kill(-child.pid!, "SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    release();
    expect(created).toBe(3);
    // Let the requests the kill left in flight reach the emulator's handlers.
    await new Promise((resolve) => setTimeout(resolve, 600));

    expect(existsSync(join(dir, "state.json"))).toBe(false);
    // The ids of the stack the provider was told, left beside the state file (the next run overwrites and removes it).
    expect(existsSync(join(dir, "state.json.ids"))).toBe(true);
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
    expect(existsSync(join(dir, "state.json.ids"))).toBe(false);
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
