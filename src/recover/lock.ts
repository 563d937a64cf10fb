/**
 * The lock a killed `pulumi up` leaves, and whether recover may release it. The file backend (`file://...`) writes one
 * lock file per run under `.pulumi/locks/` (`organization/<project>/<stack>/` in its project layout, `<stack>/` in the
 * legacy one), naming the run's host, process id, user and start time; `pulumi cancel` deletes every one of them. So
 * recover reads them (the start time is the interrupted update's, ./window.ts) and releases them with `pulumi cancel`
 * only when each names this machine and a process that is no more: a run still going (its creates may be in flight)
 * or another machine's (which recover cannot check) is named, and nothing is changed. Other backends' locks cannot be
 * read here: on them, the CLI refuses the import while the stack is locked, and says by whom.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir, hostname } from "node:os";
import { join, resolve } from "node:path";

export interface LockHolder {
  pid: number;
  username: string;
  hostname: string;
  /** When the run took the lock (ISO 8601, the run's machine's clock). */
  timestamp: string;
  /** `gone`: a process of this machine that is no more; `running`: one that still runs; `elsewhere`: another machine's. */
  status: "gone" | "running" | "elsewhere";
}

export type Locks =
  /** The backend's lock files were read: the holders (none when the stack is not locked). */
  | { readable: true; holders: LockHolder[] }
  /** A backend whose locks recover does not read. */
  | { readable: false; reason: string };

/** The folder of a `file://` backend URL (`~` is the home folder, a relative path is the project's), else undefined. */
export function backendFolder(url: string, cwd: string): string | undefined {
  if (!url.startsWith("file://")) return undefined;
  let path = decodeURIComponent(url.slice("file://".length).split("?")[0]!);
  if (path === "~" || path.startsWith("~/")) path = join(homedir(), path.slice(1));
  return resolve(cwd, path);
}

/** Whether process `pid` of this machine is still running (a zombie, killed and not yet reaped, is not). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // Field 3 of /proc/<pid>/stat, after the parenthesised name (which may hold spaces), is the state.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

/** The lock files of `stack` (its last name: `dev` of `organization/project/dev`) of `project` on the backend at `url`. */
export function readLocks(url: string, project: string, stack: string, cwd: string): Locks {
  const folder = backendFolder(url, cwd);
  if (folder === undefined)
    return { readable: false, reason: `recover reads the locks of a file backend only, and this stack's backend is ${url}` };
  const name = stack.split("/").at(-1)!;
  const dirs = [join(folder, ".pulumi", "locks", "organization", project, name), join(folder, ".pulumi", "locks", name)];
  const holders: LockHolder[] = [];
  for (const dir of dirs.filter((each) => existsSync(each))) {
    for (const file of readdirSync(dir).filter((each) => each.endsWith(".json"))) {
      let content: Partial<Omit<LockHolder, "status">>;
      try {
        content = JSON.parse(readFileSync(join(dir, file), "utf8")) as typeof content;
      } catch {
        content = {};
      }
      const pid = typeof content.pid === "number" ? content.pid : -1;
      const host = typeof content.hostname === "string" ? content.hostname : "an unknown host";
      holders.push({
        pid,
        username: typeof content.username === "string" ? content.username : "an unknown user",
        hostname: host,
        timestamp: typeof content.timestamp === "string" ? content.timestamp : "an unknown time",
        status: host !== hostname() || pid <= 0 ? "elsewhere" : running(pid) ? "running" : "gone",
      });
    }
  }
  return { readable: true, holders };
}

/** When the earliest holder began (this machine's ms): the interrupted update's start, if a lock names it. */
export function lockedSince(locks: Locks): number | undefined {
  if (!locks.readable) return undefined;
  const times = locks.holders.map((holder) => Date.parse(holder.timestamp)).filter((time) => !Number.isNaN(time));
  return times.length > 0 ? Math.min(...times) : undefined;
}

/** How a holder is named: `root@ci-7 (pid 4242), since 2026-...`. */
export const describeHolder = (holder: LockHolder): string =>
  `${holder.username}@${holder.hostname} (pid ${holder.pid}), since ${holder.timestamp}`;
