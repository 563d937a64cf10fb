/**
 * A Python Pulumi program of `gms:index:*` resources on the real CLI, through the plugin and the Python SDK that
 * `pulumi package gen-sdk schema.json --language python` generates: the Python language host
 * (`pulumi-language-python`, which `npm run pulumi:install` builds beside the CLI from the source vendored in
 * scripts/pulumi-language-python, with `pulumi-language-python-exec` beside it) generates `pulumi_gms`, a venv gets
 * the `pulumi` package from PyPI and the generated SDK, and the program declares an App, a Workflow on it, a
 * ProviderConnection with a secret key, and an explicit `pulumi_gms.Provider` for a second workspace owning a
 * second App. `up` creates them, `preview --expect-no-changes` finds nothing to do, `destroy` deletes them; no key
 * shows in the CLI's output or the exported state. The CLI and the host are required under CI=true; without them,
 * without python3 or when pip cannot install the packages, the suite says why it skips.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { callOverHttp } from "../emulator/harness";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { type CliProject, startCliProject } from "./cli-project";

const FILE = "plugin/python.test.ts";
const ROOT = join(__dirname, "..", "..");
const found = pulumiCliFor(FILE);
const hostMissing = found && ["pulumi-language-python", "pulumi-language-python-exec"].filter((name) => !existsSync(join(found.dir, name)));
if (found && hostMissing && hostMissing.length > 0) {
  const reason = `no ${hostMissing.join(" or ")} beside ${found.bin} (npm run pulumi:install builds them)`;
  if (process.env.CI === "true") throw new Error(`${FILE}: the Python language host is required under CI=true: ${reason}`);
  console.log(`${FILE}: skipping the Python program: ${reason}`);
}
const python = spawnSync("python3", ["--version"], { encoding: "utf8" });
if (found && python.status !== 0) console.log(`${FILE}: skipping the Python program: python3 does not run (${python.error?.message})`);
const cli = found && hostMissing?.length === 0 && python.status === 0 ? found : undefined;

const TIMEOUT = 300_000;
const API_KEY = "gms_plugin_python_key_5b21";
const SECOND_KEY = "gms_plugin_python_second_key_c04e";
const OPENAI_KEY = "sk-plugin-python-secret-9d3a";

const PROGRAM = `import pulumi
import pulumi_gms as gms

config = pulumi.Config()
support = gms.App("support", name="Support (Python)", description="Answers tickets")
triage = gms.Workflow("triage", name="Triage", app=support.id)
openai = gms.ProviderConnection("openai", provider="openai", key=config.require_secret("openaiKey"), nickname="Main")
second = gms.Provider("second", base_url=config.require("secondUrl"), api_key=config.require_secret("secondKey"))
billing = gms.App("billing", name="Billing (second workspace)", opts=pulumi.ResourceOptions(provider=second))

pulumi.export("appGuid", support.guid)
pulumi.export("workflowApp", triage.app)
pulumi.export("billingGuid", billing.guid)
# The package's functions, served by the plugin (Invoke): an object result, and a list (one property, unwrapped).
pulumi.export("workspaceName", gms.get_workspace().name)
pulumi.export("usage", gms.get_usage())
`;

describe.skipIf(!cli)(`a Python program of gms:index:* resources on the real CLI: ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let project: CliProject;
  /** Why the suite skips its test (pip could not install the packages), when it does. */
  let unavailable: string | undefined;
  const api = (key: string, method: string, path: string) => callOverHttp({ url: emulator.url, apiKey: key }, method, path);
  const pulumi = (...args: string[]) => project.pulumi(...args);
  /** Runs python3 or pip; resolves with its exit code and output. */
  const run = (bin: string, args: string[]) =>
    new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(bin, args, { cwd: project.root });
      let output = "";
      for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, output }));
    });

  beforeAll(async () => {
    emulator = await startEmulator({
      port: 0,
      db: ":memory:",
      workspaces: [
        { name: "Python", apiKey: API_KEY },
        { name: "Python second", apiKey: SECOND_KEY },
      ],
    });
    const venv = (root: string) => join(root, "venv");
    project = startCliProject(cli!, "gms-plugin-python", "name: gms-python\nruntime: python\n");
    const { root } = project;
    await pulumi("package", "gen-sdk", join(ROOT, "schema.json"), "--language", "python", "--out", join(root, "sdk"));
    const made = await run("python3", ["-m", "venv", venv(root)]);
    const pipArgs = [
      "install",
      "--quiet",
      "--disable-pip-version-check",
      "--cache-dir",
      join(root, "pip-cache"),
      join(root, "sdk", "python"),
    ];
    const install = made.code === 0 ? await run(join(venv(root), "bin", "pip"), pipArgs) : made;
    if (install.code !== 0) {
      unavailable = `the venv or pip install of pulumi and the generated SDK failed (exit ${install.code}):\n${install.output}`;
      console.log(`${FILE}: skipping the Python program: ${unavailable}`);
      return;
    }
    writeFileSync(join(project.dir, "__main__.py"), PROGRAM);
    project.write(`name: gms-python\nruntime:\n  name: python\n  options:\n    toolchain: pip\n    virtualenv: ${venv(root)}\n`);
    await project.initStack("dev", {
      "gms:baseUrl": emulator.url,
      "gms:apiKey": { secret: API_KEY },
      openaiKey: { secret: OPENAI_KEY },
      secondUrl: emulator.url,
      secondKey: { secret: SECOND_KEY },
    });
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    project?.close();
  });

  it(
    "up creates the resources in both workspaces, a preview finds no change, destroy deletes them; no key shows",
    async (context) => {
      if (unavailable) context.skip();
      const up = await pulumi("up", "--yes", "--skip-preview");
      const outputs = JSON.parse(await pulumi("stack", "output", "--json")) as {
        appGuid: string;
        workflowApp: string;
        billingGuid: string;
        workspaceName: string;
        usage: { feature: string; used: number; limit: number }[];
      };
      expect(outputs.workspaceName).toBe("Python");
      expect(outputs.usage).toContainEqual({ feature: "apps", used: expect.any(Number), limit: expect.any(Number) });
      expect((await api(API_KEY, "GET", `/apps/${outputs.appGuid}`)).body.name).toBe("Support (Python)");
      expect(outputs.workflowApp).toBe(outputs.appGuid);
      const connections = (await api(API_KEY, "GET", "/providers")).body as { nickname: string }[];
      expect(connections.map((connection) => connection.nickname)).toEqual(["Main"]);
      // The explicit provider's App is in the second workspace, not in the first.
      expect((await api(SECOND_KEY, "GET", `/apps/${outputs.billingGuid}`)).body.name).toBe("Billing (second workspace)");
      expect((await api(API_KEY, "GET", `/apps/${outputs.billingGuid}`)).status).toBe(404);
      const preview = await pulumi("preview", "--expect-no-changes");
      const exported = await pulumi("stack", "export");
      expect(exported).toContain("ciphertext");
      const destroy = await pulumi("destroy", "--yes", "--skip-preview");
      expect((await api(API_KEY, "GET", `/apps/${outputs.appGuid}`)).status).toBe(404);
      expect((await api(SECOND_KEY, "GET", `/apps/${outputs.billingGuid}`)).status).toBe(404);
      expect((await api(API_KEY, "GET", "/providers")).body).toEqual([]);
      for (const text of [up, preview, exported, destroy])
        for (const key of [OPENAI_KEY, API_KEY, SECOND_KEY]) expect(text).not.toContain(key);
    },
    TIMEOUT,
  );
});
