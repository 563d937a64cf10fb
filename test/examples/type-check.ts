/** Type-checks a script of the examples as a user's editor would: strict, nodenext, importing the package by its name. */
import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(__dirname, "..", "..");
const TSC = join(__dirname, "..", "..", "node_modules", "typescript", "bin", "tsc");

const SCRIPT_OPTIONS = ["--noEmit", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2023", "--strict"];

/** What tsc printed about `file` (empty when it type-checks) and its exit status. */
export function typeCheckScript(file: string): { output: string; status: number | null } {
  const tsc = spawnSync(process.execPath, [TSC, ...SCRIPT_OPTIONS, "--types", "node", "--skipLibCheck", file], { encoding: "utf8" });
  return { output: tsc.stdout + tsc.stderr, status: tsc.status };
}

/**
 * Type-checks an example program with its own tsconfig.json against the package installed in it, with
 * @types/node in its node_modules as `npm install` of its devDependencies would put it there.
 */
export function typeCheckProgram(programDir: string): { output: string; status: number | null } {
  mkdirSync(join(programDir, "node_modules", "@types"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules", "@types", "node"), join(programDir, "node_modules", "@types", "node"), "dir");
  const tsc = spawnSync(process.execPath, [TSC, "-p", join(programDir, "tsconfig.json")], { encoding: "utf8" });
  return { output: tsc.stdout + tsc.stderr, status: tsc.status };
}

/**
 * Type-checks the files of `dir` that `include` matches (a folder where the package is installed), strict, as ES modules
 * of a project with `"type": "module"`, with a tsconfig.json written for it.
 */
export function typeCheckStrict(dir: string, include: string[]): { output: string; status: number | null } {
  const compilerOptions = { strict: true, noEmit: true, module: "nodenext", target: "es2023", skipLibCheck: true, types: ["node"] };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, include }));
  return typeCheckProgram(dir);
}
