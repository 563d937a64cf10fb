import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";

const CLI = join(__dirname, "../../dist/cli/main.js");

/** A temporary folder, removed when the test ends. */
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A file of API keys for --api-key-file, one a line. */
function keyFile(...keys: string[]): string {
  const file = join(tempDir("gms-cli-keys-"), "keys.txt");
  writeFileSync(file, `${keys.join("\n")}\n`);
  return file;
}

/** Starts `pulumi-gms emulator` as built, waits for its banner, and returns what it printed; `apiKey` goes in GMS_EMULATOR_API_KEY. */
function startCli(args: string[], apiKey?: string) {
  const env = { ...process.env, GMS_EMULATOR_API_KEY: apiKey };
  const child = spawn(process.execPath, [CLI, "emulator", ...args], { stdio: ["ignore", "pipe", "pipe"], env });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  // "close", not "exit": by then stdout and stderr are fully read, so a test may check what was printed.
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  /** The URL, and the keys printed in full (generated ones only: given ones are counted, not printed). */
  const ready = new Promise<{ url: string; keys: string[] }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner; stdout=${stdout} stderr=${stderr}`)), 15_000);
    child.stdout.on("data", () => {
      const url = stdout.match(/^gms-emulator listening on (http:\/\/\S+\/v1)$/m)?.[1];
      const keys = [...stdout.matchAll(/^api key: (\S+)$/gm)].map((match) => match[1]!);
      const given = Number(stdout.match(/^api keys: (\d+) as given/m)?.[1] ?? 0);
      if (url && keys.length + given > 0) {
        clearTimeout(timer);
        resolve({ url, keys });
      }
    });
    child.once("exit", () => reject(new Error(`exited early; stderr=${stderr}`)));
  });
  ready.catch(() => undefined); // awaited by the tests that expect a start; others only watch the exit
  return { child, ready, exited, output: () => ({ stdout, stderr }) };
}

describe("pulumi-gms emulator", () => {
  it("prints its URL, not the key it was given, serves the API, and shuts down cleanly on SIGTERM", async () => {
    const cli = startCli(["--port", "0", "--db", ":memory:"], "gms_cli_test_key");
    const { url, keys } = await cli.ready;
    expect(keys).toEqual([]);
    expect(cli.output().stdout).toContain("api keys: 1 as given (GMS_EMULATOR_API_KEY: 1), not printed\n");
    expect(cli.output().stdout).not.toContain("gms_cli_test_key");
    const current = await fetch(`${url}/workspaces/current`, { headers: { authorization: "Bearer gms_cli_test_key" } });
    expect(current.status).toBe(200);
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    expect(cli.output().stdout).toContain("SIGTERM, shutting down");
  });

  it("loads fixtures, keeps data in the database file across restarts, and reuses the generated key", async () => {
    const dir = tempDir("gms-cli-");
    const fixtures = join(dir, "fixtures.yaml");
    writeFileSync(
      fixtures,
      "workspaces:\n  - name: Acme\n    slug: acme\n    apiKey: gms_cli_acme_key\n    apps:\n      - name: Support\n",
    );
    const db = join(dir, "gms.db");

    const first = startCli(["--port", "0", "--db", db, "--fixtures", fixtures]);
    const { url } = await first.ready;
    const headers = { authorization: "Bearer gms_cli_acme_key", "content-type": "application/json" };
    expect((await fetch(`${url}/apps`, { method: "POST", headers, body: JSON.stringify({ name: "Made at runtime" }) })).status).toBe(200);
    first.child.kill("SIGINT");
    expect(await first.exited).toBe(0);

    const second = startCli(["--port", "0", "--db", db, "--fixtures", fixtures]);
    const again = await second.ready;
    const apps = (await (await fetch(`${again.url}/apps`, { headers })).json()) as { data: { name: string }[] };
    // Fixtures were not loaded twice, and the App made at runtime survived.
    expect(apps.data.map((app) => app.name)).toEqual(["Support", "Made at runtime"]);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);

    const generated = startCli(["--port", "0", "--db", join(dir, "default.db")]);
    const firstKey = (await generated.ready).keys[0];
    expect(firstKey).toMatch(/^gms_/);
    generated.child.kill("SIGTERM");
    await generated.exited;
    const reopened = startCli(["--port", "0", "--db", join(dir, "default.db")]);
    const reopenedUrl = (await reopened.ready).url;
    expect((await reopened.ready).keys).toEqual([firstKey]);
    const made = await fetch(`${reopenedUrl}/apps`, {
      method: "POST",
      headers: { authorization: `Bearer ${firstKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Kept" }),
    });
    expect(made.status).toBe(200);
    reopened.child.kill("SIGTERM");
    await reopened.exited;

    // A key given later selects the same workspace: its records stay reachable, the old key keeps working.
    const rekeyed = startCli(["--port", "0", "--db", join(dir, "default.db")], "gms_chosen_later_key");
    const { url: rekeyedUrl, keys } = await rekeyed.ready;
    expect(keys).toEqual([]);
    expect(rekeyed.output().stdout).not.toContain("gms_chosen_later_key");
    for (const key of ["gms_chosen_later_key", firstKey!]) {
      const apps = (await (await fetch(`${rekeyedUrl}/apps`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
        data: { name: string }[];
      };
      expect(apps.data.map((app) => app.name)).toEqual(["Kept"]);
    }
    rekeyed.child.kill("SIGTERM");
    await rekeyed.exited;
  });

  it("refuses bad arguments with the usage line", async () => {
    const cli = startCli(["--port", "seventy"]);
    expect(await cli.exited).toBe(2);
    expect(cli.output().stderr).toContain("usage: pulumi-gms emulator");
    const unknown = startCli(["--colour"]);
    expect(await unknown.exited).toBe(2);
    expect(unknown.output().stderr).toMatch(/Unknown option '--colour'/);
  });

  it("injects faults from --faults, printing the spec in force, and refuses a bad spec with the usage line", async () => {
    const cli = startCli(["--port", "0", "--db", ":memory:", "--faults", "error=1,seed=7,status=502,methods=get"], "gms_cli_test_key");
    const { url } = await cli.ready;
    expect(cli.output().stdout).toMatch(/^faults: seed=7,error=1,status=502,methods=GET$/m);
    const faulted = await fetch(`${url}/workspaces/current`, { headers: { authorization: "Bearer gms_cli_test_key" } });
    expect(faulted.status).toBe(502);
    expect(await faulted.json()).toEqual({ detail: "Service Unavailable (injected fault)" });
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);

    const plain = startCli(["--port", "0", "--db", ":memory:"]);
    await plain.ready;
    expect(plain.output().stdout).not.toMatch(/^faults:/m);
    plain.child.kill("SIGTERM");
    await plain.exited;

    for (const [spec, message] of [
      ["error=2", "--faults: invalid fault spec: error=2 is not accepted; expected error=<fraction from 0 to 1>, e.g. error=0.05"],
      ["seed=7,chaos=1", '--faults: invalid fault spec: unknown key "chaos"; accepted keys: seed, error,'],
    ]) {
      const refused = startCli(["--port", "0", "--db", ":memory:", "--faults", spec!]);
      expect(await refused.exited).toBe(2);
      expect(refused.output().stderr).toContain(message);
      expect(refused.output().stderr).toContain("usage: pulumi-gms emulator");
      expect(refused.output().stdout).toBe("");
    }

    const help = startCli(["--help"]);
    expect(await help.exited).toBe(0);
    expect(help.output().stdout).toContain("[--faults SPEC]");
    expect(help.output().stdout).toContain("retry-after=<seconds>");
  });

  it("builds signed file URLs from --public-url, and refuses a malformed one", async () => {
    const cli = startCli(["--port", "0", "--db", ":memory:", "--public-url", "https://gms.example.test/base"], "gms_cli_test_key");
    const { url } = await cli.ready;
    const upload = await fetch(`${url}/files/upload`, {
      method: "POST",
      headers: { authorization: "Bearer gms_cli_test_key", "content-type": "application/json", host: "attacker.example" },
      body: JSON.stringify({ data: `data:text/plain;base64,${Buffer.from("hello").toString("base64")}` }),
    });
    expect(((await upload.json()) as { url: string }).url).toMatch(/^https:\/\/gms\.example\.test\/base\/v1\/files\/[0-9a-f-]+\?/);
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);

    const refused = startCli(["--port", "0", "--db", ":memory:", "--public-url", "not a url"]);
    expect(await refused.exited).toBe(2);
    expect(refused.output().stderr).toContain("--public-url: publicUrl must be an absolute http(s) URL");
    const help = startCli(["--help"]);
    expect(await help.exited).toBe(0);
    expect(help.output().stdout).toContain("--public-url URL");
  });

  it("adds workspaces from --workspace with their keys from --api-key-file, in order, and refuses a key count that differs", async () => {
    const keys = join(tempDir("gms-cli-keys-"), "keys.txt");
    // Comments, blank lines and a CRLF line end are not keys.
    writeFileSync(keys, "# Acme Corp\ngms_acme\n\n# Beta\r\ngms_beta\r\n");
    const cli = startCli(["--port", "0", "--db", ":memory:", "--workspace", "Acme Corp", "--workspace", "Beta", "--api-key-file", keys]);
    const { url } = await cli.ready;
    expect(cli.output().stdout).toContain("api keys: 2 as given (--workspace/--api-key-file: 2), not printed\n");
    expect(cli.output().stdout).not.toMatch(/gms_acme|gms_beta/);
    for (const [key, name, slug] of [
      ["gms_acme", "Acme Corp", "acme-corp"],
      ["gms_beta", "Beta", "beta"],
    ]) {
      const current = await fetch(`${url}/workspaces/current`, { headers: { authorization: `Bearer ${key}` } });
      expect(await current.json()).toMatchObject({ name, slug });
    }
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);

    for (const [args, message] of [
      [
        ["--workspace", "Acme", "--workspace", "Beta", "--api-key-file", keyFile("gms_refused_acme")],
        "--api-key-file holds 1 key(s) for 2 --workspace(s): one key a line, in the --workspace order",
      ],
      [["--api-key-file", keyFile("gms_refused_one", "gms_refused_two")], "--api-key-file holds 2 keys; without --workspace it holds one"],
      [["--workspace", "Acme"], "each --workspace needs its key: --api-key-file FILE"],
      [["--workspace", " ", "--api-key-file", keyFile("gms_refused_blank")], "--workspace must not be empty"],
    ] as const) {
      const refused = startCli(["--port", "0", "--db", ":memory:", ...args]);
      expect(await refused.exited).toBe(2);
      expect(refused.output().stderr).toContain(message);
      expect(`${refused.output().stdout}${refused.output().stderr}`).not.toContain("gms_refused");
    }
    const missing = startCli(["--port", "0", "--db", ":memory:", "--api-key-file", join(tmpdir(), "no-such-keys.txt")]);
    expect(await missing.exited).toBe(1);
    expect(missing.output().stderr).toContain("pulumi-gms emulator: --api-key-file: ENOENT");
    const help = startCli(["--help"]);
    expect(await help.exited).toBe(0);
    expect(help.output().stdout).toContain("--workspace NAME      a workspace to have, its key the next line of --api-key-file");
  });

  it("names only the key sources it used, with their counts, and says when a default workspace's key is ignored", async () => {
    const dir = tempDir("gms-cli-sources-");
    const fixtures = join(dir, "fixtures.yaml");
    writeFileSync(
      fixtures,
      "workspaces:\n  - { name: Acme, slug: acme, apiKey: gms_cli_acme_key }\n  - { name: Beta, slug: beta, apiKey: gms_cli_beta_key }\n",
    );
    const keyLines = (stdout: string) => stdout.split("\n").filter((line) => line.startsWith("api key"));

    const fromFixtures = startCli(["--port", "0", "--db", ":memory:", "--fixtures", fixtures]);
    await fromFixtures.ready;
    expect(keyLines(fromFixtures.output().stdout)).toEqual(["api keys: 2 as given (fixtures: 2), not printed"]);
    fromFixtures.child.kill("SIGTERM");
    expect(await fromFixtures.exited).toBe(0);

    const both = startCli([
      "--port",
      "0",
      "--db",
      ":memory:",
      "--fixtures",
      fixtures,
      "--workspace",
      "Gamma",
      "--api-key-file",
      keyFile("gms_cli_gamma_key"),
    ]);
    const { url } = await both.ready;
    expect(keyLines(both.output().stdout)).toEqual(["api keys: 3 as given (fixtures: 2, --workspace/--api-key-file: 1), not printed"]);
    for (const key of ["gms_cli_acme_key", "gms_cli_beta_key", "gms_cli_gamma_key"]) {
      expect((await fetch(`${url}/workspaces/current`, { headers: { authorization: `Bearer ${key}` } })).status, key).toBe(200);
    }
    both.child.kill("SIGTERM");
    expect(await both.exited).toBe(0);

    // Beside fixtures that declare workspaces a default workspace's key selects nothing: said, not counted.
    for (const [args, apiKey, source] of [
      [[], "gms_cli_lone_key", "GMS_EMULATOR_API_KEY"],
      [["--api-key-file", keyFile("gms_cli_lone_key")], undefined, "--api-key-file"],
    ] as const) {
      const ignored = startCli(["--port", "0", "--db", ":memory:", "--fixtures", fixtures, ...args], apiKey);
      const ignoredUrl = (await ignored.ready).url;
      expect(keyLines(ignored.output().stdout)).toEqual(["api keys: 2 as given (fixtures: 2), not printed"]);
      expect(ignored.output().stderr).toContain(
        `pulumi-gms emulator: ${source} ignored: the fixtures declare 2 workspace(s), each with its apiKey`,
      );
      expect(ignored.output().stderr).not.toContain("gms_cli_lone_key");
      expect((await fetch(`${ignoredUrl}/workspaces/current`, { headers: { authorization: "Bearer gms_cli_lone_key" } })).status).toBe(401);
      ignored.child.kill("SIGTERM");
      expect(await ignored.exited).toBe(0);
    }

    // Both a file and the variable: the file's key is the default workspace's, and the variable is said to be ignored.
    const fileFirst = startCli(["--port", "0", "--db", ":memory:", "--api-key-file", keyFile("gms_cli_file_key")], "gms_cli_env_key");
    const fileFirstUrl = (await fileFirst.ready).url;
    expect(keyLines(fileFirst.output().stdout)).toEqual(["api keys: 1 as given (--api-key-file: 1), not printed"]);
    expect(fileFirst.output().stderr).toContain("GMS_EMULATOR_API_KEY ignored: --api-key-file gives the default workspace's key");
    for (const [key, status] of [
      ["gms_cli_file_key", 200],
      ["gms_cli_env_key", 401],
    ] as const) {
      expect((await fetch(`${fileFirstUrl}/workspaces/current`, { headers: { authorization: `Bearer ${key}` } })).status, key).toBe(status);
    }
    expect(`${fileFirst.output().stdout}${fileFirst.output().stderr}`).not.toMatch(/gms_cli_(file|env)_key/);
    fileFirst.child.kill("SIGTERM");
    expect(await fileFirst.exited).toBe(0);

    // Fixtures without workspaces: the default workspace, its key generated and printed; nothing counted as given.
    const evalTypesOnly = join(dir, "eval-types.yaml");
    writeFileSync(evalTypesOnly, "evalTypes:\n  - { name: Exact match }\n");
    const generated = startCli(["--port", "0", "--db", ":memory:", "--fixtures", evalTypesOnly]);
    const { keys } = await generated.ready;
    expect(keyLines(generated.output().stdout)).toEqual([`api key: ${keys[0]}`]);
    generated.child.kill("SIGTERM");
    expect(await generated.exited).toBe(0);
  });

  it("refuses invalid fixtures naming each field's path and the fix, never the key", async () => {
    const dir = tempDir("gms-cli-bad-fixtures-");
    const fixtures = join(dir, "fixtures.yaml");
    writeFileSync(fixtures, "workspaces:\n  - { name: Acme, slug: acme, apiKey: gms_ok_key }\n  - { name: Beta, apiKey: sk-7x }\n");
    const cli = startCli(["--port", "0", "--db", ":memory:", "--fixtures", fixtures]);
    expect(await cli.exited).toBe(1);
    const { stdout, stderr } = cli.output();
    expect(stdout).toBe("");
    expect(stderr).toContain("pulumi-gms emulator: invalid fixtures");
    expect(stderr).toContain(
      `${fixtures}:3:5: workspaces[1].slug: is required: the workspace's slug: lowercase letters, digits and dashes, e.g. acme`,
    );
    expect(stderr).toContain(`${fixtures}:3:27: workspaces[1].apiKey: must be at least 8 characters: the key that selects this workspace`);
    expect(stderr).not.toContain("sk-7x");
  });
});
