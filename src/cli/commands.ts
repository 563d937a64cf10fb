/**
 * Every subcommand of `pulumi-gms`, in the order `pulumi-gms --help` lists them. A command's module loads only its
 * parsing at the top, and the rest inside `run`, so that this list stays cheap to load.
 */
import type { Command } from "./command";
import { discoverCommand } from "./discover";
import { emulatorCommand } from "./emulator";
import { migrateCommand } from "./migrate";
import { recoverCommand } from "./recover";

// biome-ignore format: one line per command, so that adding one is a line of its own
export const commands: readonly Command[] = [
  emulatorCommand,
  migrateCommand,
  discoverCommand,
  recoverCommand,
];
