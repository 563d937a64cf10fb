/** Runs `pulumi-gms discover` in-process, as the dispatcher does, and keeps what it printed. */
import { discoverCommand } from "../../src/cli/discover";
import { type CommandRun, runInProcess } from "../cli/in-process";

export type DiscoverRun = CommandRun;

export const runDiscover = (argv: string[], options: { env: NodeJS.ProcessEnv; cwd: string }): Promise<DiscoverRun> =>
  runInProcess(discoverCommand, argv, options);
