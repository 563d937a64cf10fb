/**
 * Every recorded Pulumi YAML stack (each example of examples/programs as a release ran it on its plugin, recorded by
 * `npm run upgrade:record` in test/upgrade/<version>/) upgraded to the code under test on the real CLI: the plugin of
 * this checkout reads the old state and the old service's objects with no change, updates the recorded edit in place,
 * and destroys what the stack holds (harness.ts, `checkUpgrade`). The CLI and its YAML language host are required
 * under CI=true; without them the suite says why it skips.
 */
import { describe, expect, it } from "vitest";
import { recordedVersions } from "../../scripts/upgrade/corpus.mts";
import { yamlCliFor } from "../plugin/cli-project";
import { cliName } from "../pulumi-cli/harness";
import { EXAMPLES } from "../examples/programs-harness";
import { CORPUS_STACKS, checkUpgrade, restoreStack } from "./harness";

const cli = yamlCliFor("upgrade/yaml.test.ts");
const STACKS = CORPUS_STACKS.filter((stack) => stack.recorded.form === "yaml");
// Seven or eight CLI runs a stack, several stacks at once: on a loaded 2-core machine each run may take a minute.
const TIMEOUT = 900_000;

describe.skipIf(!cli)(`stacks of earlier releases' Pulumi YAML programs, upgraded on the real CLI: ${cliName(cli)}`, () => {
  it("has the corpus of 0.2.0, the first release with the plugin, with every example of then", () => {
    expect(recordedVersions()).toContain("0.2.0");
    const examples = STACKS.filter((stack) => stack.version === "0.2.0").map((stack) => stack.recorded.name.replace(/^yaml-/, ""));
    // Every example of today was an example of 0.2.0, until a new one is added after it.
    expect(examples).toEqual(expect.arrayContaining(EXAMPLES.filter((name) => examples.includes(name))));
    expect(examples.length).toBeGreaterThanOrEqual(9);
  });

  it.concurrent.each(STACKS.map((stack) => [stack.label, stack] as const))(
    "%s: previews and refreshes with no change, updates an edit in place, destroys only its objects",
    async (_label, stack) => {
      const restored = await restoreStack(cli!, stack);
      try {
        await checkUpgrade(restored);
      } finally {
        await restored.close();
      }
    },
    TIMEOUT,
  );
});
