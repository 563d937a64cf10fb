/**
 * Builds the package once before the tests: the provider and engine tests run the compiled package the
 * way a user's program does (installed under node_modules, required by the dynamic-provider host).
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export default function setup(): void {
  const root = join(__dirname, "..");
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.build.json")], { stdio: "inherit" });
}
