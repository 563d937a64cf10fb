/** Runs `pulumi-gms discover` in-process, as the dispatcher does, and keeps what it printed. */
import { discoverCommand } from "../../src/cli/discover";
import type { CommandIo } from "../../src/cli/command";

export interface DiscoverRun {
  code: number;
  out: string;
  err: string;
}

export async function runDiscover(argv: string[], options: { env: NodeJS.ProcessEnv; cwd: string }): Promise<DiscoverRun> {
  let out = "";
  let err = "";
  const io: CommandIo = {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
    env: options.env,
    cwd: options.cwd,
    readStdin: () => "",
  };
  const code = await discoverCommand.run(argv, io);
  return { code, out, err };
}
