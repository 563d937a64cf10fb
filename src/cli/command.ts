/**
 * What every subcommand of `pulumi-gms` is (src/cli/main.ts dispatches to them): its name, its help, and a run that
 * returns the exit code. One contract for all of them:
 * - exit 0 when done, 1 when it failed, 2 for a usage error (a bad flag or argument, named in the message);
 * - `--help` prints the usage and exits 0;
 * - `--json` (where a command has a result) prints one JSON document on stdout and nothing else there; progress and
 *   human lines go to stderr;
 * - a secret is read from the environment or a file, never from a flag, and never printed.
 */
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";

export interface CommandIo {
  /** Standard output: the result (JSON under `--json`). */
  out(text: string): void;
  /** Standard error: progress lines, warnings and failures. */
  err(text: string): void;
  /** The environment the command reads its settings and secrets from. */
  env: NodeJS.ProcessEnv;
  /** The folder relative paths are resolved against. */
  cwd: string;
  /** All of standard input (for a command that reads `-`). */
  readStdin(): string;
}

export interface Command {
  /** The subcommand: `pulumi-gms <name>`. */
  name: string;
  /** One line for `pulumi-gms --help`. */
  summary: string;
  /** The whole `--help` text. */
  usage: string;
  run(argv: string[], io: CommandIo): Promise<number>;
}

export const EXIT = { done: 0, failed: 1, usage: 2 } as const;

/** A bad flag or argument: exit 2, its message and the command's usage on stderr. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** `argv` read by `options` (node:util's parseArgs, arguments allowed): an unknown or malformed flag is a UsageError. */
export function parseFlags<const O extends ParseArgsOptionsConfig>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * A command's run by the contract above, when called directly too: `read` turns its flags into settings (a
 * UsageError exits 2, with the usage), `--help` (`read` answers "help") prints the usage, and `body` runs with them.
 */
export async function runWith<S>(
  command: Pick<Command, "name" | "usage">,
  io: CommandIo,
  read: () => S | "help" | Promise<S | "help">,
  body: (settings: S) => Promise<number>,
): Promise<number> {
  let settings: S | "help";
  try {
    settings = await read();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`pulumi-gms ${command.name}: ${error.message}\n${command.usage}\n`);
    return EXIT.usage;
  }
  if (settings === "help") {
    io.out(`${command.usage}\n`);
    return EXIT.done;
  }
  return body(settings);
}
