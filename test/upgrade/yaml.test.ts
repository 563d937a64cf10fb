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
import { CORPUS_STACKS, itUpgradesEach } from "./harness";

const cli = yamlCliFor("upgrade/yaml.test.ts");
const STACKS = CORPUS_STACKS.filter((stack) => stack.recorded.form === "yaml");

describe.skipIf(!cli)(`stacks of earlier releases' Pulumi YAML programs, upgraded on the real CLI: ${cliName(cli)}`, () => {
  it("has the corpus of 0.2.0, the first release with the plugin: a stack of each of its nine example programs", () => {
    expect(recordedVersions()).toContain("0.2.0");
    expect(STACKS.filter((stack) => stack.version === "0.2.0").map((stack) => stack.recorded.name)).toEqual(
      [
        "app-workflow",
        "golden-dataset",
        "handbook-source",
        "openai-model",
        "reply-eval",
        "reply-experiment",
        "support-assistant",
        "tone-fine-tune",
        "web-search-skill",
      ].map((example) => `yaml-${example}`),
    );
  });

  itUpgradesEach(cli!, STACKS, "previews and refreshes with no change, updates an edit in place, destroys only its objects");
});
