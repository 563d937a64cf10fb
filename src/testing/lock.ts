/**
 * One operation at a time per state file: `up`, `refresh` and `destroy` hold `<state file>.lock` (created
 * exclusively, naming the holder) while they run; a second operation is refused with an error that names the
 * holder. A lock whose holder is a process of this machine that is no longer running (killed mid-operation) is
 * taken over, with a line saying so. `preview` reads the state only and takes no lock, as `pulumi preview` does.
 * (Pulumi's file backend refuses a lock left by a dead process too, until `pulumi cancel` removes it.)
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { type Clock, systemClock } from "../provider/clock";
import { EngineError } from "./errors";
import type { Operation } from "./results";

export interface LockHolder {
  pid: number;
  hostname: string;
  operation: Operation;
  /** When the holder took the lock (ISO 8601). */
  startedAt: string;
}

export class StateLock {
  private constructor(
    readonly path: string,
    private readonly holder: LockHolder,
  ) {}

  /** Takes the lock of `stateFile` for `operation`, or throws a LOCKED EngineError naming its holder. */
  static acquire(stateFile: string, operation: Operation, log: (line: string) => void, clock: Clock = systemClock): StateLock {
    const path = `${stateFile}.lock`;
    const holder: LockHolder = { pid: process.pid, hostname: hostname(), operation, startedAt: new Date(clock.now()).toISOString() };
    mkdirSync(dirname(path), { recursive: true });
    for (let attempt = 0; ; attempt++) {
      try {
        writeFileSync(path, `${JSON.stringify(holder)}\n`, { flag: "wx" });
        return new StateLock(path, holder);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const current = readHolder(path);
      // Taken over once: a second EEXIST means another operation took it meanwhile.
      if (attempt === 0 && current && current.hostname === holder.hostname && !running(current.pid)) {
        log(`(taking over the lock of ${describe(current)}: that process is no longer running)`);
        rmSync(path, { force: true });
        continue;
      }
      throw new EngineError(
        "LOCKED",
        current
          ? `The state ${stateFile} is locked by ${describe(current)}: wait for it to end, or, if it is gone, delete ${path}`
          : `The state ${stateFile} is locked (${path} names no holder this engine can read): if no operation is running, delete it`,
      );
    }
  }

  /** Gives the lock back (only this holder's: a lock another operation took over is left alone). */
  release(): void {
    const current = readHolder(this.path);
    if (current?.pid === this.holder.pid && current.startedAt === this.holder.startedAt) rmSync(this.path, { force: true });
  }
}

function readHolder(path: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(path, "utf8")) as Partial<LockHolder>;
    return typeof holder.pid === "number" && typeof holder.hostname === "string" ? (holder as LockHolder) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process of this machine runs under `pid` (one we may not signal runs too). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const describe = (holder: LockHolder) =>
  `${holder.operation ?? "an operation"} (process ${holder.pid} on ${holder.hostname}, since ${holder.startedAt})`;
