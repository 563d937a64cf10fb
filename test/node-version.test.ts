/**
 * Every entry point refuses a Node.js older than package.json's engines allow, in one line that names the version
 * needed: the command-line tool (`pulumi-gms`, and its `gms-emulator` alias) prints the line and exits 1, whatever the
 * command, and each module entry of package.json's `exports` throws it (NodeVersionError), by `require` and by
 * `import`, before loading what would fail there with a raw error (issue 48: `pulumi-gms/emulator` died with
 * ERR_UNKNOWN_BUILTIN_MODULE node:sqlite). Run for real on Node.js 20 from npm's `node@20` package, as
 * `npm run test:min-node` gets its Node.js, whatever node the machine has; skipped, saying why, when npm cannot get it
 * (no registry), and required under CI=true.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NODE_NEEDED, NodeVersionError, nodeRefusal, nodeTooOld, requireSupportedNode } from "../src/node-version";

const FILE = "node-version.test.ts";
const ROOT = join(__dirname, "..");
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  engines: { node: string };
  bin: Record<string, string>;
  exports: Record<string, string>;
};

describe("the Node.js the package needs", () => {
  it("is package.json's engines.node, read from there", () => {
    expect(manifest.engines.node).toBe(`>=${NODE_NEEDED}`);
  });

  it("tells an older version from a new enough one, by major, minor and patch", () => {
    const [major, minor] = NODE_NEEDED.split(".").map(Number) as [number, number];
    const older = ["20.20.2", `${major}.${minor - 1}.9`, `${major - 1}.99.0`, "18.0.0"];
    const newer = [NODE_NEEDED, `${major}.${minor}.5`, `${major}.${minor + 1}.0`, `${major + 2}.0.0`];
    expect(older.map((version) => nodeTooOld(version))).toEqual(older.map(() => true));
    expect(newer.map((version) => nodeTooOld(version))).toEqual(newer.map(() => false));
  });

  it("is refused in one line naming both versions and the way out", () => {
    const line = nodeRefusal("pulumi-gms", "20.20.2");
    expect(line).toMatch(
      new RegExp(`^pulumi-gms needs Node\\.js ${NODE_NEEDED.replaceAll(".", "\\.")} or later, and this is v20\\.20\\.2: `),
    );
    expect(line).toContain(`npx -p node@${NODE_NEEDED.split(".")[0]} node <script>`);
    expect(line).not.toContain("\n");
    expect(() => requireSupportedNode("pulumi-gms", "20.20.2")).toThrow(NodeVersionError);
    expect(() => requireSupportedNode("pulumi-gms", NODE_NEEDED)).not.toThrow();
  });
});

/** Node.js 20 from npm's `node@20` package: its executable and version, or undefined after printing why. */
function npmNode20(): { node: string; version: string } | undefined {
  const found = spawnSync(
    "npm",
    ["exec", "--yes", "--package=node@20", "--", "node", "-p", "process.execPath + ' ' + process.versions.node"],
    {
      cwd: tmpdir(),
      encoding: "utf8",
      timeout: 300_000,
    },
  );
  const [node, version] = found.stdout?.trim().split(" ") ?? [];
  if (found.status === 0 && node && version) return { node, version };
  const reason = `npm could not run node@20 (${(found.stderr || String(found.error)).trim().split("\n").at(-1)})`;
  if (process.env.CI === "true") throw new Error(`${FILE}: Node.js 20 is required under CI=true: ${reason}`);
  console.log(`${FILE}: skipping the runs on Node.js 20: ${reason}`);
  return undefined;
}

const node20 = npmNode20();

describe.skipIf(!node20)(`every entry point on Node.js ${node20?.version ?? "20"} (npm's node@20)`, () => {
  const { node, version } = node20!;
  const refusal = nodeRefusal("pulumi-gms", version);
  const run = (args: string[], cwd = ROOT) => spawnSync(node, args, { cwd, encoding: "utf8", timeout: 60_000 });
  // A project that installed the package, so that entries are loaded by their names, as a program loads them.
  const project = mkdtempSync(join(tmpdir(), "gms-node20-"));
  mkdirSync(join(project, "node_modules"));
  symlinkSync(ROOT, join(project, "node_modules", "pulumi-gms"), "dir");
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it("is npm's Node.js 20, not the machine's", () => {
    expect(version).toMatch(/^20\./);
    expect(node).toContain(join("node_modules", "node", "bin"));
    expect(nodeTooOld(version)).toBe(true);
  });

  it.each([
    ["pulumi-gms --help", [manifest.bin["pulumi-gms"]!, "--help"]],
    ["pulumi-gms --version", [manifest.bin["pulumi-gms"]!, "--version"]],
    ["pulumi-gms emulator", [manifest.bin["pulumi-gms"]!, "emulator", "--port", "0", "--db", ":memory:"]],
    ["pulumi-gms discover", [manifest.bin["pulumi-gms"]!, "discover"]],
    ["gms-emulator", [manifest.bin["gms-emulator"]!, "--port", "0", "--db", ":memory:"]],
  ])("%s prints the one line and exits 1, starting nothing", (_, args) => {
    const refused = run(args);
    expect(refused.stderr).toBe(`${refusal}\n`);
    expect(refused.stdout).toBe("");
    expect(refused.status).toBe(1);
  });

  const entries = Object.keys(manifest.exports)
    .filter((entry) => !entry.includes("*") && entry !== "./package.json")
    .map((entry) => `pulumi-gms${entry.slice(1)}`);

  it("has the module entries the issue named among those checked", () => {
    expect(entries).toEqual(expect.arrayContaining(["pulumi-gms", "pulumi-gms/emulator", "pulumi-gms/testing"]));
  });

  it.each(entries)("%s throws the one line when required or imported", (entry) => {
    const script = `const seen = [];
const note = (how, error) => seen.push({ how, name: error?.name, code: error?.code, message: error?.message });
try { require(${JSON.stringify(entry)}); note("require", undefined); } catch (error) { note("require", error); }
import(${JSON.stringify(entry)}).then(() => note("import", undefined), (error) => note("import", error))
  .then(() => process.stdout.write(JSON.stringify(seen)));`;
    const loaded = run(["-e", script], project);
    expect(loaded.status, loaded.stderr).toBe(0);
    const thrown = { name: "NodeVersionError", code: "ERR_GMS_NODE_VERSION", message: refusal };
    expect(JSON.parse(loaded.stdout)).toEqual([
      { how: "require", ...thrown },
      { how: "import", ...thrown },
    ]);
  });

  it("is what a program importing the emulator shows, not node:sqlite's raw error", () => {
    const program = run(
      ["--input-type=module", "-e", `import { startEmulator } from "pulumi-gms/emulator"; await startEmulator();`],
      project,
    );
    expect(program.status).toBe(1);
    expect(program.stderr).toContain(`NodeVersionError: ${refusal}\n`);
    expect(program.stderr).not.toContain("node:sqlite");
  });
});
