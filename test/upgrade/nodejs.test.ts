/**
 * The recorded Node.js stacks (examples/quickstart as a release ran it, on its dynamic resources and on its native
 * classes with the plugin, recorded by `npm run upgrade:record` in test/upgrade/<version>/) upgraded to the code under
 * test on the real CLI through the Automation API: the package of this checkout, installed in the program as a copy,
 * serves the `require("pulumi-gms/dist/shims/<kind>.js")` each dynamic resource's state names, and the plugin of this
 * checkout the native ones. A preview and a refresh find no change, a resource taken out of the program is deleted by
 * the provider its state names (dynamic), an edit updates in place, destroy deletes what the stack holds (harness.ts).
 * The CLI is required under CI=true; without it the suite says why it skips.
 */
import { describe, expect, it } from "vitest";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { CORPUS_STACKS, itUpgradesEach } from "./harness";

const cli = pulumiCliFor("upgrade/nodejs.test.ts");
const STACKS = CORPUS_STACKS.filter((stack) => stack.recorded.form !== "yaml");

describe.skipIf(!cli)(`stacks of earlier releases' Node.js programs, upgraded on the real CLI: ${cliName(cli)}`, () => {
  it("has the quickstart of 0.2.0 on the dynamic resources and on the native classes", () => {
    expect(STACKS.filter((stack) => stack.version === "0.2.0").map((stack) => stack.recorded.name)).toEqual(
      expect.arrayContaining(["dynamic-quickstart", "native-quickstart"]),
    );
  });

  itUpgradesEach(cli!, STACKS, "previews and refreshes with no change, deletes a removed resource, updates an edit in place, destroys it");
});
