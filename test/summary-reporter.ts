/**
 * Ends a test run with one plain line, `Tests: N passed, N failed, N skipped`, that any CI reads the same
 * way whatever the runner: the log's last line. What the tests left in the run's temporary folder is named just before.
 */
import type { Reporter, TestModule } from "vitest/node";
import { leftInTemp } from "./global-setup";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      const failedBefore = counts.failed;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") counts.passed++;
        else if (state === "failed") counts.failed++;
        else counts.skipped++;
      }
      // A file that failed with no failed test (it did not load, or a hook failed and its tests were skipped)
      // counts as one failure.
      if (module.state() === "failed" && counts.failed === failedBefore) counts.failed++;
    }
    const left = leftInTemp();
    if (left) process.stdout.write(`\n${left}\n`);
    process.stdout.write(`\nTests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
