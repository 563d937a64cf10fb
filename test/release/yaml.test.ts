/**
 * The scenario (scenario.ts) as a Pulumi YAML program (`runtime: yaml`): the CLI and its YAML language host, and no
 * Node.js on PATH. A YAML program has no SDK to send the plugin's version and download URL, so one of its resources
 * names both in its options (as docs/installation-configuration.md shows), and the engine downloads the plugin from
 * there. The App made outside the stack is brought in with `pulumi import`, and the program then declares it with
 * the code that command wrote.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { packageManifest, pluginDownloadURL } from "../../src/manifest";
import { API_KEY, describeScenario, OPENAI_KEY, run, STACK, type Stage, stageValues } from "./scenario";

const LANGUAGE = "YAML";

/** The options that make the engine fetch the plugin. */
const PLUGIN_OPTIONS = { version: packageManifest.version, pluginDownloadURL };

/** The program of a stage; `legacy` is the imported App's resource as `pulumi import` wrote it. */
function program(stage: Stage, legacy?: unknown): string {
  const values = stageValues(LANGUAGE, stage);
  return stringify({
    name: "gms-release-yaml",
    runtime: "yaml",
    config: { openaiKey: { type: "string", secret: true } },
    resources: {
      support: { type: "gms:index:App", properties: values.app, options: PLUGIN_OPTIONS },
      openai: { type: "gms:index:ProviderConnection", properties: { ...values.connection, key: "${openaiKey}" } },
      gpt: { type: "gms:index:Model", properties: { ...values.model, provider: "${openai.guid}", key: "${openaiKey}" } },
      triage: { type: "gms:index:Workflow", properties: { ...values.workflow, app: "${support.id}" } },
      ...(legacy ? { legacy } : {}),
    },
    outputs: {
      appGuid: "${support.guid}",
      connectionGuid: "${openai.guid}",
      modelGuid: "${gpt.guid}",
      modelLink: "${gpt.providerGuid}",
      workflowGuid: "${triage.guid}",
      workflowApp: "${triage.app}",
      ...(legacy ? { legacyGuid: "${legacy.guid}" } : {}),
    },
  });
}

describeScenario(LANGUAGE, "release/yaml.test.ts", async (bed) => {
  if (!existsSync(join(bed.cli.dir, "pulumi-language-yaml")))
    return `no pulumi-language-yaml beside ${bed.cli.bin} (npm run pulumi:install builds it)`;
  const dir = join(bed.dir, "program");
  mkdirSync(dir);
  const pulumi = (...args: string[]) => run(bed.cli.bin, [...args, "--non-interactive", "--color", "never"], { cwd: dir, env: bed.env });
  writeFileSync(join(dir, "Pulumi.yaml"), program(1));
  await pulumi("stack", "init", STACK);
  await pulumi("config", "set", "gms:baseUrl", bed.baseUrl);
  await pulumi("config", "set", "--secret", "gms:apiKey", API_KEY);
  await pulumi("config", "set", "--secret", "openaiKey", OPENAI_KEY);
  let legacy: unknown;
  return {
    dir,
    async run(operation, stage, legacyGuid) {
      let printed = "";
      if (legacyGuid && !legacy) {
        const generated = join(bed.dir, "legacy.yaml");
        printed += await pulumi("import", "gms:index:App", "legacy", legacyGuid, "--yes", "--protect=false", "--out", generated);
        legacy = (parse(readFileSync(generated, "utf8")) as { resources: { legacy: unknown } }).resources.legacy;
      }
      writeFileSync(join(dir, "Pulumi.yaml"), program(stage, legacy));
      const command =
        operation === "up"
          ? ["up", "--yes", "--skip-preview"]
          : operation === "preview"
            ? ["preview", "--expect-no-changes", "--diff"]
            : ["destroy", "--yes", "--skip-preview"];
      return printed + (await pulumi(...command));
    },
    async outputs() {
      return JSON.parse(await pulumi("stack", "output", "--json"));
    },
  };
});
