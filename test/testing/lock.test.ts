/**
 * One LocalEngine operation at a time per state file: a second `up` while one runs is refused with an error
 * naming the holder and creates nothing; a lock left by a process that is gone is taken over; a lock of
 * another machine, or one that names no holder, is refused; `preview` takes no lock. The lock is given back
 * when an operation ends, failed ones included.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { EngineError, LocalEngine, installPackageCopy } from "../../src/testing";

const NAMES = Array.from({ length: 6 }, (_, i) => `locked-${i}`);

describe("LocalEngine's lock on the state file", () => {
  let dir: string;
  let emulator: RunningEmulator;
  const log: string[] = [];
  const engine = () =>
    new LocalEngine({
      programDir: dir,
      stateFile: join(dir, "state", "dev.json"),
      project: "lock",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey } },
      secretsPassphrase: "lock test",
      log: (line) => log.push(line),
    });
  const lockFile = () => join(dir, "state", "dev.json.lock");
  const apps = async () =>
    (
      (await (await fetch(`${emulator.url}/apps?limit=100`, { headers: { authorization: `Bearer ${emulator.apiKey}` } })).json()) as {
        data: { name: string }[];
      }
    ).data.map((app) => app.name);
  const failureOf = (operation: Promise<unknown>) =>
    operation.then(
      () => undefined,
      (error: unknown) => error as EngineError,
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gms-lock-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "lock-program", private: true, type: "module" }));
    writeFileSync(
      join(dir, "index.ts"),
      `import * as gms from "pulumi-gms";\nfor (const name of ${JSON.stringify(NAMES)}) new gms.App(name, { name });\n`,
    );
    installPackageCopy(dir);
    emulator = await startEmulator({ port: 0 });
  });
  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a second up while one runs, naming the holder; the first creates everything once and gives the lock back", async () => {
    const first = engine().up();
    // The first took the lock synchronously when it started.
    expect(existsSync(lockFile())).toBe(true);
    const second = await failureOf(engine().up());
    expect(second).toBeInstanceOf(EngineError);
    expect(second?.code).toBe("LOCKED");
    expect(second?.message).toMatch(
      new RegExp(
        `^The state .*dev\\.json is locked by up \\(process ${process.pid} on ${hostname()}, since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\): wait for it to end`,
      ),
    );
    expect((await first).counts.create).toBe(NAMES.length);
    expect((await apps()).sort()).toEqual([...NAMES].sort());
    expect(existsSync(lockFile())).toBe(false);
  }, 120_000);

  it("takes over a lock left by a process that is no longer running, and says so", async () => {
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const deadPid = Number(gone.stdout);
    writeFileSync(
      lockFile(),
      JSON.stringify({ pid: deadPid, hostname: hostname(), operation: "up", startedAt: "2026-11-25T00:00:00.000Z" }),
    );
    log.length = 0;
    const result = await engine().up();
    expect(result.counts.same).toBe(NAMES.length);
    expect(log).toContain(
      `(taking over the lock of up (process ${deadPid} on ${hostname()}, since 2026-11-25T00:00:00.000Z): that process is no longer running)`,
    );
    expect(existsSync(lockFile())).toBe(false);
  }, 120_000);

  it("refuses a lock of another machine, and one that names no holder; preview takes no lock", async () => {
    writeFileSync(
      lockFile(),
      JSON.stringify({ pid: 1, hostname: "elsewhere.example", operation: "destroy", startedAt: "2026-11-25T00:00:00.000Z" }),
    );
    const other = await failureOf(engine().destroy());
    expect(other?.code).toBe("LOCKED");
    expect(other?.message).toContain("is locked by destroy (process 1 on elsewhere.example, since 2026-11-25T00:00:00.000Z)");
    expect((await engine().preview()).counts.same).toBe(NAMES.length);
    writeFileSync(lockFile(), "");
    const unreadable = await failureOf(engine().refresh());
    expect(unreadable?.code).toBe("LOCKED");
    expect(unreadable?.message).toMatch(/names no holder this engine can read\): if no operation is running, delete it$/);
    // Neither refused operation touched the lock it did not hold.
    expect(readFileSync(lockFile(), "utf8")).toBe("");
    rmSync(lockFile());
    expect((await apps()).length).toBe(NAMES.length);
  }, 120_000);

  it("gives the lock back after a failed operation", async () => {
    await emulator.close();
    const failure = await failureOf(engine().destroy());
    expect(failure).toBeInstanceOf(EngineError);
    expect(failure?.code).not.toBe("LOCKED");
    expect(existsSync(lockFile())).toBe(false);
  }, 120_000);
});
