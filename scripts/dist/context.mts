import { spawn } from "node:child_process";

/** What each part of `npm run dist` (scripts/dist.mts) is given. */
export interface DistContext {
  /** The package's root folder. */
  root: string;
  /** `release/` under it, made before the part runs. */
  release: string;
  /** The package's version (package.json), which the plugin and the SDKs carry. */
  version: string;
  /** Prints a progress line. */
  progress(line: string): void;
}

/** A failure of a step that says what is missing and how to get it (printed without a stack). */
export class DistError extends Error {
  override readonly name = "DistError";
}

/** Runs a command to its end and resolves with its standard output; a failure says which step and shows the output. */
export function runStep(command: string, args: string[], cwd: string, what: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      output += chunk;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk;
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      reject(
        new DistError(
          error.code === "ENOENT"
            ? `${what}: ${command} is not installed or not on PATH. ${MISSING[command] ?? ""}`.trim()
            : `${what}: ${error.message}`,
        ),
      );
    });
    child.on("close", (code, signal) => {
      if (code === 0) resolve(stdout);
      else reject(new DistError(`${what} failed (${signal ?? `exit ${code}`}): ${command} ${args.join(" ")}\n${output.trim()}`));
    });
  });
}

const MISSING: Record<string, string> = {
  go: "The SDKs and the program converter are Go programs built from the Go module proxy: install Go (the version scripts/pulumi-cli/go.mod names, or later).",
  python3: "The Python SDK's wheel is built with python3 -m pip: install Python 3 with pip.",
};
