/**
 * Builds the package once before the tests: the provider and engine tests run the compiled package the
 * way a user's program does (installed under node_modules, required by the dynamic-provider host).
 * Type errors do not stop the build here (tsc still emits); `npm test` type-checks before vitest runs.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";

export default function setup(): void {
  const root = join(__dirname, "..");
  const build = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "src")], { encoding: "utf8" });
  // tsc exits 2 when it reports type errors but emitted anyway; anything else is a failed build.
  if (build.status !== 0 && build.status !== 2) throw new Error(`build failed (${build.status}): ${build.stdout}${build.stderr}`);
  if (build.status === 2) process.stderr.write(`build emitted with type errors:\n${build.stdout}`);
}
