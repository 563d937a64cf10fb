/**
 * Every module of the package loads on the Node.js that runs the tests: CI runs this file (with the
 * client, emulator and engine suites) once more on the minimum Node.js that package.json's engines
 * allow (`npm run test:min-node`). The command-line entries are run instead: the schema writer's, which acts as it
 * loads, with --check (which writes nothing), and `pulumi-gms` and the `gms-emulator` alias with --help.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(__dirname, "..");
const dist = join(root, "dist");
const COMMANDS: Record<string, string> = { "cli/main.js": "--help", "emulator/cli.js": "--help", "schema/cli.js": "--check" };
/**
 * What the engines start in their children, which acts as it loads: the program process and the real CLI's
 * driver (each talks to its parent over IPC), run by the engine suite and the suites under test/pulumi-cli,
 * and the provider host's parent watch (it reads standard input until it ends), run by every engine suite.
 */
const FORKED = ["testing/runner.js", "testing/cli-driver.js", "testing/parent-watch.js"];
const modules = (readdirSync(dist, { recursive: true }) as string[])
  .filter((file) => file.endsWith(".js"))
  .map((file) => file.split("\\").join("/"))
  .sort();

describe(`the built package on Node.js ${process.version}`, () => {
  it("runs on a Node.js that package.json's engines allow", () => {
    const { engines } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { engines: { node: string } };
    const minimum = engines.node.match(/^>=(\d+)\.(\d+)\.(\d+)$/);
    expect(minimum, `engines.node is ${engines.node}`).not.toBeNull();
    const [major, minor, patch] = process.versions.node.split(".").map(Number) as [number, number, number];
    const [, wantMajor, wantMinor, wantPatch] = minimum!.map(Number) as [number, number, number, number];
    expect(major * 1e6 + minor * 1e3 + patch).toBeGreaterThanOrEqual(wantMajor * 1e6 + wantMinor * 1e3 + wantPatch);
  });

  it.each(modules.filter((file) => !(file in COMMANDS) && !FORKED.includes(file)))("loads %s", async (file) => {
    const loaded = (await import(join(dist, file))) as Record<string, unknown>;
    expect(loaded, relative(root, join(dist, file))).toBeTypeOf("object");
  });

  it("loads undici only for a request and the YAML library only for a parse: a program declaring resources in code loads neither", () => {
    const script = `require(${JSON.stringify(join(dist, "index.js"))});
const loaded = (name) => Object.keys(require.cache).some((path) => path.includes("/node_modules/" + name + "/"));
const before = [loaded("undici"), loaded("yaml")];
require(${JSON.stringify(join(dist, "yaml-file.js"))}).parseYaml("a: 1\\n", "x.yaml", require("zod").z.object({ a: require("zod").z.number() }));
process.stdout.write(JSON.stringify({ before, after: loaded("yaml") }));`;
    const run = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({ before: [false, false], after: true });
  });

  it.each(Object.entries(COMMANDS))("runs %s %s", (file, flag) => {
    const run = spawnSync(process.execPath, [join(dist, file), flag], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(flag === "--help" ? /usage/ : /up to date/);
  });
});
