/** Running a command to its end in a test: its exit code and everything it printed, stdout and stderr as they came. */
import { spawn } from "node:child_process";

/** Runs `command` in `cwd` to its end; resolves with its exit code and its output, rejects only when it cannot start. */
export function runToEnd(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}
