/**
 * The scenario (scenario.ts) as a Python program run through the Automation API (`pulumi.automation` with
 * `program=`): the generated SDK's wheel (release/python) and the `pulumi` package from PyPI, pinned, in a virtual
 * environment of the suite's own. The program serves its language runtime from its own process, so no language host
 * is needed; the CLI and the plugin from the release's tarball get a PATH of the CLI's folder and the environment's
 * `bin`, with no Node.js on it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { automationProgram, describeScenario, pythonWithWheel, STACK, withPath } from "./scenario";

const LANGUAGE = "Python";

/** `python driver.py <up|preview|destroy> <stage> [legacy GUID]`: stage values from stages.json, keys from the environment. */
const DRIVER = `import json
import os
import sys

import pulumi
import pulumi_gms as gms
from pulumi import automation as auto

here = os.path.dirname(os.path.abspath(__file__))
operation, stage = sys.argv[1], sys.argv[2]
legacy_guid = sys.argv[3] if len(sys.argv) > 3 else None
with open(os.path.join(here, "stages.json")) as stages:
    values = json.load(stages)[stage]


def program():
    key = pulumi.Config().require_secret("openaiKey")
    support = gms.App("support", **values["app"])
    openai = gms.ProviderConnection("openai", key=key, **values["connection"])
    gpt = gms.Model("gpt", provider=openai.guid, key=key, **values["model"])
    triage = gms.Workflow("triage", app=support.id, **values["workflow"])
    pulumi.export("appGuid", support.guid)
    pulumi.export("connectionGuid", openai.guid)
    pulumi.export("modelGuid", gpt.guid)
    pulumi.export("modelLink", gpt.provider_guid)
    pulumi.export("workflowGuid", triage.guid)
    pulumi.export("workflowApp", triage.app)
    if legacy_guid:
        legacy = gms.App("legacy", opts=pulumi.ResourceOptions(import_=legacy_guid), **values["legacy"])
        pulumi.export("legacyGuid", legacy.guid)


command = auto.PulumiCommand(root=os.environ["PULUMI_CLI_ROOT"], skip_version_check=True)
stack = auto.create_or_select_stack(
    stack_name="${STACK}",
    project_name="gms-release-python",
    program=program,
    opts=auto.LocalWorkspaceOptions(work_dir=here, pulumi_command=command, secrets_provider="passphrase"),
)
stack.set_config("gms:baseUrl", auto.ConfigValue(os.environ["GMS_URL"]))
stack.set_config("gms:apiKey", auto.ConfigValue(os.environ["GMS_KEY"], secret=True))
stack.set_config("openaiKey", auto.ConfigValue(os.environ["OPENAI_KEY"], secret=True))
if operation == "up":
    result = stack.up(on_output=print)
    print("outputs " + json.dumps({name: output.value for name, output in result.outputs.items()}))
elif operation == "preview":
    stack.preview(on_output=print, expect_no_changes=True)
else:
    stack.destroy(on_output=print)
`;

describeScenario(LANGUAGE, "release/python.test.ts", async (bed) => {
  const made = await pythonWithWheel(bed.dir, bed.release);
  if (typeof made === "string" || "toolchainAbsent" in made) return made;
  const { venv } = made;
  writeFileSync(join(bed.dir, "driver.py"), DRIVER);
  return automationProgram(bed, LANGUAGE, [join(venv, "bin", "python"), join(bed.dir, "driver.py")], withPath(bed.env, join(venv, "bin")));
});
