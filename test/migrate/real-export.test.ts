/**
 * pulumi-gms migrate on a real stack export: a program of several kinds (a Pulumi parent that is a gms resource, one
 * that is a component, a protected resource, secret keys, an App in another workspace through its own
 * `connection`) is applied on the real Pulumi CLI against the emulator, exported with `pulumi stack export`, and
 * the built command (`node dist/cli/main.js migrate`) is run on the export. The import file must hold every gms
 * resource with its native type, id and parent, in an order `pulumi import` resolves; the delete script, run on
 * the real stack, must remove every dynamic gms resource and nothing else (the CLI refuses a resource that
 * another depends on, so the order is proven by the CLI itself); no output may hold a secret. Between the two,
 * `pulumi import --file` runs on the real stack, and last, the program with the native classes previews with no
 * change. An export made with `--show-secrets` is refused without showing them. Without a CLI the suite is
 * skipped, saying why.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECRET_SIG, SIG_KEY } from "../../src/provider/values";
import { PulumiCliEngine } from "../../src/testing";
import { yamlCliFor } from "../plugin/cli-project";
import { cliName } from "../pulumi-cli/harness";
import { ACME_KEY, type KindsBed, OTHER_KEY, startKindsBed } from "../pulumi-cli/kinds-fixtures";

const cli = yamlCliFor("test/migrate/real-export.test.ts");
const TIMEOUT = 300_000;
const PROVIDER_KEY = "sk-migrate-provider-key-5d7e21";
const SECRETS = [PROVIDER_KEY, ACME_KEY, OTHER_KEY];
const COMMAND = join(__dirname, "..", "..", "dist", "cli", "main.js");
const PLUGIN = join(__dirname, "..", "..", "dist", "plugin", "main.js");

interface Resource {
  urn: string;
  type: string;
  id?: string;
  parent?: string;
  protect?: boolean;
  inputs?: Record<string, any>;
  dependencies?: string[];
  propertyDependencies?: Record<string, string[]>;
}
interface Entry {
  type: string;
  name: string;
  logicalName?: string;
  id: string;
  parent?: string;
  inputs?: Record<string, any>;
  outputs?: Record<string, any>;
}

const program = (bed: KindsBed) => {
  const g = bed.guids;
  return `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";
const config = new pulumi.Config();
class Team extends pulumi.ComponentResource {
  constructor(name: string, opts?: pulumi.ComponentResourceOptions) {
    super("acme:index:Team", name, {}, opts);
    new gms.App(\`\${name}-app\`, { name: "Team app" }, { parent: this });
    this.registerOutputs({});
  }
}
const app = new gms.App("helpdesk", { name: "Helpdesk", description: "Answers tickets" }, { protect: true });
new gms.Workflow("triage", { name: "Triage", app: app.id });
new gms.Workflow("escalation", { name: "Escalation", app: app.id }, { parent: app });
const openai = new gms.ProviderConnection("openai", { provider: "openai", key: config.requireSecret("providerKey"), nickname: "OpenAI prod" });
new gms.Model("gpt-4o", { llm: "gpt-4o", provider: "openai", key: config.requireSecret("providerKey") }, { dependsOn: [openai] });
const golden = new gms.Dataset("golden", { name: "Golden", app: app.id, data: ${JSON.stringify(bed.data.slice(0, 2).map((d) => d.guid))} });
new gms.Eval("quality", {
  name: "Quality",
  action: "${g.actions["Support/Summarize"]}",
  evalTypes: [{ guid: "${g.evalTypes["Exact match"]}" }],
  dataset: golden.id,
});
new gms.Experiment("tone", {
  name: "Tone",
  app: "${g.apps.Support}",
  primaryAction: "${g.actions["Support/Summarize"]}",
  secondaryAction: "${g.actions["Support/Classify"]}",
});
new gms.Skill("web-search", { name: "web-search", type: "web" });
new gms.ContextSource("handbook", { context: "${g.contexts.Handbook}", url: "https://example.com/handbook.md", name: "Handbook page" });
new gms.App("other", { name: "Elsewhere helpdesk", connection: { baseUrl: "${bed.emulator.url}", apiKey: "${OTHER_KEY}" } });
new Team("team");
`;
};

describe.skipIf(!cli)(`pulumi-gms migrate on a real stack export: ${cliName(cli)}`, () => {
  let bed: KindsBed;
  const pulumi = (...args: string[]) =>
    spawnSync(cli!.bin, [...args, "--stack", "dev"], { cwd: bed.programDir, env: bed.engine.environment(), encoding: "utf8" });
  const migrate = (...args: string[]) =>
    spawnSync(process.execPath, [COMMAND, "migrate", ...args], { cwd: bed.programDir, encoding: "utf8" });
  const exportResources = (): Resource[] => {
    const exported = pulumi("stack", "export");
    expect(exported.status, exported.stderr).toBe(0);
    return JSON.parse(exported.stdout).deployment.resources;
  };
  /** PATH with the plugin first, for the native resources. */
  const pluginPath = () => {
    const bin = join(bed.programDir, "plugin-bin");
    if (!existsSync(bin)) {
      mkdirSync(bin);
      chmodSync(PLUGIN, 0o755);
      symlinkSync(PLUGIN, join(bin, "pulumi-resource-gms"));
    }
    return [bin, process.env.PATH].join(delimiter);
  };
  /** A CLI command of the stack with the plugin on PATH. Asynchronous: the plugin calls the emulator, which answers from this process. */
  const withPlugin = async (args: string[]) => {
    const env = { ...bed.engine.environment(), PATH: [pluginPath(), bed.engine.environment().PATH].join(delimiter) };
    const child = spawn(cli!.bin, [...args, "--non-interactive", "--stack", "dev"], { cwd: bed.programDir, env });
    let output = "";
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code, output).toBe(0);
    return output;
  };
  const noSecrets = (where: string, text: string) => {
    for (const secret of SECRETS) expect(text.includes(secret), `a secret in ${where}`).toBe(false);
  };

  beforeAll(async () => {
    bed = await startKindsBed(cli!, "migrate-real", { config: { providerKey: { secret: PROVIDER_KEY } } });
    writeFileSync(join(bed.programDir, "index.ts"), program(bed));
    const up = await bed.engine.up();
    expect(up.counts.create).toBe(12);
  }, TIMEOUT);
  afterAll(() => bed?.close());

  it(
    "refuses an export made with --show-secrets, naming where without showing them, and writes nothing",
    async () => {
      const exported = pulumi("stack", "export", "--show-secrets", "--file", "shown.json");
      expect(exported.status, exported.stderr).toBe(0);
      expect(readFileSync(join(bed.programDir, "shown.json"), "utf8")).toContain(PROVIDER_KEY);
      const run = migrate("shown.json", "--import-file", "shown-import.json", "--delete-script", "shown-delete.sh");
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/--show-secrets/);
      expect(run.stderr).toMatch(/::openai inputs\.key/);
      noSecrets("the refusal", run.stdout + run.stderr);
      expect(existsSync(join(bed.programDir, "shown-import.json"))).toBe(false);
      expect(existsSync(join(bed.programDir, "shown-delete.sh"))).toBe(false);
    },
    TIMEOUT,
  );

  it(
    "writes an import file of every gms resource (native type, id, parent, recorded inputs) and a delete script the CLI runs to the end",
    async () => {
      const exported = pulumi("stack", "export", "--file", "stack.json");
      expect(exported.status, exported.stderr).toBe(0);
      const before: Resource[] = JSON.parse(readFileSync(join(bed.programDir, "stack.json"), "utf8")).deployment.resources;
      const dynamic = before.filter((resource) => resource.type.startsWith("pulumi-nodejs:dynamic/gms:"));
      expect(dynamic).toHaveLength(12);

      const run = migrate("stack.json", "--import-file", "import.json", "--delete-script", "delete.sh", "--stack", "dev");
      expect(run.status, run.stderr).toBe(0);
      const importText = readFileSync(join(bed.programDir, "import.json"), "utf8");
      const scriptText = readFileSync(join(bed.programDir, "delete.sh"), "utf8");
      for (const [where, text] of Object.entries({ importText, scriptText, stdout: run.stdout, stderr: run.stderr }))
        noSecrets(where, text);
      expect(importText).not.toContain("__provider");

      // One entry per dynamic gms resource: the native type, the logical name, the import id.
      const file = JSON.parse(importText) as { nameTable?: Record<string, string>; resources: Entry[] };
      expect(file.resources).toHaveLength(dynamic.length);
      const byName = (name: string) => dynamic.find((resource) => resource.urn.endsWith(`::${name}`))!;
      for (const entry of file.resources) {
        const resource = byName(entry.logicalName ?? entry.name);
        expect(entry.type).toBe(resource.type.replace("pulumi-nodejs:dynamic/gms:", "gms:index:"));
        expect(entry.id).toBe(resource.id);
        expect(entry.id).toMatch(/^[0-9a-f-]{36}$/);
      }
      const entry = (name: string) => file.resources.find((candidate) => candidate.name === name)!;
      // Parents: a gms parent is the entry itself, a component goes through the name table, the root stack is left out.
      expect(entry("escalation").parent).toBe("helpdesk");
      const team = before.find((resource) => resource.type === "acme:index:Team")!;
      expect(file.nameTable).toEqual({ [entry("team-app").parent!]: team.urn });
      expect(entry("helpdesk").parent).toBeUndefined();
      // Recorded inputs ride along, secrets as the stack's ciphertext; only the App with its own connection carries outputs.
      expect(entry("openai").inputs).toMatchObject({
        provider: "openai",
        nickname: "OpenAI prod",
        key: { [SIG_KEY]: SECRET_SIG, ciphertext: expect.any(String) },
      });
      expect(entry("gpt-4o").inputs?.key.ciphertext).toEqual(expect.any(String));
      expect(entry("other").inputs?.connection.ciphertext).toEqual(expect.any(String));
      expect(entry("other").outputs).toMatchObject({ name: "Elsewhere helpdesk", guid: byName("other").id });
      expect(file.resources.filter((candidate) => candidate.outputs).map((candidate) => candidate.name)).toEqual(["other"]);
      // Every entry comes after its parent and after the gms resources it depends on.
      const position = new Map(file.resources.map((candidate, index) => [byName(candidate.logicalName ?? candidate.name).urn, index]));
      for (const resource of dynamic) {
        const after = [resource.parent, ...(resource.dependencies ?? []), ...Object.values(resource.propertyDependencies ?? {}).flat()];
        for (const urn of after) if (urn && position.has(urn)) expect(position.get(urn)!).toBeLessThan(position.get(resource.urn)!);
      }
      expect(position.get(byName("golden").urn)!).toBeLessThan(position.get(byName("quality").urn)!);
      // The summary names each native URN: the dynamic URN with the native type.
      for (const resource of dynamic) expect(run.stdout).toContain(resource.urn.replaceAll("pulumi-nodejs:dynamic/gms:", "gms:index:"));

      // The delete script: one line per dynamic URN, dependents first, the protected App with --force.
      const lines = scriptText.split("\n").filter((line) => line.startsWith("pulumi state delete"));
      expect(lines).toHaveLength(dynamic.length);
      expect(lines.find((line) => line.includes("::helpdesk'"))).toMatch(/--yes --force --stack 'dev'$/);
      const scriptOrder = lines.map((line) => line.slice(line.indexOf("'") + 1, line.indexOf("'", line.indexOf("'") + 1)));
      expect(new Set(scriptOrder)).toEqual(new Set(dynamic.map((resource) => resource.urn)));
      expect(scriptOrder.indexOf(byName("quality").urn)).toBeLessThan(scriptOrder.indexOf(byName("golden").urn));
      expect(scriptOrder.indexOf(byName("escalation").urn)).toBeLessThan(scriptOrder.indexOf(byName("helpdesk").urn));

      // `pulumi import --file` on the real stack, through the plugin: each dynamic resource gets its native twin,
      // under the same parent with the same id, and the write-only keys ride along from the file, still secret.
      // `pulumi import` loads the project's language host even when it writes no code, and the CLI built here has
      // none for Node.js (its module is not served): for this one command the project names the YAML runtime,
      // which runs nothing, since an import does not run the program.
      const projectFile = join(bed.programDir, "Pulumi.yaml");
      const project = readFileSync(projectFile, "utf8");
      expect(project).toMatch(/^runtime: nodejs$/m);
      writeFileSync(projectFile, project.replace(/^runtime: nodejs$/m, "runtime: yaml"));
      const imported = await withPlugin(["import", "--file", "import.json", "--protect=false", "--generate-code=false", "--yes"]);
      writeFileSync(projectFile, project);
      expect(imported).toContain(`${dynamic.length} imported`);
      noSecrets("the import's output", imported);
      const both = exportResources();
      const nativeUrn = (urn: string) => urn.replaceAll("pulumi-nodejs:dynamic/gms:", "gms:index:");
      for (const resource of dynamic) {
        const twin = both.find((candidate) => candidate.urn === nativeUrn(resource.urn));
        expect(twin, nativeUrn(resource.urn)).toBeDefined();
        expect(twin!.id).toBe(resource.id);
        expect(twin!.parent).toBe(resource.parent && nativeUrn(resource.parent));
      }
      const nativeOpenai = both.find((candidate) => candidate.urn === nativeUrn(byName("openai").urn))!;
      expect(nativeOpenai.inputs?.key).toMatchObject({ [SIG_KEY]: SECRET_SIG, ciphertext: expect.any(String) });
      noSecrets("the stack after the import", JSON.stringify(both));

      // The delete script on the real stack: every dynamic gms resource leaves state, everything else stays.
      const script = spawnSync("sh", ["delete.sh"], { cwd: bed.programDir, env: bed.engine.environment(), encoding: "utf8" });
      expect(script.status, script.stderr).toBe(0);
      const after = exportResources();
      expect(after.filter((resource) => resource.type.startsWith("pulumi-nodejs:dynamic/gms:"))).toEqual([]);
      // The import added the gms default provider the native resources refer to.
      expect(after.filter((resource) => resource.type === "pulumi:providers:gms")).toHaveLength(1);
      expect(
        after
          .filter((resource) => resource.type !== "pulumi:providers:gms")
          .map((resource) => resource.urn)
          .sort(),
      ).toEqual(
        before
          .filter((resource) => !resource.type.startsWith("pulumi-nodejs:dynamic/gms:"))
          .map((resource) => nativeUrn(resource.urn))
          .concat(dynamic.map((resource) => nativeUrn(resource.urn)))
          .sort(),
      );
      // The program with the native classes in place of the dynamic ones finds nothing to do on the migrated stack.
      writeFileSync(join(bed.programDir, "index.ts"), program(bed).replaceAll("new gms.", "new gms.native."));
      const printed: string[] = [];
      const env = { ...bed.engine.options.env, PATH: pluginPath() };
      const preview = await new PulumiCliEngine({ ...bed.engine.options, env, log: (line) => printed.push(line) }).preview();
      expect(preview.steps.filter((step) => step.op !== "same")).toEqual([]);
      expect(preview.steps.filter((step) => step.type.startsWith("gms:index:"))).toHaveLength(12);
      noSecrets("the preview", printed.join("\n"));

      // Nothing was deleted at the service: state only.
      expect((await bed.api("GET", `/apps/${byName("helpdesk").id}`)).status).toBe(200);
      expect((await bed.api("GET", `/workflows/${byName("escalation").id}`)).status).toBe(200);
    },
    TIMEOUT,
  );
});
