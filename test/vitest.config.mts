import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Kept under test/ so that the top level holds only what the project's user asked for.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    reporters: ["default", "./test/summary-reporter.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Most files spend their time waiting on child processes (programs, provider hosts, the CLI) and sockets, so more
    // files than cores run at once keep the cores busy: vitest's default (cores - 1) runs one file at a time on 2 cores.
    maxWorkers: Math.max(3, availableParallelism()),
  },
});
