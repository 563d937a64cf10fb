import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";

const CLI = join(__dirname, "../../dist/emulator/cli.js");

/** Starts the built CLI, waits for its banner, and returns what it printed. */
function startCli(args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
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

describe("gms-emulator CLI", () => {
  it("prints its URL, not the key it was given, serves the API, and shuts down cleanly on SIGTERM", async () => {
    const cli = startCli(["--port", "0", "--db", ":memory:", "--api-key", "gms_cli_test_key"]);
    const { url, keys } = await cli.ready;
    expect(keys).toEqual([]);
    expect(cli.output().stdout).toContain("api keys: 1 as given (--api-key: 1), not printed\n");
    expect(cli.output().stdout).not.toContain("gms_cli_test_key");
    const current = await fetch(`${url}/workspaces/current`, { headers: { authorization: "Bearer gms_cli_test_key" } });
    expect(current.status).toBe(200);
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    expect(cli.output().stdout).toContain("SIGTERM, shutting down");
  });

  it("loads fixtures, keeps data in the database file across restarts, and reuses the generated key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gms-cli-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
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
    const rekeyed = startCli(["--port", "0", "--db", join(dir, "default.db"), "--api-key", "gms_chosen_later_key"]);
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
    expect(cli.output().stderr).toContain("usage: gms-emulator");
    const unknown = startCli(["--colour"]);
    expect(await unknown.exited).toBe(2);
    expect(unknown.output().stderr).toMatch(/Unknown option '--colour'/);
  });

  it("injects faults from --faults, printing the spec in force, and refuses a bad spec with the usage line", async () => {
    const cli = startCli([
      "--port",
      "0",
      "--db",
      ":memory:",
      "--api-key",
      "gms_cli_test_key",
      "--faults",
      "error=1,seed=7,status=502,methods=get",
    ]);
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
      expect(refused.output().stderr).toContain("usage: gms-emulator");
      expect(refused.output().stdout).toBe("");
    }

    const help = startCli(["--help"]);
    expect(await help.exited).toBe(0);
    expect(help.output().stdout).toContain("[--faults SPEC]");
    expect(help.output().stdout).toContain("retry-after=<seconds>");
  });

  it("builds signed file URLs from --public-url, and refuses a malformed one", async () => {
    const cli = startCli([
      "--port",
      "0",
      "--db",
      ":memory:",
      "--api-key",
      "gms_cli_test_key",
      "--public-url",
      "https://gms.example.test/base",
    ]);
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

  it("adds workspaces with their keys from --workspace/--api-key pairs, and refuses unpaired ones", async () => {
    const cli = startCli([
      "--port",
      "0",
      "--db",
      ":memory:",
      "--workspace",
      "Acme Corp",
      "--api-key",
      "gms_acme",
      "--workspace",
      "Beta",
      "--api-key",
      "gms_beta",
    ]);
    const { url } = await cli.ready;
    expect(cli.output().stdout).toContain("api keys: 2 as given (--workspace/--api-key: 2), not printed\n");
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
        ["--workspace", "Acme", "--workspace", "Beta", "--api-key", "gms_acme"],
        "each --workspace needs its own --api-key, in the same order (2 workspace(s), 1 key(s))",
      ],
      [["--api-key", "one", "--api-key", "two"], "--api-key is given once without --workspace"],
      [["--workspace", " ", "--api-key", "gms_blank"], "--workspace and --api-key must not be empty"],
    ] as const) {
      const refused = startCli(["--port", "0", "--db", ":memory:", ...args]);
      expect(await refused.exited).toBe(2);
      expect(refused.output().stderr).toContain(message);
    }
    const help = startCli(["--help"]);
    expect(await help.exited).toBe(0);
    expect(help.output().stdout).toContain("--workspace NAME  a workspace to have, with the --api-key that follows it");
  });

  it("names only the key sources it used, with their counts, and says when a lone --api-key is ignored", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gms-cli-sources-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
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
      "--api-key",
      "gms_cli_gamma_key",
    ]);
    const { url } = await both.ready;
    expect(keyLines(both.output().stdout)).toEqual(["api keys: 3 as given (fixtures: 2, --workspace/--api-key: 1), not printed"]);
    for (const key of ["gms_cli_acme_key", "gms_cli_beta_key", "gms_cli_gamma_key"]) {
      expect((await fetch(`${url}/workspaces/current`, { headers: { authorization: `Bearer ${key}` } })).status, key).toBe(200);
    }
    both.child.kill("SIGTERM");
    expect(await both.exited).toBe(0);

    // Beside fixtures that declare workspaces a lone --api-key selects nothing: said, not counted.
    const ignored = startCli(["--port", "0", "--db", ":memory:", "--fixtures", fixtures, "--api-key", "gms_cli_lone_key"]);
    const ignoredUrl = (await ignored.ready).url;
    expect(keyLines(ignored.output().stdout)).toEqual(["api keys: 2 as given (fixtures: 2), not printed"]);
    expect(ignored.output().stderr).toContain("gms-emulator: --api-key ignored: the fixtures declare 2 workspace(s), each with its apiKey");
    expect(ignored.output().stderr).not.toContain("gms_cli_lone_key");
    expect((await fetch(`${ignoredUrl}/workspaces/current`, { headers: { authorization: "Bearer gms_cli_lone_key" } })).status).toBe(401);
    ignored.child.kill("SIGTERM");
    expect(await ignored.exited).toBe(0);

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
    const dir = mkdtempSync(join(tmpdir(), "gms-cli-bad-fixtures-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const fixtures = join(dir, "fixtures.yaml");
    writeFileSync(fixtures, "workspaces:\n  - { name: Acme, slug: acme, apiKey: gms_ok_key }\n  - { name: Beta, apiKey: sk-7x }\n");
    const cli = startCli(["--port", "0", "--db", ":memory:", "--fixtures", fixtures]);
    expect(await cli.exited).toBe(1);
    const { stdout, stderr } = cli.output();
    expect(stdout).toBe("");
    expect(stderr).toContain("gms-emulator: invalid fixtures");
    expect(stderr).toContain(
      `${fixtures}:3:5: workspaces[1].slug: is required: the workspace's slug: lowercase letters, digits and dashes, e.g. acme`,
    );
    expect(stderr).toContain(`${fixtures}:3:27: workspaces[1].apiKey: must be at least 8 characters: the key that selects this workspace`);
    expect(stderr).not.toContain("sk-7x");
  });
});
