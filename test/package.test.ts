/**
 * What `npm pack` ships: the tarball a user installs holds the built package, the provider plugin, the
 * schemas, the docs, the license and the changelog, and nothing of the repository's own (tests, sources,
 * scripts, the project's Pulumi CLI, databases). It packs the tree as it is, `dist/` built by the test
 * run's global setup; `--ignore-scripts` keeps `prepare` from building it a second time.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const root = join(__dirname, "..");

/** The files `npm pack` would put in the tarball, as paths relative to the package. */
function packedFiles(): string[] {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const output = execFileSync(npm, ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 20_000,
  });
  const [pack] = JSON.parse(output) as { files: { path: string }[] }[];
  return pack!.files.map((file) => file.path.split("\\").join("/")).sort();
}

describe("the npm tarball", () => {
  let files: string[];
  beforeAll(() => {
    files = packedFiles();
  });

  it("holds what a user needs: the built package, the plugin, the schemas, the docs, the license and the changelog", () => {
    for (const file of [
      "package.json",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/plugin/main.js",
      "schema.json",
      "docs/reference.md",
      "docs/workspace-yaml.md",
      "README.md",
      "LICENSE",
      "CHANGELOG.md",
      "src/workspace/workspace.schema.json",
    ])
      expect(files, file).toContain(file);
  });

  it("holds every file package.json points a user at: main, types, each command and each export", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      main: string;
      types: string;
      bin: Record<string, string>;
      exports: Record<string, string>;
    };
    const targets = [manifest.main, manifest.types, ...Object.values(manifest.bin), ...Object.values(manifest.exports)]
      .filter((target) => !target.includes("*"))
      .map((target) => target.replace(/^\.\//, ""));
    for (const target of targets) expect(files, target).toContain(target);
    // The shims a stored state names (`pulumi-gms/dist/shims/<kind>.js`, see test/fixtures/state-v0.1.0).
    expect(files.filter((file) => /^dist\/shims\/[^/]+\.js$/.test(file)).length).toBeGreaterThan(0);
  });

  it("installs the commands pulumi-gms and its gms-emulator alias, each a Node.js script, and no provider plugin", () => {
    // No `pulumi-resource-gms`: npm puts node_modules/.bin first on PATH for npx and npm scripts, where the engine would
    // take it over the release's plugin of the SDK's version (test/release/npx-plugin.test.ts).
    const { bin } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: Record<string, string> };
    expect(bin).toEqual({ "pulumi-gms": "dist/cli/main.js", "gms-emulator": "dist/emulator/cli.js" });
    // npm links each as it is: without the line, the shell would run the JavaScript itself.
    for (const target of Object.values(bin)) expect(readFileSync(join(root, target), "utf8"), target).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it("holds the source of the program converter that discover --language runs with Go, without its tests", () => {
    const converter = files.filter((file) => file.startsWith("scripts/examplegen/"));
    expect(converter).toEqual(
      expect.arrayContaining(["scripts/examplegen/go.mod", "scripts/examplegen/go.sum", "scripts/examplegen/main.go"]),
    );
    expect(converter.filter((file) => !/\.go$|\/go\.(mod|sum)$/.test(file) || file.endsWith("_test.go"))).toEqual([]);
  });

  it("holds nothing of the repository's own: no tests, TypeScript sources, other scripts, Pulumi CLI or databases", () => {
    const unwanted = files.filter(
      (file) =>
        file.startsWith("test/") ||
        (file.startsWith("scripts/") && !file.startsWith("scripts/examplegen/")) ||
        file.startsWith("examples/") ||
        file.startsWith("node_modules/") ||
        file.endsWith(".tsbuildinfo") ||
        file.split("/").includes(".pulumi-cli") ||
        (file.startsWith("src/") && file !== "src/workspace/workspace.schema.json") ||
        (/\.(c|m)?ts$/.test(file) && !/\.d\.(c|m)?ts$/.test(file)) ||
        /\.(sqlite|db|db-journal|db-wal|db-shm)$/.test(file) ||
        file.split("/").some((part) => part === ".vitest-tmp" || part === ".tmp"),
    );
    expect(unwanted).toEqual([]);
  });
});
