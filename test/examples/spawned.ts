/** A command run to its end for what it printed and its exit code, whatever that is: the page drivers' tests share it. */
import { spawn } from "node:child_process";

export interface Run {
  code: number | null;
  /** Standard output and error, as they came. */
  printed: string;
}

/** `command` in `cwd`, not synchronously: an emulator the test runs answers from this process. */
export function spawned(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let printed = "";
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (printed += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, printed }));
  });
}
