#!/usr/bin/env node
/**
 * gms-emulator, the name `pulumi-gms emulator` had in 0.1.0, kept as an alias so that scripts and `npx gms-emulator`
 * keep working: it runs that command (src/cli/emulator.ts) with the same arguments and prints nothing of its own.
 */
import { emulatorCommand } from "../cli/emulator";
import { runAlias } from "../cli/main";

// Only as a command: loading the module (as the module-loading test does) starts nothing.
if (require.main === module) runAlias(emulatorCommand);
