/**
 * The getting-started pages (docs/python.md, docs/go.md, docs/yaml.md, docs/typescript.md) run as a user follows them:
 * every `sh` block in order, and every file block (a fence tagged with its language and a file name, such as
 * `python __main__.py`) written where the page shows it, as one bash script in an empty folder. An `output` block is
 * what the commands before it print: each of its lines must be in what the script printed, in the page's order
 * (spacing and a step's duration aside). `text` blocks are what a user adapts (a real workspace's address) and are not run. The machine has
 * what a user of the page has and nothing of this repository's: the real Pulumi CLI, the release's standalone
 * `pulumi-gms` (the emulator), python3, Go or a Node.js new enough (the one the tests run on), and a fresh PULUMI_HOME
 * where the engine downloads the plugin. What a registry would serve comes from the release instead, through the
 * clients' own settings, with the pages' commands unchanged: pip finds `pulumi_gms` in release/python
 * (PIP_FIND_LINKS), Go finds the module in a file proxy made of release/go (GOPROXY), npm finds `pulumi-gms` (packed
 * from this checkout) at a loopback registry that hands every other package on to the real one (npm-registry.ts), and
 * the engine's download of the plugin goes to a loopback server laid out as the release (download-server.ts). No key
 * the page uses (`sk-...`, `gms_..._key`) shows in anything printed. Skipped, saying why, without the CLI or the
 * release (both required under CI=true), or without the page's toolchain.
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, PLUGIN, tarballName } from "../../scripts/dist/executables.mts";
import { hostPlatform } from "../../scripts/dist/platforms.mts";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { type DownloadServer, startDownloadServer } from "./download-server";
import { downloadingSandbox, type InstalledPlugin, releaseFor } from "./harness";
import { type NpmRegistry, startNpmRegistry } from "./npm-registry";

const FILE = "release/getting-started.test.ts";
const ROOT = join(__dirname, "..", "..");
const release = releaseFor(FILE);
const cli = release && pulumiCliFor(FILE);
const TIMEOUT = 1_200_000;

/** A page as the bash script that follows it: `sh` blocks as they are, file blocks as heredocs. */
export function pageScript(markdown: string): string {
  const lines = ["set -euo pipefail"];
  for (const [, info, body] of markdown.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)) {
    const [tag, file] = info!.trim().split(/\s+/);
    if (tag === "sh") lines.push(body!.trimEnd());
    else if (file) lines.push(`cat > ${file} <<'GMS_PAGE_EOF'`, body!.trimEnd(), "GMS_PAGE_EOF");
  }
  return `${lines.join("\n")}\n`;
}

/** The lines of a page's `output` blocks, in order: what its commands print, spacing aside. */
export function pageOutputs(markdown: string): string[] {
  return [...markdown.matchAll(/^```output\n([\s\S]*?)^```$/gm)].flatMap(([, body]) => body!.trimEnd().split("\n").map(spacing));
}

/** `text` with colour codes and a step's duration (`(0.12s)`) removed and every run of blanks one space, trimmed. */
const spacing = (text: string): string =>
  text
    .replace(/\u001b\[[0-9;]*m/g, "")
    .replace(/ \(\d+(\.\d+)?s\)/g, "")
    .replace(/[ \t]+/g, " ")
    .trim();

/** The expected lines not found in `printed` in their order (each after the one before it). */
export function missingInOrder(expected: string[], printed: string): string[] {
  const lines = printed.split("\n").map(spacing);
  const missing: string[] = [];
  let at = 0;
  for (const line of expected) {
    const found = lines.findIndex((candidate, index) => index >= at && candidate.includes(line));
    if (found === -1) missing.push(line);
    else at = found + 1;
  }
  return missing;
}

/** The keys a page uses (fake provider keys `sk-...`, emulator API keys `gms_..._key`): none may show in what it prints. */
const pageSecrets = (markdown: string): string[] => [...new Set(markdown.match(/\bsk-[\w-]+|\bgms_\w+_key\b/g) ?? [])];

describe("the getting-started pages as scripts", () => {
  it("take the sh blocks and the file blocks in order, and leave text and output blocks out", () => {
    const script = pageScript(
      "# Page\n\n```sh\nmkdir a && cd a\n```\n\n```python main.py\nprint('hi')\n```\n\n```text\nnot run\n```\n\n```sh\npython3 main.py\n```\n" +
        "\n```output\nhi\n```\n",
    );
    expect(script).toBe("set -euo pipefail\nmkdir a && cd a\ncat > main.py <<'GMS_PAGE_EOF'\nprint('hi')\nGMS_PAGE_EOF\npython3 main.py\n");
  });

  it("check the output blocks' lines in order, spacing, colours and durations aside", () => {
    const page = "```sh\nrun\n```\n\n```output\n+-  a   replace\n```\n\n```sh\nagain\n```\n\n```output\n+- b replace\n```\n";
    expect(pageOutputs(page)).toEqual(["+- a replace", "+- b replace"]);
    expect(missingInOrder(pageOutputs(page), "x\n \u001b[32m+- a\u001b[0m replace [diff: ~key]\ny\n    +-  b replace\n")).toEqual([]);
    expect(missingInOrder(pageOutputs(page), "+- b replace\n+- a replace\n")).toEqual(["+- b replace"]);
    expect(missingInOrder(pageOutputs(page), "+- a replace\n")).toEqual(["+- b replace"]);
    expect(missingInOrder(["+- a replaced [diff: ~key]"], " +- a replaced (0.00s) [diff: ~key]\n")).toEqual([]);
  });

  it("name the keys the pages use, which nothing may print", () => {
    expect(pageSecrets("OPENAI_KEY=sk-not-a-real-key GMS_API_KEY=gms_start_key MODEL_KEY=sk-model-key sk-not-a-real-key")).toEqual([
      "sk-not-a-real-key",
      "gms_start_key",
      "sk-model-key",
    ]);
    for (const { page } of PAGES) expect(pageSecrets(readFileSync(join(ROOT, page), "utf8")).length, page).toBeGreaterThan(1);
  });
});

/** Whether `command` runs here; the page's suite skips, saying why, where it does not. */
const present = (command: string, args: string[]) => spawnSync(command, args, { encoding: "utf8" }).status === 0;

/**
 * A Go module proxy in a folder (GOPROXY=file://...) that serves release/go as the module at `version`, as the module
 * proxy serves a published module: its list, info, go.mod and zip (written by python3's zipfile).
 */
function goFileProxy(releaseGo: string, version: string, dir: string): string {
  const modulePath = /^module (\S+)$/m.exec(readFileSync(join(releaseGo, "go.mod"), "utf8"))![1]!;
  const at = join(dir, ...modulePath.split("/"), "@v");
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, "list"), `v${version}\n`);
  writeFileSync(join(at, `v${version}.info`), JSON.stringify({ Version: `v${version}`, Time: "2026-12-05T00:00:00Z" }));
  cpSync(join(releaseGo, "go.mod"), join(at, `v${version}.mod`));
  const zipped = spawnSync(
    "python3",
    [
      "-c",
      "import os, sys, zipfile\nsrc, out, prefix = sys.argv[1:]\nwith zipfile.ZipFile(out, 'w') as z:\n" +
        "  for base, _, files in sorted(os.walk(src)):\n    for f in sorted(files):\n" +
        "      p = os.path.join(base, f); z.write(p, prefix + '/' + os.path.relpath(p, src))",
      releaseGo,
      join(at, `v${version}.zip`),
      `${modulePath}@v${version}`,
    ],
    { encoding: "utf8" },
  );
  if (zipped.status !== 0) throw new Error(`zipping the Go module: ${zipped.stderr}`);
  return `file://${dir}`;
}

const PAGES = [
  { page: "docs/yaml.md", toolchain: undefined },
  { page: "docs/python.md", toolchain: ["python3", ["-m", "venv", "--help"]] as const },
  { page: "docs/go.md", toolchain: ["go", ["version"]] as const },
  // The page's Node.js: the one the tests run on (package.json's engines allow it, test/modules.test.ts), with npm.
  { page: "docs/typescript.md", toolchain: ["npm", ["--version"]] as const },
];

describe.skipIf(!cli)(`the getting-started pages, every command run: ${cliName(cli)}`, () => {
  let work: string;
  let server: DownloadServer;
  let registry: NpmRegistry;
  let gmsFolder: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "gms-getting-started-"));
    server = await startDownloadServer(dirname(release!.tarball), release!.version);
    registry = await startNpmRegistry(work);
    gmsFolder = join(work, "pulumi-gms");
    mkdirSync(gmsFolder);
    const tarball = join(dirname(release!.tarball), tarballName(CLI, release!.version, hostPlatform()!));
    const unpacked = spawnSync("tar", ["-xzf", tarball, "-C", gmsFolder], { encoding: "utf8" });
    if (unpacked.status !== 0) throw new Error(`tar -xzf ${tarball}: ${unpacked.stderr}`);
  });
  afterAll(async () => {
    await server?.close();
    await registry?.close();
    // A page's node_modules or Go build cache is many small files.
    if (work) rmSync(work, { recursive: true, force: true });
  }, 300_000);

  it.for(PAGES)(
    "$page: from an empty folder to up against the emulator, no change on the next run, destroy; no key printed",
    { timeout: TIMEOUT },
    async ({ page, toolchain }, context) => {
      if (toolchain && !present(toolchain[0], [...toolchain[1]])) {
        console.log(`${FILE}: skipping ${page}: ${toolchain[0]} does not run here`);
        context.skip();
      }
      const home: InstalledPlugin = downloadingSandbox(cli!, release!, server);
      const folder = mkdtempSync(join(work, "page-"));
      const markdown = readFileSync(join(ROOT, page), "utf8");
      try {
        // Nothing of the npm that runs the tests (npm_config_*, npm_package_*): the page's npm is the user's.
        const machine = Object.fromEntries(Object.entries(home.env).filter(([name]) => !/^npm_/i.test(name)));
        const env: NodeJS.ProcessEnv = {
          ...machine,
          // The page's own state and passphrase; PULUMI_HOME and the engine's download are the sandbox's.
          PULUMI_BACKEND_URL: undefined,
          PULUMI_CONFIG_PASSPHRASE: undefined,
          // The CLI, the release's pulumi-gms, a Node.js new enough (the machine's may not be: the one the tests run
          // on), and the machine's own tools, but nothing of this repository's node_modules.
          PATH: [
            cli!.dir,
            gmsFolder,
            dirname(process.execPath),
            ...(process.env.PATH ?? "").split(delimiter).filter((entry) => !entry.includes("node_modules")),
          ].join(delimiter),
          ...registry.npmEnv,
          PIP_FIND_LINKS: join(dirname(release!.tarball), "python"),
          PIP_DISABLE_PIP_VERSION_CHECK: "1",
          GOPROXY: [
            goFileProxy(join(dirname(release!.tarball), "go"), release!.version, join(work, "goproxy")),
            process.env.GOPROXY ?? "https://proxy.golang.org",
          ].join(","),
          GONOSUMDB: "github.com/pulumi-gms",
          GOFLAGS: "-mod=mod",
        };
        for (const name of Object.keys(env)) if (env[name] === undefined) delete env[name];
        const script = pageScript(markdown);
        const downloaded = server.downloads().length;
        const { code, output } = await bash(script, folder, env);
        expect(code, output).toBe(0);
        expect(output).toContain("appGuid");
        expect(missingInOrder(pageOutputs(markdown), output), output).toEqual([]);
        for (const secret of pageSecrets(markdown)) expect(output.includes(secret), `${page} printed ${secret}`).toBe(false);
        // Its fresh PULUMI_HOME got the plugin once, by the engine's own download.
        expect(server.downloads().slice(downloaded)).toEqual([tarballName(PLUGIN, release!.version, hostPlatform()!)]);
        expect(readdirSync(folder)).toEqual(["gms-start"]);
      } finally {
        home.remove();
      }
    },
  );
});

/** Runs `script` with bash in `cwd`; resolves with its exit code and everything it printed. */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => {
      // A command the page left running (its emulator, when a step failed before the page stops it) goes with it.
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        // Already gone.
      }
      resolve({ code, output });
    });
  });
}
