/**
 * The one scenario every language runs on the real CLI, from a fresh PULUMI_HOME that holds no gms plugin: the engine
 * downloads the release's tarball by itself, from the URL the SDK sends (schema.json's `pluginDownloadURL`, pointed
 * at a loopback server laid out as the release by PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES: download-server.ts), once.
 * No Node.js is reachable by the CLI or the plugin: the PATH they get holds the CLI's folder and what the language
 * itself needs (a Python virtual environment's `bin`), nothing else.
 *
 * Four stages of one program, each an `up` checked through the service's API, then a `destroy`:
 * 1. an App, a ProviderConnection with a secret key, a Model linked to that connection (its `provider` is the
 *    connection's GUID) with the same key, and a Workflow on the App; then a preview finds no change;
 * 2. the App's description changes: an update in place (same GUID);
 * 3. the Model's url changes: a replacement (a new GUID, the old Model gone);
 * 4. an App made through the API, outside the stack, is brought in (`import` resource option, or `pulumi import` in
 *    YAML) with the values it has; a preview then finds no change.
 * No key shows in anything the CLI or the program printed, nor in `pulumi stack export`.
 *
 * A language's suite gives a `LanguageProgram` that runs an operation of a stage; the stages' values are
 * `stageValues`, so that every language declares the same objects.
 */
import { spawn, spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { PulumiCli } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { type DownloadServer, startDownloadServer } from "./download-server";
import { downloadingSandbox, type InstalledPlugin, type PluginRelease, releaseFor } from "./harness";

export const STACK = "dev";
export const API_KEY = "gms_release_language_key_61c2";
export const OPENAI_KEY = "sk-release-language-secret-7d0e93";
const TIMEOUT = 600_000;

export type Stage = 1 | 2 | 3 | 4;
export type Operation = "up" | "preview" | "destroy";

/** What a stage declares (the same in every language). */
export function stageValues(language: string, stage: Stage) {
  return {
    app: { name: `Support (${language})`, description: stage >= 2 ? "Answers tickets and chats" : "Answers tickets" },
    connection: { provider: "openai", nickname: "Main" },
    model: { llm: "gpt-4o", url: stage >= 3 ? "https://llm2.example.com/v1" : "https://llm.example.com/v1" },
    workflow: { name: "Triage" },
    /** The App made outside the stack, imported in stage 4. */
    legacy: { name: `Legacy (${language})`, description: "Made by hand" },
  };
}

/** The stack outputs every program exports (GUIDs, and the Model's link). */
export interface ScenarioOutputs {
  appGuid: string;
  connectionGuid: string;
  modelGuid: string;
  modelLink: string;
  workflowGuid: string;
  workflowApp: string;
  legacyGuid?: string;
}

/** What a language's program needs of the test: the service, the CLI's environment and a folder of its own. */
export interface ScenarioBed {
  cli: PulumiCli;
  release: PluginRelease;
  /** The emulator's base URL (ends in /v1); the key is API_KEY, the connection's and Model's OPENAI_KEY. */
  baseUrl: string;
  /**
   * The CLI's environment: a PULUMI_HOME where the engine installs the plugin it downloads from `server`, a file
   * backend, the passphrase, and a PATH of the CLI's folder alone (a language adds its own folders with `withPath`).
   */
  env: NodeJS.ProcessEnv;
  /** A throw-away folder for the program (removed after the suite). */
  dir: string;
  /** The loopback server the engine downloads the plugin from. */
  server: DownloadServer;
}

/** A language's program of the scenario. */
export interface LanguageProgram {
  /** The project's folder (Pulumi.yaml), where the CLI's commands on the stack run. */
  dir: string;
  /** Runs `operation` on `stage`'s program; resolves with everything printed, rejects (with it) when it fails. */
  run(operation: Operation, stage: Stage, legacyGuid?: string): Promise<string>;
  /** The stack outputs after the last `up`. */
  outputs(): Promise<ScenarioOutputs>;
}

/**
 * An Automation API program of the scenario: a driver run as `<command...> <operation> <stage> [legacy GUID]` in
 * `bed.dir`, which reads each stage's values from stages.json there (written here), takes the service's URL and the
 * keys from GMS_URL, GMS_KEY and OPENAI_KEY, drives the CLI under PULUMI_CLI_ROOT, and prints, after an `up`, a line
 * `outputs <JSON>`. `env` is the environment it runs in (the bed's, or with the language's own PATH folders).
 */
export function automationProgram(bed: ScenarioBed, language: string, command: string[], env = bed.env): LanguageProgram {
  const stages = Object.fromEntries(([1, 2, 3, 4] as const).map((stage) => [stage, stageValues(language, stage)]));
  writeFileSync(join(bed.dir, "stages.json"), JSON.stringify(stages));
  const driverEnv = { ...env, PULUMI_CLI_ROOT: dirname(bed.cli.dir), GMS_URL: bed.baseUrl, GMS_KEY: API_KEY, OPENAI_KEY };
  let last: ScenarioOutputs | undefined;
  return {
    dir: bed.dir,
    async run(operation, stage, legacyGuid) {
      const args = [...command.slice(1), operation, String(stage), ...(legacyGuid ? [legacyGuid] : [])];
      const printed = await run(command[0]!, args, { cwd: bed.dir, env: driverEnv });
      const line = printed.split("\n").find((text) => text.startsWith("outputs "));
      if (line) last = JSON.parse(line.slice("outputs ".length));
      return printed;
    },
    async outputs() {
      if (!last) throw new Error("no up has run");
      return last;
    },
  };
}

/** `env` with `folders` put before its PATH. */
export const withPath = (env: NodeJS.ProcessEnv, ...folders: string[]): NodeJS.ProcessEnv => ({
  ...env,
  PATH: [...folders, env.PATH ?? ""].filter(Boolean).join(delimiter),
});

/** Runs a command; resolves with its output (stdout and stderr as they came), rejects with it when it exits non-zero. */
export function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(" ")} exited ${code}:\n${output}`)),
    );
  });
}

/** Whether `name` is an executable file in a folder of `path`. */
function onPath(name: string, path: string | undefined): boolean {
  return (path ?? "").split(delimiter).some((folder) => {
    try {
      accessSync(join(folder, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The language's toolchain (python3, go) is not on this machine: the suite skips, saying so, even under CI=true. */
export const toolchainAbsent = (reason: string) => ({ toolchainAbsent: reason });
export type ToolchainAbsent = ReturnType<typeof toolchainAbsent>;

/** The Python SDK of Pulumi the Python programs run on: the newest release PyPI serves here, with the CLI's major version. */
export const PULUMI_PYTHON = "3.272.0";

/**
 * A virtual environment `dir`/venv with PULUMI_PYTHON from PyPI and the release's wheel (release/python); or where
 * python3 has no venv, `toolchainAbsent`; or why it could not be made (no single wheel, pip failed).
 */
export async function pythonWithWheel(dir: string, release: PluginRelease): Promise<{ venv: string } | ToolchainAbsent | string> {
  const wheels = join(dirname(release.tarball), "python");
  const wheel = existsSync(wheels) ? readdirSync(wheels).filter((name) => name.endsWith(".whl")) : [];
  if (wheel.length !== 1) return `release/python holds ${wheel.length} wheels, not one (npm run dist builds it)`;
  const python = spawnSync("python3", ["-c", "import venv"], { encoding: "utf8" });
  if (python.status !== 0) return toolchainAbsent(`python3 with venv does not run (${python.error?.message ?? python.stderr.trim()})`);
  const venv = join(dir, "venv");
  try {
    await run("python3", ["-m", "venv", venv], { cwd: dir, env: process.env });
    const pip = ["install", "--quiet", "--disable-pip-version-check", `pulumi==${PULUMI_PYTHON}`, join(wheels, wheel[0]!)];
    await run(join(venv, "bin", "pip"), pip, { cwd: dir, env: process.env });
  } catch (error) {
    return `python3 could not make a virtual environment with pulumi ${PULUMI_PYTHON} and the wheel: ${(error as Error).message}`;
  }
  return { venv };
}

/**
 * `dir`/go.mod of a module `module` that requires the release's Go SDK (release/go, through a `replace`) and the
 * Pulumi SDK at the version the SDK's go.mod names, with that go.mod's go directive; undefined when written, else
 * `toolchainAbsent` without go, or why not (no release/go).
 */
export function goModuleOnRelease(dir: string, release: PluginRelease, module: string): ToolchainAbsent | string | undefined {
  const go = spawnSync("go", ["version"], { encoding: "utf8" });
  if (go.status !== 0)
    return toolchainAbsent(`go does not run (${go.error?.message ?? go.stderr.trim()}); the Go programs are built with it`);
  const sdk = join(dirname(release.tarball), "go");
  if (!existsSync(join(sdk, "go.mod"))) return "no release/go/go.mod (npm run dist builds it)";
  const sdkGoMod = readFileSync(join(sdk, "go.mod"), "utf8");
  const sdkModule = /^module (\S+)$/m.exec(sdkGoMod)![1]!;
  const goVersion = /^go (\S+)$/m.exec(sdkGoMod)![1]!;
  const pulumiSdk = /github\.com\/pulumi\/pulumi\/sdk\/v3 v\S+/.exec(sdkGoMod)![0];
  const requires = [`${sdkModule} v${release.version}`, pulumiSdk].map((line) => `\t${line}\n`).join("");
  writeFileSync(join(dir, "go.mod"), `module ${module}\n\ngo ${goVersion}\n\nrequire (\n${requires})\n\nreplace ${sdkModule} => ${sdk}\n`);
  return undefined;
}

/**
 * The scenario as a suite for one language. `prepare` returns the language's program; `toolchainAbsent(reason)`
 * where the machine lacks the language's toolchain, printed as the suite skips; or a reason the program could not be
 * made (a package the registry did not serve, a build that failed), printed as the suite skips, and a failure under
 * CI=true, where the release and the registries are there.
 */
export function describeScenario(
  language: string,
  file: string,
  prepare: (bed: ScenarioBed) => Promise<LanguageProgram | ReturnType<typeof toolchainAbsent> | string>,
): void {
  const release = releaseFor(file);
  const cli = release && pulumiCliFor(file);
  describe.skipIf(!cli)(`${language} on the real CLI with the release's plugin and no Node.js: ${cliName(cli)}`, () => {
    let emulator: RunningEmulator;
    let server: DownloadServer;
    let installed: InstalledPlugin;
    let bed: ScenarioBed;
    let program: LanguageProgram | undefined;
    const printed: string[] = [];
    const api = (method: string, path: string, body?: unknown) => callOverHttp({ url: emulator.url, apiKey: API_KEY }, method, path, body);
    const step = async (operation: Operation, stage: Stage, legacyGuid?: string) => {
      const output = await program!.run(operation, stage, legacyGuid).catch((error: Error) => {
        printed.push(error.message);
        throw error;
      });
      printed.push(output);
      return output;
    };
    let first: ScenarioOutputs;

    beforeAll(async () => {
      emulator = await startEmulator({ port: 0, db: ":memory:", workspaces: [{ name: language, apiKey: API_KEY }] });
      server = await startDownloadServer(dirname(release!.tarball), release!.version);
      installed = downloadingSandbox(cli!, release!, server);
      const env: NodeJS.ProcessEnv = { ...installed.env, PATH: cli!.dir };
      bed = {
        cli: cli!,
        release: release!,
        baseUrl: emulator.url,
        env,
        dir: mkdtempSync(join(tmpdir(), `gms-release-${language.toLowerCase()}-`)),
        server,
      };
      const prepared = await prepare(bed);
      if (typeof prepared === "string") {
        if (process.env.CI === "true") throw new Error(`${file}: required under CI=true: ${prepared}`);
        console.log(`${file}: skipping the ${language} program: ${prepared}`);
      } else if ("toolchainAbsent" in prepared) console.log(`${file}: skipping the ${language} program: ${prepared.toolchainAbsent}`);
      else program = prepared;
    }, TIMEOUT);
    afterAll(async () => {
      await emulator?.close();
      await server?.close();
      installed?.remove();
      if (bed) rmSync(bed.dir, { recursive: true, force: true });
    });

    it("reaches no Node.js and starts with no plugin: the CLI's PATH holds no node and no pulumi-resource-gms, PULUMI_HOME none", (context) => {
      if (!program) context.skip();
      expect(onPath("node", bed.env.PATH)).toBe(false);
      expect(onPath("pulumi-resource-gms", bed.env.PATH)).toBe(false);
      expect(existsSync(installed.executable)).toBe(false);
      expect(server.log).toEqual([]);
    });

    it(
      "up creates the App, the connection, the linked Model and the Workflow; a preview then finds no change",
      async (context) => {
        if (!program) context.skip();
        await step("up", 1);
        // The engine fetched the plugin of the SDK's version for this machine, from the URL the SDK sent, and installed it.
        expect(server.downloads()).toEqual([basename(release!.tarball)]);
        expect(existsSync(installed.executable)).toBe(true);
        first = await program!.outputs();
        const values = stageValues(language, 1);
        expect((await api("GET", `/apps/${first.appGuid}`)).body).toMatchObject(values.app);
        const connections = (await api("GET", "/providers")).body as { guid: string; nickname: string }[];
        expect(connections.map(({ guid, nickname }) => ({ guid, nickname }))).toEqual([{ guid: first.connectionGuid, nickname: "Main" }]);
        expect(first.modelLink).toBe(first.connectionGuid);
        expect((await api("GET", `/models/${first.modelGuid}`)).status).toBe(200);
        expect(first.workflowApp).toBe(first.appGuid);
        expect((await api("GET", `/workflows/${first.workflowGuid}`)).body.name).toBe(values.workflow.name);
        await step("preview", 1);
      },
      TIMEOUT,
    );

    it(
      "a changed description updates the App in place",
      async (context) => {
        if (!program) context.skip();
        await step("up", 2);
        const outputs = await program!.outputs();
        expect(outputs.appGuid).toBe(first.appGuid);
        expect((await api("GET", `/apps/${first.appGuid}`)).body.description).toBe(stageValues(language, 2).app.description);
      },
      TIMEOUT,
    );

    it(
      "a changed url replaces the Model, still linked to the connection",
      async (context) => {
        if (!program) context.skip();
        await step("up", 3);
        const outputs = await program!.outputs();
        expect(outputs.modelGuid).not.toBe(first.modelGuid);
        expect(outputs.modelLink).toBe(first.connectionGuid);
        expect((await api("GET", `/models/${first.modelGuid}`)).status).toBe(404);
        expect((await api("GET", `/models/${outputs.modelGuid}`)).status).toBe(200);
      },
      TIMEOUT,
    );

    it(
      "brings in an App made outside the stack, with no change in the next preview",
      async (context) => {
        if (!program) context.skip();
        const made = await api("POST", "/apps", stageValues(language, 4).legacy);
        expect(made.status).toBe(200);
        await step("up", 4, made.body.guid);
        expect((await program!.outputs()).legacyGuid).toBe(made.body.guid);
        await step("preview", 4, made.body.guid);
        expect((await api("GET", "/apps")).body.data.map((app: { guid: string }) => app.guid).sort()).toEqual(
          [first.appGuid, made.body.guid].sort(),
        );
      },
      TIMEOUT,
    );

    it(
      "destroy leaves nothing, and no key shows in any output or in pulumi stack export",
      async (context) => {
        if (!program) context.skip();
        const exported = await run(cli!.bin, ["stack", "export", "--stack", STACK], { cwd: program!.dir, env: bed.env });
        expect(exported).toContain("ciphertext");
        await step("destroy", 4);
        expect((await api("GET", "/apps")).body.data).toEqual([]);
        expect((await api("GET", "/providers")).body).toEqual([]);
        expect((await api("GET", "/models")).body).toEqual([]);
        expect((await api("GET", `/workflows/${first.workflowGuid}`)).status).toBe(404);
        for (const text of [...printed, exported]) for (const key of [OPENAI_KEY, API_KEY]) expect(text).not.toContain(key);
        // Once installed, the plugin is never fetched again.
        expect(server.downloads()).toEqual([basename(release!.tarball)]);
      },
      TIMEOUT,
    );
  });
}
