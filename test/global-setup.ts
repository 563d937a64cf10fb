/**
 * Before the tests: builds the package once (the provider and engine tests run the compiled package the way a
 * user's program does, installed under node_modules, required by the dynamic-provider host). The build is
 * incremental (dist/.tsbuildinfo): after `npm ci`, whose `prepare` built it, an unchanged tree costs a few seconds. Type errors do not
 * stop the build here (tsc still emits); `npm test` type-checks before vitest runs.
 *
 * Every temporary file of the run (the tests', and the CLI's, the hosts' and the programs' they start) goes into
 * one folder of the machine's temp directory, `gms-test-<pid>-…` (TMPDIR, which os.tmpdir() and child processes
 * read), removed when the run ends: the run leaves nothing behind, even when a test is killed midway. What a test
 * left there is named (prefixes and counts) just before the run's closing line (summary-reporter.ts), so that a test
 * that forgets to clean up is seen and fixed.
 *
 * Every Node.js process the tests start (programs, provider hosts, the CLI's language hosts) shares one compile
 * cache in that folder (`NODE_COMPILE_CACHE`), so that `@pulumi/pulumi` is compiled once per run, not once per process,
 * and the SDK's ts-node keeps what it compiles of the programs there too (`TS_NODE_CACHE_DIRECTORY`).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The environment variable naming the run's temporary folder, which the summary reporter reads. */
export const RUN_TEMP = "GMS_TEST_RUN_TEMP";

/** The run's caches: Node's compiled code, and what the SDK's ts-node compiled of the programs (TypeScript). */
const CACHES = ["node-compile-cache", "ts-node-cache"];

export default function setup(): () => Promise<void> {
  const root = join(__dirname, "..");
  const build = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "src")], { encoding: "utf8" });
  // tsc exits 2 when it reports type errors but emitted anyway; anything else is a failed build.
  if (build.status !== 0 && build.status !== 2) throw new Error(`build failed (${build.status}): ${build.stdout}${build.stderr}`);
  if (build.status === 2) process.stderr.write(`build emitted with type errors:\n${build.stdout}`);

  const runTemp = mkdtempSync(join(tmpdir(), `gms-test-${process.pid}-`));
  process.env.TMPDIR = runTemp;
  // Not on Node.js 22 (the minimum's run, `npm run test:min-node`): there a vitest worker writing the compile cache as
  // it exits outlives vitest's time to terminate it ("Timeout terminating forks worker"), and still writes into the
  // folder while it goes. Node.js 24, which runs `npm test`, writes it in time.
  if (Number(process.versions.node.split(".")[0]) >= 24) process.env.NODE_COMPILE_CACHE ??= join(runTemp, CACHES[0]!);
  process.env.TS_NODE_CACHE_DIRECTORY ??= join(runTemp, CACHES[1]!);
  process.env[RUN_TEMP] = runTemp;
  return async () => {
    // A process still exiting (a worker, a provider host) may write into the folder while it goes: rmSync then meets
    // ENOTEMPTY, and its own retries only retry the last rmdir, so the whole removal is tried again.
    for (let attempt = 1; ; attempt++) {
      try {
        rmSync(runTemp, { recursive: true, force: true });
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOTEMPTY" || attempt === 20) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  };
}

/**
 * What the tests left in the run's temporary folder (prefixes and counts), as a line, or undefined when they left
 * nothing: the summary reporter prints it before the run's closing line, and the folder goes when the run ends.
 */
export function leftInTemp(): string | undefined {
  const runTemp = process.env[RUN_TEMP];
  if (!runTemp) return undefined;
  const left = readdirSync(runTemp).filter((name) => !CACHES.includes(name));
  if (left.length === 0) return undefined;
  const byPrefix = new Map<string, number>();
  for (const name of left) {
    const prefix = name.replace(/[-_.]?[A-Za-z0-9]{6}$/, "").replace(/-\d+$/, "");
    byPrefix.set(prefix, (byPrefix.get(prefix) ?? 0) + 1);
  }
  const list = [...byPrefix].map(([prefix, count]) => `${prefix} (${count})`).join(", ");
  return `temp: the tests left ${left.length} entries, removed when the run ends: ${list}`;
}
