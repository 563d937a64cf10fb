/**
 * The scenario (scenario.ts) as a TypeScript program run through the Automation API, the way a GitOps pipeline runs
 * one: an inline program of the package's native classes (`gms.native.*`), in a Node.js process of its own. The CLI
 * it drives, and the plugin that CLI starts from the release's tarball, get a PATH with no Node.js on it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { installPackageCopy } from "../../src/testing";
import { automationProgram, describeScenario, STACK } from "./scenario";

const LANGUAGE = "TypeScript";

/**
 * The driver, as a user would write one: `node driver.mjs <up|preview|destroy> <stage> [legacy GUID]`. Stage values
 * come from stages.json (written by the test from `stageValues`), the keys from the environment. It prints what the
 * CLI prints, and for `up` a last line `outputs <JSON>`.
 */
const DRIVER = `import * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation/index.js";
import * as gms from "pulumi-gms";
import { readFileSync } from "node:fs";

const [operation, stageText, legacyGuid] = process.argv.slice(2);
const values = JSON.parse(readFileSync(new URL("stages.json", import.meta.url), "utf8"))[stageText];

async function program() {
  const key = new pulumi.Config().requireSecret("openaiKey");
  const support = new gms.native.App("support", values.app);
  const openai = new gms.native.ProviderConnection("openai", { ...values.connection, key });
  const gpt = new gms.native.Model("gpt", { ...values.model, provider: openai.guid, key });
  const triage = new gms.native.Workflow("triage", { ...values.workflow, app: support.id });
  const legacy = legacyGuid ? new gms.native.App("legacy", values.legacy, { import: legacyGuid }) : undefined;
  return {
    appGuid: support.guid,
    connectionGuid: openai.guid,
    modelGuid: gpt.guid,
    modelLink: gpt.providerGuid,
    workflowGuid: triage.guid,
    workflowApp: triage.app,
    ...(legacy ? { legacyGuid: legacy.guid } : {}),
  };
}

const pulumiCommand = await PulumiCommand.get({ root: process.env.PULUMI_CLI_ROOT, skipVersionCheck: true });
const stack = await LocalWorkspace.createOrSelectStack(
  { stackName: "${STACK}", projectName: "gms-release-typescript", program },
  { workDir: new URL(".", import.meta.url).pathname, pulumiCommand, secretsProvider: "passphrase" },
);
await stack.setConfig("gms:baseUrl", { value: process.env.GMS_URL });
await stack.setConfig("gms:apiKey", { value: process.env.GMS_KEY, secret: true });
await stack.setConfig("openaiKey", { value: process.env.OPENAI_KEY, secret: true });
const onOutput = (text) => process.stdout.write(text);
if (operation === "up") {
  const { outputs } = await stack.up({ onOutput });
  console.log(\`outputs \${JSON.stringify(Object.fromEntries(Object.entries(outputs).map(([name, { value }]) => [name, value])))}\`);
} else if (operation === "preview") await stack.preview({ onOutput, expectNoChanges: true });
else await stack.destroy({ onOutput });
`;

describeScenario(LANGUAGE, "release/typescript.test.ts", async (bed) => {
  const dir = bed.dir;
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "gms-release-typescript", private: true, type: "module" }));
  installPackageCopy(dir);
  writeFileSync(join(dir, "driver.mjs"), DRIVER);
  // Node.js runs the driver by its path; nothing it starts finds node on PATH.
  return automationProgram(bed, LANGUAGE, [process.execPath, join(dir, "driver.mjs")]);
});
