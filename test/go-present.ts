/** Whether Go runs, for the suites that need it: if not, prints why they skip, or fails under CI=true, where Go is required. */
import { spawnSync } from "node:child_process";

export function goPresent(file: string, what: string): boolean {
  const probe = spawnSync("go", ["version"], { encoding: "utf8" });
  if (probe.status === 0) return true;
  const reason = `go does not run (${probe.error?.message ?? probe.stderr.trim()})`;
  if (process.env.CI === "true") throw new Error(`${file}: go is required under CI=true: ${reason}`);
  console.log(`${file}: skipping ${what}: ${reason}`);
  return false;
}
