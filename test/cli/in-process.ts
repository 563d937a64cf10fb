/** Runs a `pulumi-gms` command in-process, as the dispatcher does (src/cli/main.ts), keeping what it printed. */
import type { Command, CommandIo } from "../../src/cli/command";

export interface CommandRun {
  code: number;
  out: string;
  err: string;
}

/** `pulumi-gms <command> <argv>` in `cwd` with `env`: its exit code and each stream (`onErr` sees each piece as it comes). */
export async function runInProcess(
  command: Command,
  argv: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; onErr?: (text: string) => void },
): Promise<CommandRun> {
  let out = "";
  let err = "";
  const io: CommandIo = {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
      options.onErr?.(text);
    },
    env: options.env,
    cwd: options.cwd,
    readStdin: () => "",
  };
  const code = await command.run(argv, io);
  return { code, out, err };
}
