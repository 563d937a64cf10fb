/**
 * The Pulumi CLI as recover runs it: in the project's folder, with the caller's environment (backend, passphrase,
 * PATH to the plugins), never interactive and without colour. Asynchronous, so that a service answering from this
 * process (the emulator, in a test) keeps answering meanwhile. What goes in (the document `stack import` reads) goes
 * on standard input, never into a file.
 */
import { spawn } from "node:child_process";

export interface PulumiCli {
  /** The `pulumi` executable (`pulumi` on PATH by default). */
  bin: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export class PulumiCommandError extends Error {
  override readonly name = "PulumiCommandError";
}

/** Runs `pulumi <args> --non-interactive --color never`; resolves with its standard output, rejects with what it said. */
export function runPulumi(cli: PulumiCli, args: string[], input?: string): Promise<string> {
  const command = `pulumi ${args.join(" ")}`;
  return new Promise((resolve, reject) => {
    const child = spawn(cli.bin, [...args, "--non-interactive", "--color", "never"], { cwd: cli.cwd, env: cli.env });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new PulumiCommandError(
          error.code === "ENOENT"
            ? `cannot run ${cli.bin}: not found (put the Pulumi CLI on PATH, or give its path with --pulumi)`
            : `cannot run ${cli.bin}: ${error.message}`,
        ),
      ),
    );
    child.once("close", (code) => {
      if (code === 0) return resolve(stdout);
      const said = (stderr.trim() || stdout.trim()).split("\n").slice(-20).join("\n");
      reject(new PulumiCommandError(`\`${command}\` failed (exit ${code}): ${said}`));
    });
    // A CLI that exits before reading its input (a failure, reported on close) closes the pipe: not an error of ours.
    child.stdin.on("error", () => undefined);
    child.stdin.end(input ?? "");
  });
}
