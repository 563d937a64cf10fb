/**
 * The release's `pulumi-gms` for a team that runs no Node.js: the tarball of this machine's platform unpacked, the
 * executable run with a PATH that holds no `node`, only what the command itself calls (the Pulumi CLI, for recover):
 * - `--version` and `--help` answer;
 * - `discover` lists a workspace in the emulator and writes its import document, and with `--language python` the
 *   program that adopts it, converted by the pulumi-gms-convert beside it (and says where to get it when it is not);
 * - `recover` settles what a killed `pulumi up` leaves: a YAML project whose plugin is the release's tarball, its
 *   checkpoint as a SIGKILL leaves it (an App moved back into a pending create, the lock of a process that is gone),
 *   recorded by `recover --yes`, after which a preview finds no change and every App exists once.
 * The tarball is required under CI=true (`npm run dist` builds it); the recover case needs the real CLI and its YAML
 * language host, also required there.
 */
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, tarballName } from "../../scripts/dist/executables.mts";
import { hostPlatform } from "../../scripts/dist/platforms.mts";
import type { Discovery } from "../../src/discover/plan";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RecoveryReport } from "../../src/recover/report";
import { callOverHttp } from "../emulator/harness";
import { yamlCliFor } from "../plugin/cli-project";
import { cliName } from "../pulumi-cli/harness";
import type { Deployment } from "../recover/harness";
import { type InstalledPlugin, installPlugin, releaseFor } from "./harness";
import { run } from "./scenario";

const FILE = "release/cli-executable.test.ts";
const release = releaseFor(FILE);
const API_KEY = "gms_release_cli_key_5d21";
const TIMEOUT = 240_000;

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

describe.skipIf(!release)("the release's pulumi-gms, where no Node.js is installed", () => {
  let dir: string;
  let executable: string;
  let emulator: RunningEmulator;
  /**
   * The executable with only `folders` on PATH (none holds node), in `cwd`, with `env` besides. Not spawnSync: the
   * emulator it calls answers from this process.
   */
  const gms = (args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; folders?: string[]; executable?: string } = {}) =>
    new Promise<Ran>((resolve, reject) => {
      const child = spawn(options.executable ?? executable, args, {
        cwd: options.cwd ?? dir,
        env: { ...options.env, PATH: (options.folders ?? []).join(":"), HOME: dir },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const ran: Ran = { code: null, out: "", err: "" };
      child.stdout.on("data", (chunk: Buffer) => (ran.out += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (ran.err += chunk.toString("utf8")));
      child.on("error", reject);
      child.on("close", (code) => resolve({ ...ran, code }));
    });
  const api = <T = unknown>(method: string, path: string, body?: unknown) =>
    callOverHttp<T>({ url: emulator.url, apiKey: API_KEY }, method, path, body);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gms-release-gms-cli-"));
    const tarball = join(release!.tarball, "..", tarballName(CLI, release!.version, hostPlatform()!));
    const unpacked = spawnSync("tar", ["-xzf", tarball, "-C", dir], { encoding: "utf8" });
    if (unpacked.status !== 0) throw new Error(`tar -xzf ${tarball}: ${unpacked.stderr}`);
    executable = join(dir, CLI.name);
    emulator = await startEmulator({ port: 0, db: ":memory:", workspaces: [{ name: "Release CLI", apiKey: API_KEY }] });
  });
  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers --version and --help with nothing on PATH", async () => {
    expect(spawnSync("node", ["--version"], { env: { PATH: "" } }).error).toBeDefined();
    expect(await gms(["--version"])).toEqual({ code: 0, out: `${release!.version}\n`, err: "" });
    const help = await gms(["--help"]);
    expect(help.code).toBe(0);
    for (const command of ["emulator", "migrate", "discover", "recover"]) expect(help.out).toContain(`  ${command}`);
  });

  it("discover writes the import document of a workspace", async () => {
    const app = (await api<{ guid: string }>("POST", "/apps", { name: "Adopt me", description: "made by hand" })).body.guid;
    const ran = await gms(["discover", "--json", "--out", "import.json"], { env: { GMS_BASE_URL: emulator.url, GMS_API_KEY: API_KEY } });
    expect(ran.code, ran.err).toBe(0);
    const found = JSON.parse(ran.out) as Discovery;
    expect(found.workspace.name).toBe("Release CLI");
    expect(found.document.resources).toContainEqual(expect.objectContaining({ type: "gms:index:App", id: app }));
    expect(JSON.parse(readFileSync(join(dir, "import.json"), "utf8"))).toEqual(found.document);
    expect(ran.out + ran.err).not.toContain(API_KEY);
    expect((await api("DELETE", `/apps/${app}`)).status).toBe(200);
  });

  it("discover --language python writes the adopting program with the converter beside it, and says so when it is not there", async () => {
    const app = (await api<{ guid: string }>("POST", "/apps", { name: "Adopt in Python" })).body.guid;
    const env = { GMS_BASE_URL: emulator.url, GMS_API_KEY: API_KEY };
    const ran = await gms(["discover", "--language", "python", "--out", "adopted-python"], { env });
    expect(ran.code, ran.err).toBe(0);
    const program = readFileSync(join(dir, "adopted-python", "__main__.py"), "utf8");
    expect(program).toContain("import pulumi_gms as gms");
    expect(program).toContain(`import_="${app}"`);
    expect(ran.err).toContain("Wrote adopted-python/__main__.py: a python program that adopts");

    // Without the converter beside it, the executable (which never runs Go) says where to find it.
    const alone = mkdtempSync(join(tmpdir(), "gms-release-gms-alone-"));
    try {
      copyFileSync(executable, join(alone, CLI.name));
      const lone = await gms(["discover", "--language", "go"], { cwd: alone, env, executable: join(alone, CLI.name) });
      expect(lone.code).toBe(1);
      expect(lone.err).toContain("needs the converter pulumi-gms-convert: it is beside pulumi-gms in the release's pulumi-gms tarball");
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
    expect((await api("DELETE", `/apps/${app}`)).status).toBe(200);
  });

  const cli = release && yamlCliFor(FILE);
  describe.skipIf(!cli)(`recover on the real CLI: ${cliName(cli)}`, () => {
    const PROJECT = "release-recover";
    const STACK = "dev";
    let installed: InstalledPlugin;
    let project: string;
    const pulumi = (...args: string[]) =>
      run(cli!.bin, [...args, "--stack", STACK, "--non-interactive", "--color", "never"], { cwd: project, env: installed.env });
    const urnOf = (app: string) => `urn:pulumi:${STACK}::${PROJECT}::gms:index:App::${app}`;
    const checkpoint = () => join(installed.sandbox.backendDir, ".pulumi", "stacks", PROJECT, `${STACK}.json`);

    beforeAll(async () => {
      installed = installPlugin(cli!, release!);
      project = join(dir, "project");
      spawnSync("mkdir", [project]);
      writeFileSync(
        join(project, "Pulumi.yaml"),
        `name: ${PROJECT}\nruntime: yaml\nresources:\n${["first", "second"]
          .map((app) => `  ${app}:\n    type: gms:index:App\n    properties:\n      name: release-${app}\n`)
          .join("")}`,
      );
      await run(cli!.bin, ["stack", "init", STACK, "--non-interactive"], { cwd: project, env: installed.env });
      await pulumi("config", "set", "gms:baseUrl", emulator.url);
      await pulumi("config", "set", "--secret", "gms:apiKey", API_KEY);
    }, TIMEOUT);
    afterAll(() => installed?.remove());

    it(
      "records a create a killed up left pending, releases its dead lock, and the next preview finds no change",
      async () => {
        const started = new Date().toISOString();
        await pulumi("up", "--yes", "--skip-preview");
        // What a kill with the second App's create in flight leaves: its resource as a pending create, and the lock.
        const file = JSON.parse(readFileSync(checkpoint(), "utf8")) as { checkpoint: { latest: Deployment } };
        const latest = file.checkpoint.latest;
        const second = latest.resources!.find((resource) => resource.urn === urnOf("second"))!;
        const { id: made, outputs: _outputs, ...pending } = second;
        latest.resources = latest.resources!.filter((resource) => resource !== second);
        latest.pending_operations = [{ type: "creating", resource: pending }];
        writeFileSync(checkpoint(), JSON.stringify(file));
        const locks = join(installed.sandbox.backendDir, ".pulumi", "locks", "organization", PROJECT, STACK);
        spawnSync("mkdir", ["-p", locks]);
        const gone = spawnSync("true").pid!;
        writeFileSync(
          join(locks, "killed-run.json"),
          JSON.stringify({ pid: gone, hostname: hostname(), timestamp: started, username: "ci" }),
        );

        const ran = await gms(["recover", "--stack", STACK, "--yes", "--json"], { cwd: project, env: installed.env, folders: [cli!.dir] });
        expect(ran.code, ran.err).toBe(0);
        const report = JSON.parse(ran.out) as RecoveryReport;
        expect(report.applied).toBe(true);
        expect(report.lock).toMatchObject({ release: true });
        expect(report.pendingCreates).toEqual([expect.objectContaining({ urn: urnOf("second"), outcome: "recorded", id: made })]);
        expect(ran.out + ran.err).not.toContain(API_KEY);

        await pulumi("preview", "--expect-no-changes");
        const apps = (await api<{ data: { name: string }[] }>("GET", "/apps")).body.data.map((app) => app.name).sort();
        expect(apps).toEqual(["release-first", "release-second"]);
        await pulumi("destroy", "--yes", "--skip-preview");
        expect((await api<{ data: unknown[] }>("GET", "/apps")).body.data).toEqual([]);
      },
      TIMEOUT,
    );
  });
});
