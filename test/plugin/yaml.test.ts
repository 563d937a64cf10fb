/**
 * A Pulumi YAML program of `gms:index:*` resources on the real CLI, through the plugin: the YAML language host
 * (`pulumi-language-yaml`, which `npm run pulumi:install` builds beside the CLI from its Go module) reads the
 * package's schema from the plugin (GetSchema) and registers the resources; `up` creates them, `preview
 * --expect-no-changes` finds nothing to do, `destroy` deletes them. The CLI and the host are required under
 * CI=true; without them the suite says why it skips.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { cliEnvironment } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";

const cli = pulumiCliFor("plugin/yaml.test.ts");
const yamlHost = cli && existsSync(join(cli.dir, "pulumi-language-yaml"));
if (cli && !yamlHost) {
  const reason = `no pulumi-language-yaml beside ${cli.bin} (npm run pulumi:install builds it)`;
  if (process.env.CI === "true") throw new Error(`plugin/yaml.test.ts: the YAML language host is required under CI=true: ${reason}`);
  console.log(`plugin/yaml.test.ts: skipping the YAML program: ${reason}`);
}
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

describe.skipIf(!yamlHost)(`a Pulumi YAML program of gms:index:* resources on the real CLI: ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const api = (method: string, path: string) => callOverHttp({ url: emulator.url, apiKey: API_KEY }, method, path);
  /** Runs the CLI without blocking: the emulator answers from this process. */
  const pulumi = (...args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(cli!.bin, [...args, "--non-interactive", "--color", "never"], { cwd: join(dir, "program"), env });
      let output = "";
      for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      child.on("error", reject);
      child.on("close", (code) =>
        code === 0 ? resolve(output) : reject(new Error(`pulumi ${args.join(" ")} exited ${code}:\n${output}`)),
      );
    });

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, db: ":memory:", workspaces: [{ name: "YAML", apiKey: API_KEY }] });
    dir = mkdtempSync(join(tmpdir(), "gms-plugin-yaml-"));
    mkdirSync(join(dir, "program"));
    writeFileSync(join(dir, "program", "Pulumi.yaml"), PROGRAM);
    // The engine finds a provider plugin on PATH as pulumi-resource-<name>.
    const bin = join(dir, "plugin-bin");
    mkdirSync(bin);
    const main = join(__dirname, "..", "..", "dist", "plugin", "main.js");
    chmodSync(main, 0o755);
    symlinkSync(main, join(bin, "pulumi-resource-gms"));
    const base = { ...process.env, PATH: [bin, process.env.PATH ?? ""].join(delimiter) };
    env = cliEnvironment(cli!, { backendDir: join(dir, "state"), passphrase: "yaml-passphrase", pulumiHome: join(dir, "home") }, base);
    mkdirSync(join(dir, "state"));
    await pulumi("stack", "init", "dev");
    await pulumi("config", "set", "gms:baseUrl", emulator.url);
    await pulumi("config", "set", "--secret", "gms:apiKey", API_KEY);
    await pulumi("config", "set", "--secret", "openaiKey", OPENAI_KEY);
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
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
});
