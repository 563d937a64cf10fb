/**
 * `pulumi import` on the real CLI, through the plugin, for each of the ten kinds. A first stack makes one object
 * of each kind and is then removed with `stack rm --force`, which leaves the objects in the service, unmanaged: what
 * a user imports. A second stack imports them one command per kind, by type token, name and ID alone, and `pulumi
 * preview --expect-no-changes` against a YAML program declaring the same values finds nothing to do (write-only
 * keys included). A third stack imports them all from one bulk import file, previews without change, and `destroy`
 * deletes every object. No command's output and no stack export shows a key. The project is Pulumi YAML (the
 * language host `npm run pulumi:install` builds); the CLI and the host are required under CI=true.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { KIND_NAMES } from "../../src/resources";
import { cliName } from "../pulumi-cli/harness";
import { ACME_KEY, type FixtureLookups, fixtureLookups, KINDS_FIXTURES } from "../pulumi-cli/kinds-fixtures";
import { type CliProject, startCliProject, yamlCliFor } from "./cli-project";

const cli = yamlCliFor("plugin/import.test.ts");
const TIMEOUT = 300_000;
const PROVIDER_KEY = "sk-import-provider-key-8e21f0";
const MODEL_KEY = "sk-import-model-key-4b77c3";
const SECRETS = [PROVIDER_KEY, MODEL_KEY, ACME_KEY];

/** Each kind's resource in the program: its name, its type token, and where the API shows the object. */
const RESOURCES: { name: string; kind: string; path: (guid: string, fixtures: FixtureLookups) => string }[] = [
  { name: "app", kind: "App", path: (guid) => `/apps/${guid}` },
  { name: "connection", kind: "ProviderConnection", path: (guid) => `/providers/${guid}` },
  { name: "model", kind: "Model", path: (guid) => `/models/${guid}` },
  { name: "workflow", kind: "Workflow", path: (guid) => `/workflows/${guid}` },
  { name: "dataset", kind: "Dataset", path: (guid) => `/datasets/${guid}` },
  { name: "eval", kind: "Eval", path: (guid) => `/evals/${guid}` },
  { name: "experiment", kind: "Experiment", path: (guid) => `/experiments/${guid}` },
  { name: "skill", kind: "Skill", path: (guid) => `/skills/${guid}` },
  { name: "source", kind: "ContextSource", path: (guid, { guids }) => `/contexts/${guids.contexts.Handbook}/context_sources/${guid}` },
  { name: "tune", kind: "FineTune", path: (guid) => `/finetune/${guid}` },
];

/** The YAML program: one resource of each kind, over the fixtures the public interface cannot create. */
function program(fixtures: FixtureLookups, tuneConnection: number): string {
  const { apps, actions, contexts, evalTypes } = fixtures.guids;
  const data = fixtures.data.map((record) => record.guid);
  const dataIds = fixtures.data.slice(0, 10).map((record) => record.id);
  return `name: gms-import
runtime: yaml
config:
  providerKey:
    type: string
    secret: true
  modelKey:
    type: string
    secret: true
resources:
  app:
    type: gms:index:App
    properties:
      name: Imported app
      description: Made before Pulumi knew it
  connection:
    type: gms:index:ProviderConnection
    properties:
      provider: openai
      key: \${providerKey}
      nickname: Imported OpenAI
  model:
    type: gms:index:Model
    properties:
      llm: gpt-4o
      provider: openai
      key: \${modelKey}
  workflow:
    type: gms:index:Workflow
    properties:
      name: Imported flow
      app: \${app.id}
  dataset:
    type: gms:index:Dataset
    properties:
      name: Imported set
      description: Reviewed answers
      app: ${apps.Support}
      data: ${JSON.stringify(data.slice(0, 2))}
  eval:
    type: gms:index:Eval
    properties:
      name: Imported eval
      action: ${actions["Support/Summarize"]}
      evalTypes:
        - guid: ${evalTypes["Exact match"]}
  experiment:
    type: gms:index:Experiment
    properties:
      name: Imported experiment
      app: ${apps.Support}
      primaryAction: ${actions["Support/Summarize"]}
      secondaryAction: ${actions["Support/Classify"]}
  skill:
    type: gms:index:Skill
    properties:
      name: web-search
      type: web
  source:
    type: gms:index:ContextSource
    properties:
      context: ${contexts.Handbook}
      url: https://example.com/handbook.md
      name: Handbook page
  tune:
    type: gms:index:FineTune
    properties:
      name: Imported tune
      app: ${apps.Support}
      dataset: \${dataset.id}
      dataIds: ${JSON.stringify(dataIds)}
      baseModel: gpt-4o-mini
      providerConnection: ${tuneConnection}
outputs:
${RESOURCES.map(({ name }) => `  ${name}: \${${name}.id}`).join("\n")}
`;
}

/** One YAML program of the resources blocks `pulumi import --out` wrote, one file per imported resource. */
function generatedProgram(files: string[]): string {
  const resources = Object.assign({}, ...files.map((text) => (parse(text) as { resources: Record<string, unknown> }).resources));
  return stringify({ name: "gms-import", runtime: "yaml", resources });
}

describe.skipIf(!cli)(`pulumi import of every kind through the plugin, on the real CLI: ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let fixtures: FixtureLookups;
  let project: CliProject;
  /** Every line any command printed. */
  const printed: string[] = [];
  const pulumi = async (...args: string[]) => {
    const output = await project.pulumi(...args).catch((error: Error) => {
      printed.push(error.message);
      throw error;
    });
    printed.push(output);
    return output;
  };
  const newStack = (name: string) =>
    project.initStack(name, {
      "gms:baseUrl": emulator.url,
      "gms:apiKey": { secret: ACME_KEY },
      providerKey: { secret: PROVIDER_KEY },
      modelKey: { secret: MODEL_KEY },
    });
  let ids: Record<string, string>;

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, db: ":memory:", fixtures: KINDS_FIXTURES, fineTuneSeconds: 0 });
    fixtures = await fixtureLookups(emulator);
    const made = await fixtures.api("POST", "/providers", { provider: "openai", key: "sk-tune-not-secret", name: "tune connection" });
    const tuneConnection = await fixtures.numericId("providers", made.body.guid);
    project = startCliProject(cli!, "gms-plugin-import", program(fixtures, tuneConnection));
    // The objects to import: made by a stack that is then forgotten, leaving them in the service.
    await newStack("made");
    await pulumi("up", "--yes", "--skip-preview");
    ids = JSON.parse(await pulumi("stack", "output", "--json"));
    await pulumi("stack", "rm", "made", "--force", "--yes");
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    project?.close();
  });

  it(
    "imports each kind by its ID; a preview of the program declaring the same values then shows no change",
    async () => {
      expect(RESOURCES.map(({ kind }) => kind)).toEqual([...KIND_NAMES]);
      expect(Object.keys(ids).sort()).toEqual(RESOURCES.map(({ name }) => name).sort());
      for (const { name, path } of RESOURCES) expect((await fixtures.api("GET", path(ids[name]!, fixtures))).status, name).toBe(200);
      await newStack("single");
      const generated = join(project.dir, "generated");
      mkdirSync(generated);
      for (const { name, kind } of RESOURCES) {
        const output = await pulumi(
          "import",
          `gms:index:${kind}`,
          name,
          ids[name]!,
          "--yes",
          "--protect=false",
          "--out",
          join(generated, `${name}.yaml`),
        );
        expect(output, kind).toContain("1 imported");
      }
      // The code `pulumi import` writes for the imported resources names each one with its type.
      const code = readdirSync(generated).map((file) => readFileSync(join(generated, file), "utf8"));
      for (const { kind } of RESOURCES) expect(code.join("\n"), kind).toContain(`type: gms:${kind}`);
      const preview = await pulumi("preview", "--expect-no-changes", "--diff");
      expect(preview).toMatch(/11 unchanged/);
      // That code, as it is, is the program: it declares what the service holds, so nothing changes.
      const programYaml = project.read();
      project.write(generatedProgram(code));
      const previewOfGenerated = await pulumi("preview", "--expect-no-changes", "--diff");
      expect(previewOfGenerated).toMatch(/11 unchanged/);
      project.write(programYaml);
      await pulumi("stack", "rm", "single", "--force", "--yes");
      for (const text of [...printed, ...code]) for (const secret of SECRETS) expect(text).not.toContain(secret);
    },
    TIMEOUT,
  );

  it(
    "imports every kind from one bulk import file, previews without change, and destroy deletes them all",
    async () => {
      await newStack("bulk");
      const file = join(project.dir, "import.json");
      const resources = RESOURCES.map(({ name, kind }) => ({ type: `gms:index:${kind}`, name, id: ids[name] }));
      writeFileSync(file, JSON.stringify({ resources }, null, 2));
      const imported = await pulumi("import", "--file", file, "--yes", "--protect=false", "--generate-code=false");
      expect(imported).toContain("10 imported");
      await pulumi("preview", "--expect-no-changes");
      const exported = await pulumi("stack", "export");
      expect(exported).toContain("ciphertext");
      await pulumi("destroy", "--yes", "--skip-preview");
      for (const { name, path } of RESOURCES) expect((await fixtures.api("GET", path(ids[name]!, fixtures))).status, name).toBe(404);
      for (const text of printed) for (const secret of SECRETS) expect(text).not.toContain(secret);
    },
    TIMEOUT,
  );
});
