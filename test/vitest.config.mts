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
  },
});
