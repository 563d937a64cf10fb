/**
 * The lock a killed `pulumi up` leaves, and whether recover may release it. The file backend (`file://...`) writes one
 * lock file per run under `.pulumi/locks/` (`organization/<project>/<stack>/` in its project layout, `<stack>/` in the
 * legacy one), naming the run's host, process id, user and start time; `pulumi cancel` deletes every one of them. So
 * recover reads them (the start time is the interrupted update's, ./window.ts) and releases them with `pulumi cancel`
 * only when each names this machine and a process that is no more: a run still going (its creates may be in flight)
 * or another machine's (which recover cannot check) is named, and nothing is changed, unless the caller vouches that
 * every run holding the lock is gone (`--release-lock`: a CI system that runs one job of the stack at a time). A
 * bucket's locks (s3://, gs://, azblob://) are not listed here: the CLI names them when it refuses a command while the
 * stack is locked, `<lock>: created by <user>@<host> (pid <pid>) at <time>`, and `holdersInRefusal` reads that (the
 * pipeline in examples/gitops too, through `pulumi-gms/locks`). To see them before changing anything, recover asks the
 * CLI to rename the stack to its own name (`locksFromRenameRefusal`).
 */
import "../node-guard";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir, hostname } from "node:os";
import { join, resolve } from "node:path";

export interface LockHolder {
  /** Where the lock is (a file, or an object of the bucket without the URL's query). */
  lock: string;
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

/** A holder from what its lock says, with its status seen from this machine. */
function holderOf(lock: string, content: Partial<Record<"pid" | "username" | "hostname" | "timestamp", unknown>>): LockHolder {
  const pid = typeof content.pid === "number" ? content.pid : -1;
  const host = typeof content.hostname === "string" ? content.hostname : "an unknown host";
  return {
    lock,
    pid,
    username: typeof content.username === "string" ? content.username : "an unknown user",
    hostname: host,
    timestamp: typeof content.timestamp === "string" ? content.timestamp : "an unknown time",
    status: host !== hostname() || pid <= 0 ? "elsewhere" : running(pid) ? "running" : "gone",
  };
}

/**
 * The locks a refusal of the CLI names, each once (it may repeat them): what a diy backend says when a command meets a
 * locked stack. Pulumi Cloud names no holder ("Another update is currently in progress"): none is found there.
 */
export function holdersInRefusal(text: string): LockHolder[] {
  const holders = new Map<string, LockHolder>();
  for (const [, at, username, host, pid, timestamp] of text.matchAll(/^\s*(\S+): created by (\S+)@([^@\s]+) \(pid (-?\d+)\) at (\S+)/gm)) {
    const lock = at!.split("?")[0]!;
    if (!holders.has(lock)) holders.set(lock, holderOf(lock, { username, hostname: host, pid: Number(pid), timestamp }));
  }
  return [...holders.values()];
}

/**
 * The lock files of `stack` (its last name: `dev` of `organization/project/dev`) of `project` on the backend at `url`
 * (no project: the legacy layout's only).
 */
export function readLocks(url: string, project: string | undefined, stack: string, cwd: string): Locks {
  const folder = backendFolder(url, cwd);
  if (folder === undefined)
    return { readable: false, reason: `recover reads the locks of a file backend only, and this stack's backend is ${url}` };
  const name = stack.split("/").at(-1)!;
  const dirs = [
    ...(project === undefined ? [] : [join(folder, ".pulumi", "locks", "organization", project, name)]),
    join(folder, ".pulumi", "locks", name),
  ];
  const holders: LockHolder[] = [];
  for (const dir of dirs.filter((each) => existsSync(each))) {
    for (const file of readdirSync(dir).filter((each) => each.endsWith(".json"))) {
      let content: Parameters<typeof holderOf>[1];
      try {
        content = JSON.parse(readFileSync(join(dir, file), "utf8")) as typeof content;
      } catch {
        content = {};
      }
      holders.push(holderOf(join(dir, file), content ?? {}));
    }
  }
  return { readable: true, holders };
}

/** The backends whose locks recover learns from the CLI: the buckets of the diy backend. */
export const isBucketBackend = (url: string) => /^(s3|gs|azblob):\/\//.test(url);

/**
 * A bucket's locks as `pulumi stack rename <stack>` (to its own name) shows them. The CLI checks the stack's lock before
 * the new name: a locked stack is refused naming each holder, an unlocked one because the name is taken. It changes
 * nothing either way (test/examples/gitops-s3.test.ts runs it on the CLI that CI builds).
 */
export function locksFromRenameRefusal(said: string): Locks {
  const holders = holdersInRefusal(said);
  if (holders.length > 0) return { readable: true, holders };
  if (/already exists/.test(said)) return { readable: true, holders: [] };
  return { readable: false, reason: `the CLI did not say whether the stack is locked (${said.trim().split("\n").at(-1) ?? ""})` };
}

/** How much earlier than its lock says a run of another machine may have begun: its clock is not this one. */
export const OTHER_MACHINE_MARGIN_MS = 5 * 60_000;

/**
 * When the earliest holder began (this machine's ms): the interrupted update's start, if a lock names it. Another
 * machine's lock counts only when the caller vouched that its run is gone (`--release-lock`), and as beginning
 * OTHER_MACHINE_MARGIN_MS earlier than it says, since recover cannot measure that machine's clock.
 */
export function lockedSince(locks: Locks, vouched = false): number | undefined {
  if (!locks.readable) return undefined;
  const times = locks.holders
    .filter((holder) => holder.status !== "elsewhere" || vouched)
    .map((holder) => Date.parse(holder.timestamp) - (holder.status === "elsewhere" ? OTHER_MACHINE_MARGIN_MS : 0))
    .filter((time) => !Number.isNaN(time));
  return times.length > 0 ? Math.min(...times) : undefined;
}

/** How a holder is named: `root@ci-7 (pid 4242), since 2026-...`. */
export const describeHolder = (holder: LockHolder): string =>
  `${holder.username}@${holder.hostname} (pid ${holder.pid}), since ${holder.timestamp}`;
