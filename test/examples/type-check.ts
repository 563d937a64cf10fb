/** Type-checks a script of the examples as a user's editor would: strict, nodenext, importing the package by its name. */
import { spawnSync } from "node:child_process";
import { join } from "node:path";

export const TSC = join(__dirname, "..", "..", "node_modules", "typescript", "bin", "tsc");

const SCRIPT_OPTIONS = ["--noEmit", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2023", "--strict"];

/** What tsc printed about `file` (empty when it type-checks) and its exit status. */
export function typeCheckScript(file: string): { output: string; status: number | null } {
  const tsc = spawnSync(process.execPath, [TSC, ...SCRIPT_OPTIONS, "--types", "node", "--skipLibCheck", file], { encoding: "utf8" });
  return { output: tsc.stdout + tsc.stderr, status: tsc.status };
}
