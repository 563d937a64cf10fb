/**
 * The plugin from source on the real CLI: a Node.js project (`runtime: nodejs`, run from its folder by the
 * Node.js language host `pulumi-language-nodejs`, which `npm run pulumi:install` builds from the source vendored
 * in scripts/pulumi-language-nodejs) with the package copied into its node_modules as `npm install` leaves it,
 * whose Pulumi.yaml names the provider by `path: ./node_modules/pulumi-gms/plugin` (README, "The native provider
 * plugin"). No `pulumi-resource-gms` is on PATH, so the engine can only start the plugin through that directory's
 * PulumiPlugin.yaml: the Node.js host's RunPlugin runs `@pulumi/pulumi/cmd/run-plugin` on it. The program, typed
 * as a user would run it (`stack init`, `config set`, `up`, `preview --expect-no-changes`, `destroy`), declares
 * a native App, a native ProviderConnection with a secret key from config, and a dynamic App (served by the
 * dynamic-provider launcher beside the CLI). The objects are checked through the emulator's API; no key shows in
 * the CLI's output or in `pulumi stack export`. The CLI and the host are required under CI=true; without them
 * the suite says why it skips.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { installPackageCopy } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { cliName } from "../pulumi-cli/harness";
import { type CliProject, nodejsCliFor, startCliProject } from "./cli-project";

const cli = nodejsCliFor("plugin/from-source.test.ts");
const TIMEOUT = 300_000;
const API_KEY = "gms_plugin_from_source_key_8a17";
const OPENAI_KEY = "sk-plugin-from-source-secret-4f62";

const PROJECT = `name: gms-from-source
runtime: nodejs
plugins:
  providers:
    - name: gms
      path: ./node_modules/pulumi-gms/plugin
`;

/** index.js, an ES module (the program's package.json says "type": "module"): no TypeScript, so any Node 22+ runs it. */
const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";

const config = new pulumi.Config();
const support = new gms.native.App("support", { name: "Support (from source)", description: "Answers tickets" });
const openai = new gms.native.ProviderConnection("openai", {
  provider: "openai",
  key: config.requireSecret("openaiKey"),
  nickname: "Main",
});
const legacy = new gms.App("legacy", { name: "Legacy (dynamic)", description: "Served by the dynamic provider" });

export const appGuid = support.guid;
export const dynamicGuid = legacy.guid;
export const connectionNickname = openai.nickname;
`;

describe.skipIf(!cli)(`the plugin from source (a Node.js project's plugins.providers path) on the real CLI: ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let project: CliProject;
  const api = (method: string, path: string) => callOverHttp({ url: emulator.url, apiKey: API_KEY }, method, path);
  const pulumi = (...args: string[]) => project.pulumi(...args);

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, db: ":memory:", workspaces: [{ name: "From source", apiKey: API_KEY }] });
    project = startCliProject(cli!, "gms-plugin-from-source", PROJECT);
    // No plugin executable on PATH: the engine must start the plugin from its directory.
    rmSync(join(project.root, "bin", "pulumi-resource-gms"));
    const { dir } = project;
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "gms-from-source", private: true, type: "module", main: "index.js" }));
    writeFileSync(join(dir, "index.js"), PROGRAM);
    installPackageCopy(dir);
    await project.initStack("dev", { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: API_KEY }, openaiKey: { secret: OPENAI_KEY } });
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    project?.close();
  });

  it(
    "up creates the native and dynamic resources, a preview finds no change, destroy deletes them; no key shows",
    async () => {
      // Where the CLI looks for executables: the project's bin/, the CLI's folder, this Node's, then PATH.
      const path = [join(project.root, "bin"), cli!.dir, dirname(process.execPath), ...(process.env.PATH ?? "").split(delimiter)];
      expect(path.filter((folder) => folder && existsSync(join(folder, "pulumi-resource-gms")))).toEqual([]);
      const up = await pulumi("up", "--yes", "--skip-preview");
      const outputsText = await pulumi("stack", "output", "--json", "--show-secrets");
      const outputs = JSON.parse(outputsText) as { appGuid: string; dynamicGuid: string; connectionNickname: string };
      expect((await api("GET", `/apps/${outputs.appGuid}`)).body.name).toBe("Support (from source)");
      expect((await api("GET", `/apps/${outputs.dynamicGuid}`)).body.name).toBe("Legacy (dynamic)");
      expect(outputs.connectionNickname).toBe("Main");
      const connections = (await api("GET", "/providers")).body as { nickname: string }[];
      expect(connections.map((connection) => connection.nickname)).toEqual(["Main"]);
      const preview = await pulumi("preview", "--expect-no-changes");
      const exported = await pulumi("stack", "export");
      expect(exported).toContain("ciphertext");
      expect(exported).toContain("gms:index:App");
      expect(exported).toContain("pulumi-nodejs:dynamic/gms:App");
      const destroy = await pulumi("destroy", "--yes", "--skip-preview");
      expect((await api("GET", `/apps/${outputs.appGuid}`)).status).toBe(404);
      expect((await api("GET", `/apps/${outputs.dynamicGuid}`)).status).toBe(404);
      expect((await api("GET", "/providers")).body).toEqual([]);
      for (const text of [up, outputsText, preview, exported, destroy])
        for (const key of [OPENAI_KEY, API_KEY]) expect(text).not.toContain(key);
    },
    TIMEOUT,
  );
});
