/**
 * A Pulumi YAML program of `gms:index:*` resources on the real CLI, through the plugin: the YAML language host
 * (`pulumi-language-yaml`, which `npm run pulumi:install` builds beside the CLI from its Go module) reads the
 * package's schema from the plugin (GetSchema) and registers the resources; `up` creates them, `preview
 * --expect-no-changes` finds nothing to do, `destroy` deletes them. The CLI and the host are required under
 * CI=true; without them the suite says why it skips.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { callOverHttp } from "../emulator/harness";
import { cliName } from "../pulumi-cli/harness";
import { type CliProject, startCliProject, yamlCliFor } from "./cli-project";

const cli = yamlCliFor("plugin/yaml.test.ts");
const TIMEOUT = 180_000;
const API_KEY = "gms_plugin_yaml_key_31c9";
const OPENAI_KEY = "sk-plugin-yaml-secret-77e0";

const PROGRAM = `name: gms-yaml
runtime: yaml
config:
  openaiKey:
    type: string
    secret: true
resources:
  support:
    type: gms:index:App
    properties:
      name: Support (YAML)
      description: Answers tickets
  triage:
    type: gms:index:Workflow
    properties:
      name: Triage
      app: \${support.id}
  openai:
    type: gms:index:ProviderConnection
    properties:
      provider: openai
      key: \${openaiKey}
      nickname: Main
outputs:
  appGuid: \${support.guid}
  workflowApp: \${triage.app}
`;

describe.skipIf(!cli)(`a Pulumi YAML program of gms:index:* resources on the real CLI: ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let project: CliProject;
  const api = (method: string, path: string) => callOverHttp({ url: emulator.url, apiKey: API_KEY }, method, path);
  const pulumi = (...args: string[]) => project.pulumi(...args);

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, db: ":memory:", workspaces: [{ name: "YAML", apiKey: API_KEY }] });
    project = startCliProject(cli!, "gms-plugin-yaml", PROGRAM);
    await project.initStack("dev", { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: API_KEY }, openaiKey: { secret: OPENAI_KEY } });
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    project?.close();
  });

  it(
    "up creates the resources, a preview finds no change, destroy deletes them; the key never shows",
    async () => {
      const up = await pulumi("up", "--yes", "--skip-preview");
      const outputs = JSON.parse(await pulumi("stack", "output", "--json")) as { appGuid: string; workflowApp: string };
      expect((await api("GET", `/apps/${outputs.appGuid}`)).body.name).toBe("Support (YAML)");
      expect(outputs.workflowApp).toBe(outputs.appGuid);
      const connections = (await api("GET", "/providers")).body as { guid: string; nickname: string }[];
      expect(connections.map((connection) => connection.nickname)).toEqual(["Main"]);
      const preview = await pulumi("preview", "--expect-no-changes");
      const exported = await pulumi("stack", "export");
      expect(exported).toContain("ciphertext");
      await pulumi("destroy", "--yes", "--skip-preview");
      expect((await api("GET", `/apps/${outputs.appGuid}`)).status).toBe(404);
      expect((await api("GET", "/providers")).body).toEqual([]);
      for (const text of [up, preview, exported]) expect(text).not.toContain(OPENAI_KEY);
    },
    TIMEOUT,
  );

  it(
    "moves the resources to another service when gms:baseUrl changes (DiffConfig replaces), and not when gms:maxRetries does",
    async () => {
      const elsewhere = await startEmulator({ port: 0, db: ":memory:", workspaces: [{ name: "YAML elsewhere", apiKey: API_KEY }] });
      const there = (method: string, path: string) => callOverHttp({ url: elsewhere.url, apiKey: API_KEY }, method, path);
      try {
        await pulumi("up", "--yes", "--skip-preview");
        const before = JSON.parse(await pulumi("stack", "output", "--json")) as { appGuid: string };
        await pulumi("config", "set", "gms:maxRetries", "2");
        await pulumi("preview", "--expect-no-changes");
        await pulumi("config", "set", "gms:baseUrl", elsewhere.url);
        const preview = await pulumi("preview", "--diff");
        expect(preview).toMatch(/\+-\s*gms:index:App: \(replace\)/);
        expect(preview).toMatch(/3 to replace/);
        await pulumi("up", "--yes", "--skip-preview");
        const after = JSON.parse(await pulumi("stack", "output", "--json")) as { appGuid: string };
        expect(after.appGuid).not.toBe(before.appGuid);
        expect((await there("GET", `/apps/${after.appGuid}`)).body.name).toBe("Support (YAML)");
        expect((await api("GET", `/apps/${before.appGuid}`)).status).toBe(404);
        expect((await api("GET", "/providers")).body).toEqual([]);
        expect(((await there("GET", "/providers")).body as unknown[]).length).toBe(1);
        await pulumi("destroy", "--yes", "--skip-preview");
        expect((await there("GET", `/apps/${after.appGuid}`)).status).toBe(404);
      } finally {
        await elsewhere.close();
      }
    },
    TIMEOUT,
  );
});
