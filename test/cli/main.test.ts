/**
 * `pulumi-gms` as a user runs it: the built `node dist/cli/main.js`, with its exit codes (0 done, 1 failed, 2 a
 * usage error), the list of commands, each command's --help, --version, the emulator started with its key from the
 * environment and from a file (never from a flag), its --json start line, and migrate on a small stack export with
 * --json. No API key it was given may appear in anything it prints.
 */
import { type SpawnSyncReturns, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { commands } from "../../src/cli/commands";
import { SECRET_SIG, SIG_KEY } from "../../src/provider/values";

const ROOT = join(__dirname, "..", "..");
const MAIN = join(ROOT, "dist", "cli", "main.js");
const ALIAS = join(ROOT, "dist", "emulator", "cli.js");
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

/** The keys the tests give; none may be printed. */
const KEYS = ["gms_main_env_key", "gms_main_file_key", "gms_main_flag_key"];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "gms-main-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** An environment without the emulator's key variable, plus `extra`. */
const envWith = (extra: Record<string, string> = {}) => ({ ...process.env, GMS_EMULATOR_API_KEY: undefined, ...extra });

/** `pulumi-gms ...args` to its end. */
function run(args: string[], options: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  const result = spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", env: envWith(), timeout: 20_000, ...options });
  expectNoKey(result.stdout + result.stderr);
  return result;
}

function expectNoKey(text: string): void {
  for (const key of KEYS) expect(text.includes(key), `${key} printed`).toBe(false);
}

/** A long-running `node <entry> ...args`: `ready` resolves once `until` matches standard output. */
function start(entry: string, args: string[], env: NodeJS.ProcessEnv, until: RegExp) {
  const child = spawn(process.execPath, [entry, ...args], { stdio: ["ignore", "pipe", "pipe"], env });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready; stdout=${stdout} stderr=${stderr}`)), 15_000);
    child.stdout.on("data", () => {
      const match = stdout.match(until);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] ?? match[0]);
      }
    });
    child.once("exit", () => reject(new Error(`exited early; stderr=${stderr}`)));
  });
  onTestFinished(() => void child.kill("SIGKILL"));
  /** Sends SIGTERM; the exit code once standard output and error are read, with what they held. */
  const stop = async () => {
    child.kill("SIGTERM");
    const code = await closed;
    expectNoKey(stdout + stderr);
    return { code, stdout, stderr };
  };
  return { ready, stop, output: () => ({ stdout, stderr }) };
}

const status = async (url: string, key: string) =>
  (await fetch(`${url}/workspaces/current`, { headers: { authorization: `Bearer ${key}` } })).status;

describe("pulumi-gms", () => {
  it("lists every command with its summary on --help and -h, exit 0", () => {
    for (const flag of ["--help", "-h"]) {
      const help = run([flag]);
      expect(help.status, help.stderr).toBe(0);
      expect(help.stderr).toBe("");
      expect(help.stdout).toMatch(/^usage: pulumi-gms <command> \[options\]/);
      for (const command of commands) expect(help.stdout).toMatch(new RegExp(`^ {2}${command.name} +${literal(command.summary)}$`, "m"));
      expect(help.stdout).toContain("Exit codes: 0 done, 1 failed, 2 a usage error");
    }
    expect(commands.map((command) => command.name)).toEqual(expect.arrayContaining(["emulator", "migrate"]));
  });

  it("loads no command's work for --help: no HTTP server, client, database or planner", () => {
    const probe = join(tempDir(), "loaded.cjs");
    writeFileSync(probe, 'process.on("exit", () => process.stderr.write(JSON.stringify(Object.keys(require.cache))));\n');
    const help = spawnSync(process.execPath, ["--require", probe, MAIN, "--help"], { encoding: "utf8" });
    expect(help.status).toBe(0);
    const loaded = JSON.parse(help.stderr) as string[];
    const heavy = loaded.filter((file) => /node_modules\/(fastify|undici|yaml|zod|@pulumi)\/|dist\/(emulator|migrate|client)\//.test(file));
    expect(heavy).toEqual([]);
  });

  it("prints the usage on standard error and exits 2 with no command", () => {
    const bare = run([]);
    expect(bare.status).toBe(2);
    expect(bare.stdout).toBe("");
    expect(bare.stderr).toMatch(/^usage: pulumi-gms <command>/);
  });

  it("names an unknown command and the known ones, with a suggestion when one is close, exit 2", () => {
    const typo = run(["emulatr", "--port", "0"]);
    expect(typo.status).toBe(2);
    expect(typo.stdout).toBe("");
    expect(typo.stderr).toContain('pulumi-gms: unknown command "emulatr"; did you mean "emulator"?');
    expect(typo.stderr).toContain(`The commands: ${commands.map((command) => command.name).join(", ")}`);
    const far = run(["deploy"]);
    expect(far.status).toBe(2);
    expect(far.stderr).toContain('pulumi-gms: unknown command "deploy". The commands: ');
    expect(far.stderr).not.toContain("did you mean");
    const option = run(["--json"]);
    expect(option.status).toBe(2);
    expect(option.stderr).toContain('pulumi-gms: unknown option "--json"');
  });

  it("prints each command's usage on <command> --help, exit 0", () => {
    for (const command of commands) {
      const help = run([command.name, "--help"]);
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout).toBe(`${command.usage}\n`);
      expect(help.stdout).toMatch(new RegExp(`^usage: pulumi-gms ${command.name}`));
    }
    expect(run(["emulator", "--port", "0", "-h"]).stdout).toContain("--api-key-file FILE");
  });

  it("prints the package's version on --version", () => {
    const version = run(["--version"]);
    expect(version.status).toBe(0);
    expect(version.stdout).toBe(`${VERSION}\n`);
  });
});

describe("pulumi-gms emulator", () => {
  it("takes the default workspace's key from GMS_EMULATOR_API_KEY, never printing it, and stops with 0 on SIGTERM", async () => {
    const emulator = start(
      MAIN,
      ["emulator", "--port", "0", "--db", ":memory:"],
      envWith({ GMS_EMULATOR_API_KEY: "gms_main_env_key" }),
      /^gms-emulator listening on (\S+)$/m,
    );
    const url = await emulator.ready;
    expect(await status(url, "gms_main_env_key")).toBe(200);
    const { code, stdout } = await emulator.stop();
    expect(code).toBe(0);
    expect(stdout).toContain("api keys: 1 as given (GMS_EMULATOR_API_KEY: 1), not printed\n");
    expect(stdout).toContain("gms-emulator: SIGTERM, shutting down\n");
  });

  it("takes the default workspace's key from --api-key-file, and relative paths from its folder", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "key.txt"), "# the default workspace's key\ngms_main_file_key\n");
    const emulator = spawn(process.execPath, [MAIN, "emulator", "--port", "0", "--db", "local.db", "--api-key-file", "key.txt"], {
      cwd: dir,
      env: envWith(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    onTestFinished(() => void emulator.kill("SIGKILL"));
    let stdout = "";
    const url = await new Promise<string>((resolve, reject) => {
      emulator.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
        const match = stdout.match(/^gms-emulator listening on (\S+)$/m);
        if (match && stdout.includes("not printed")) resolve(match[1]!);
      });
      emulator.once("exit", () => reject(new Error(`exited early: ${stdout}`)));
    });
    expect(stdout).toContain("api keys: 1 as given (--api-key-file: 1), not printed\n");
    expectNoKey(stdout);
    expect(await status(url, "gms_main_file_key")).toBe(200);
    expect(existsSync(join(dir, "local.db"))).toBe(true);
    emulator.kill("SIGINT");
    expect(await new Promise((resolve) => emulator.once("close", resolve))).toBe(0);
  });

  it("refuses --api-key with exit 2, saying where keys go now, without repeating the key", () => {
    for (const args of [["--api-key", "gms_main_flag_key"], ["--api-key=gms_main_flag_key"]]) {
      const refused = run(["emulator", "--port", "0", "--db", ":memory:", ...args]);
      expect(refused.status).toBe(2);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toContain("pulumi-gms emulator: --api-key is no longer accepted");
      expect(refused.stderr).toContain("GMS_EMULATOR_API_KEY");
      expect(refused.stderr).toContain("--api-key-file FILE");
      expect(refused.stderr).toContain("usage: pulumi-gms emulator");
    }
  });

  it("prints one JSON line on standard output under --json, the start lines on standard error", async () => {
    const emulator = start(
      MAIN,
      ["emulator", "--port", "0", "--db", ":memory:", "--json", "--faults", "seed=3", "--log"],
      envWith({ GMS_EMULATOR_API_KEY: "gms_main_env_key" }),
      /^(\{.*\})\n/,
    );
    const record = JSON.parse(await emulator.ready) as Record<string, unknown>;
    expect(record).toEqual({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1$/),
      port: expect.any(Number),
      database: ":memory:",
      workspaces: [{ name: "Default", slug: "default", guid: expect.stringMatching(/^[0-9a-f-]{36}$/) }],
      faults: "seed=3",
      clockOffsetMs: 0,
    });
    expect(record.url).toBe(`http://127.0.0.1:${record.port}/v1`);
    expect(await status(record.url as string, "gms_main_env_key")).toBe(200);
    const { code, stdout, stderr } = await emulator.stop();
    expect(code).toBe(0);
    expect(stdout.split("\n")).toEqual([JSON.stringify(record), ""]);
    expect(stderr).toContain(`gms-emulator listening on ${record.url}\n`);
    expect(stderr).toContain("api keys: 1 as given (GMS_EMULATOR_API_KEY: 1), not printed\n");
    expect(stderr).toMatch(/^GET \/v1\/workspaces\/current 200 /m);
    expect(stderr).toContain("gms-emulator: SIGTERM, shutting down\n");
  });

  it("puts a key it generated in the --json line only, not on standard error", async () => {
    const emulator = start(MAIN, ["emulator", "--port", "0", "--db", ":memory:", "--json"], envWith(), /^(\{.*\})\n/);
    const record = JSON.parse(await emulator.ready) as { url: string; generatedApiKey: string };
    expect(record.generatedApiKey).toMatch(/^gms_/);
    expect(await status(record.url, record.generatedApiKey)).toBe(200);
    const { stderr } = await emulator.stop();
    expect(stderr).not.toContain(record.generatedApiKey);
  });

  it("runs as gms-emulator, its name in 0.1.0, printing the same lines and nothing more", async () => {
    const env = envWith({ GMS_EMULATOR_API_KEY: "gms_main_env_key" });
    const lines = async (entry: string, args: string[]) => {
      const emulator = start(entry, [...args, "--port", "0", "--db", ":memory:", "--faults", "seed=5"], env, /not printed\n/);
      await emulator.ready;
      const { code, stdout, stderr } = await emulator.stop();
      expect(code).toBe(0);
      // The port differs, and so does the process id of a warning that Node.js 22 prints for node:sqlite.
      return { stdout: stdout.replace(/:\d+\/v1/, ":PORT/v1"), stderr: stderr.replace(/^\(node:\d+\)/gm, "(node)") };
    };
    expect(await lines(ALIAS, [])).toEqual(await lines(MAIN, ["emulator"]));
    const help = spawnSync(process.execPath, [ALIAS, "--help"], { encoding: "utf8" });
    expect(help.stdout).toBe(run(["emulator", "--help"]).stdout);
  });
});

describe("pulumi-gms migrate", () => {
  const PREFIX = "urn:pulumi:dev::helpdesk";
  const STACK = `${PREFIX}::pulumi:pulumi:Stack::helpdesk-dev`;
  const NODEJS = `${PREFIX}::pulumi:providers:pulumi-nodejs::default`;
  const GUID = "5b0a3c4e-1f2d-4e6f-8a9b-000000000001";
  const CIPHERTEXT = "v1:abcdEFGH:main-test-ciphertext";
  const dynamic = (kind: string, name: string, id: string, inputs: Record<string, unknown>) => ({
    urn: `${PREFIX}::pulumi-nodejs:dynamic/gms:${kind}::${name}`,
    custom: true,
    id,
    type: `pulumi-nodejs:dynamic/gms:${kind}`,
    inputs: { __provider: "exports.handler = __f0;", ...inputs },
    outputs: { __provider: "exports.handler = __f0;", ...inputs, guid: id },
    parent: STACK,
    provider: `${NODEJS}::2098bad0-7b9c-477d-8711-632fcfbadd4b`,
  });
  /** A stack of two dynamic resources: an App that moves, and the placeholder of a lost create that stays dynamic. */
  const stackExport = {
    version: 3,
    deployment: {
      resources: [
        { urn: STACK, custom: false, type: "pulumi:pulumi:Stack" },
        {
          urn: NODEJS,
          custom: true,
          id: "2098bad0-7b9c-477d-8711-632fcfbadd4b",
          type: "pulumi:providers:pulumi-nodejs",
          inputs: { "gms:apiKey": { [SIG_KEY]: SECRET_SIG, ciphertext: CIPHERTEXT } },
        },
        dynamic("App", "support", GUID, { name: "Support" }),
        dynamic("Skill", "web-search", "unresolved-0b7d", { name: "web-search", type: "web" }),
      ],
    },
  };

  it("writes the import file and delete script from a stack export, and prints the plan as JSON under --json", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "stack.json"), JSON.stringify(stackExport));
    const migrate = run(["migrate", "stack.json", "--json", "--stack", "dev"], { cwd: dir });
    expect(migrate.status, migrate.stderr).toBe(0);
    expect(migrate.stderr).toBe("");
    const plan = JSON.parse(migrate.stdout);
    expect(plan).toEqual({
      importFile: "gms-import.json",
      deleteScript: "gms-state-delete.sh",
      stack: "dev",
      migrated: [
        {
          kind: "App",
          urn: `${PREFIX}::pulumi-nodejs:dynamic/gms:App::support`,
          nativeUrn: `${PREFIX}::gms:index:App::support`,
          importId: GUID,
          protect: false,
          outputsSupplied: false,
        },
      ],
      deleteOrder: [`${PREFIX}::pulumi-nodejs:dynamic/gms:App::support`],
      deferred: [
        { kind: "Skill", urn: `${PREFIX}::pulumi-nodejs:dynamic/gms:Skill::web-search`, reason: expect.stringContaining("a placeholder") },
      ],
      notes: expect.any(Array),
    });
    // Relative to the folder it runs in.
    const imported = JSON.parse(readFileSync(join(dir, "gms-import.json"), "utf8")) as { resources: { id: string }[] };
    expect(imported.resources.map((resource) => resource.id)).toEqual([GUID]);
    expect(readFileSync(join(dir, "gms-state-delete.sh"), "utf8")).toContain("pulumi state delete ");
    expect(migrate.stdout).not.toContain(CIPHERTEXT);

    // Without --json: the summary for a person, from standard input.
    const human = run(["migrate", "-", "--import-file", "again.json", "--delete-script", "again.sh"], {
      cwd: dir,
      input: JSON.stringify(stackExport),
    });
    expect(human.status, human.stderr).toBe(0);
    expect(human.stdout).toContain("Wrote again.json: 1 native gms resource(s) to import");
    expect(human.stdout).toContain("1 gms resource(s) stay dynamic");
  });

  it("exits 1 on an export it cannot read, with the reason on standard error and nothing on standard output", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "checkpoint.json"), JSON.stringify({ checkpoint: {} }));
    const failed = run(["migrate", "checkpoint.json", "--json"], { cwd: dir });
    expect(failed.status).toBe(1);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toMatch(/^pulumi-gms migrate: checkpoint\.json is a checkpoint file of a backend, not a stack export/);
    expect(existsSync(join(dir, "gms-import.json"))).toBe(false);
    const missing = run(["migrate", "nowhere.json"], { cwd: dir });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("pulumi-gms migrate: ENOENT");
  });

  it("exits 2 on a usage error, naming it, with the synopsis", () => {
    const unknown = run(["migrate", "--colour"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toContain("pulumi-gms migrate: Unknown option '--colour'");
    expect(unknown.stderr).toContain("usage: pulumi-gms migrate [EXPORT | -]");
    expect(unknown.stderr).toContain("(pulumi-gms migrate --help lists every option)");
    const two = run(["migrate", "a.json", "b.json"]);
    expect(two.status).toBe(2);
    expect(two.stderr).toContain("pulumi-gms migrate: one stack export at a time (got 2)");
  });
});

/** `text` as a regular expression that matches it literally. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
