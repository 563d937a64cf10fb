#!/usr/bin/env node
/**
 * pulumi-gms, the package's command-line tool: `pulumi-gms <command> [options]` over the commands of ./commands.ts.
 * Every command runs here under the contract of ./command.ts: its `--help` is answered from its usage, a UsageError
 * it throws becomes exit 2 with the usage, anything else it throws exit 1. The name of before `gms-emulator`
 * (src/emulator/cli.ts) runs its command through runAlias.
 */
import { readFileSync } from "node:fs";
import { packageManifest } from "../manifest";
import { nodeRefusal, nodeTooOld } from "../node-version";
import { nearestKey } from "../workspace/suggest";
import { type Command, type CommandIo, EXIT, UsageError } from "./command";
import { commands } from "./commands";

/** What `pulumi-gms --help` prints: how to call it and one line per command. */
export function toolUsage(): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    "usage: pulumi-gms <command> [options]     run a command",
    "       pulumi-gms <command> --help        the command's options",
    "       pulumi-gms --version               the package's version",
    "",
    "Commands:",
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    "",
    "Exit codes: 0 done, 1 failed, 2 a usage error. --json, where a command has a result, prints it as JSON on",
    "standard output and everything else on standard error. Secrets (API keys) are read from the environment or",
    "a file, never from a flag, and never printed.",
  ].join("\n");
}

/** Runs `pulumi-gms` with these arguments; returns the exit code. */
export async function runCli(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--help" || name === "-h") {
    io.out(`${toolUsage()}\n`);
    return EXIT.done;
  }
  if (name === "--version") {
    io.out(`${packageManifest.version}\n`);
    return EXIT.done;
  }
  if (name === undefined) {
    io.err(`${toolUsage()}\n`);
    return EXIT.usage;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (command) return runCommand(command, rest, io);
  const known = commands.map((candidate) => candidate.name);
  const nearest = nearestKey(name, known);
  io.err(
    `pulumi-gms: unknown ${name.startsWith("-") ? "option" : "command"} "${name}"${nearest ? `; did you mean "${nearest}"?` : "."}` +
      ` The commands: ${known.join(", ")} (pulumi-gms --help says what each does)\n`,
  );
  return EXIT.usage;
}

/**
 * Runs one command under the contract: `--help` (or `-h`) anywhere before a `--` prints its usage; a UsageError
 * prints its message and the usage's synopsis (its first paragraph) and exits 2; any other error, its message, exit 1.
 */
export async function runCommand(command: Command, argv: string[], io: CommandIo): Promise<number> {
  const end = argv.indexOf("--");
  const options = end === -1 ? argv : argv.slice(0, end);
  if (options.includes("--help") || options.includes("-h")) {
    io.out(`${command.usage}\n`);
    return EXIT.done;
  }
  try {
    return await command.run(argv, io);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (!(error instanceof UsageError)) {
      io.err(`pulumi-gms ${command.name}: ${message}\n`);
      return EXIT.failed;
    }
    const synopsis = command.usage.split("\n\n")[0];
    io.err(`pulumi-gms ${command.name}: ${message}\n${synopsis}\n(pulumi-gms ${command.name} --help lists every option)\n`);
    return EXIT.usage;
  }
}

/** The process's own streams, environment and folder. */
export function processIo(): CommandIo {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    readStdin: () => readFileSync(0, "utf8"),
  };
}

/**
 * Ends the process with `code` once standard output and error have taken what was written. Not left to the event
 * loop: a finished command may leave a handle open (the emulator's delayed `late` faults, a Context Source fetch)
 * that would keep the process alive.
 */
export function exitWhenFlushed(code: number): void {
  process.exitCode = code;
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
}

/**
 * A process entry's work, on the process's streams, ending the process with its exit code. A Node.js older than the
 * package needs is refused first, in one line, exit 1: every command needs it (node:sqlite, undici), and `--help`
 * answering there would tell the user the tool works.
 */
function runProcess(work: (io: CommandIo) => Promise<number>): void {
  const io = processIo();
  if (nodeTooOld()) {
    io.err(`${nodeRefusal("pulumi-gms")}\n`);
    exitWhenFlushed(EXIT.failed);
    return;
  }
  void work(io).then(exitWhenFlushed);
}

/** The entry of a name a command had before `pulumi-gms` (a `bin` of its own): the command, and nothing printed besides. */
export function runAlias(command: Command): void {
  runProcess((io) => runCommand(command, process.argv.slice(2), io));
}

// Only as a command: loading the module (as an alias's entry and the module-loading test do) starts nothing.
if (require.main === module) runProcess((io) => runCli(process.argv.slice(2), io));
