/**
 * README's "Use it in your project", run as written: its `index.ts` and `run.mjs` code blocks are taken from
 * README itself and run in a fresh folder where the package is installed as a copy (what `npm install` of the
 * tarball leaves; the registry is not involved), with the Node.js the tests run on. The first run creates the App
 * and the Workflow and prints the line README shows; the second changes nothing. The folder is removed after.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installPackageCopy } from "../../src/testing";

const ROOT = join(__dirname, "..", "..");
const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const section = readme.slice(readme.indexOf("## Use it in your project"), readme.indexOf("## Where to go next"));
/** The code block whose info string names `file` (```ts index.ts). */
const block = (file: string): string => {
  const found = new RegExp(`\`\`\`\\w+ ${file.replace(".", "\\.")}\\n([\\s\\S]*?)\`\`\``).exec(section);
  if (!found) throw new Error(`README's "Use it in your project" has no code block for ${file}`);
  return found[1]!;
};

describe("README: use it in your project", () => {
  const dir = mkdtempSync(join(tmpdir(), "gms-own-project-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("runs the program through the driver as written: created 2, then nothing changes", () => {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "my-workspace", version: "1.0.0", type: "module" }));
    installPackageCopy(dir);
    writeFileSync(join(dir, "index.ts"), block("index.ts"));
    writeFileSync(join(dir, "run.mjs"), block("run.mjs"));
    const run = () =>
      spawnSync(process.execPath, ["run.mjs"], { cwd: dir, encoding: "utf8", env: { ...process.env, PULUMI_CONFIG_PASSPHRASE: "" } });
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/created 2, unchanged 0; appGuid [0-9a-f-]{36}/);
    const second = run();
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/created 0, unchanged 2; appGuid [0-9a-f-]{36}/);
  }, 120_000);
});
