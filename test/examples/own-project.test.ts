/**
 * docs/typescript.md's "Offline, with no Pulumi CLI", run as written on every `npm test`: the files the page has
 * written by the end of that section (each file block, the last one of a name winning, as a reader following the page
 * has them: the program on the dynamic resources with its lookups, fixtures.yaml, returns.md and run.mjs) in a fresh
 * folder where the package is installed as a copy (what `npm install` leaves; the registry is not involved), run by the
 * section's commands with the Node.js the tests run on. The first run creates the seven objects and prints the line the
 * page shows; the second changes nothing. Every TypeScript block of the page also type-checks, strict, against the
 * installed package, as in a user's editor. (test/release/getting-started.test.ts runs the whole page on the real CLI.)
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installPackageCopy } from "../../src/testing";
import { typeCheckStrict } from "./type-check";

const ROOT = join(__dirname, "..", "..");
const page = readFileSync(join(ROOT, "docs", "typescript.md"), "utf8");
const HEADING = "## Offline, with no Pulumi CLI\n";
const sectionEnd = page.indexOf("\n## ", page.indexOf(HEADING) + HEADING.length);
const section = page.slice(page.indexOf(HEADING), sectionEnd);

/** The page's file blocks (a fence tagged with a language and a file name) before `end`, in order. */
const fileBlocks = (end: number) =>
  [...page.slice(0, end).matchAll(/^```(\w+) (\S+)\n([\s\S]*?)^```$/gm)].map(([, tag, file, body]) => ({
    tag: tag!,
    file: file!,
    body: body!,
  }));

describe("docs/typescript.md: offline, with no Pulumi CLI", () => {
  const dir = mkdtempSync(join(tmpdir(), "gms-own-project-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("has the section, whose commands run run.mjs", () => {
    expect(section.startsWith(HEADING)).toBe(true);
    const commands = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap(([, body]) => body!.trim().split("\n"));
    expect(commands).toEqual(["node run.mjs", "node run.mjs"]);
  });

  it("runs the program as the page leaves it through the section's driver: created 7, then nothing changes", () => {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "gms-start", version: "1.0.0", type: "module" }));
    installPackageCopy(dir);
    const files = new Map(fileBlocks(sectionEnd).map(({ file, body }) => [file, body]));
    expect([...files.keys()].sort()).toEqual(["driver.ts", "fixtures.yaml", "index.ts", "returns.md", "run.mjs"]);
    expect(files.get("index.ts")).toContain("new gms.App(");
    for (const [file, body] of files) writeFileSync(join(dir, file), body);
    const run = () =>
      spawnSync(process.execPath, ["run.mjs"], { cwd: dir, encoding: "utf8", env: { ...process.env, PULUMI_CONFIG_PASSPHRASE: "" } });
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/created 7, unchanged 0; appGuid [0-9a-f-]{36}/);
    expect(section).toContain("`created 7, unchanged 0; appGuid <guid>`");
    const second = run();
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/created 0, unchanged 7; appGuid [0-9a-f-]{36}/);
    expect(section).toContain("`created 0, unchanged 7`");
    for (const secret of ["sk-not-a-real-key", "gms_start_key"]) expect(`${first.stdout}${second.stdout}`).not.toContain(secret);
  }, 180_000);

  it("type-checks every TypeScript block of the page, strict, against the installed package", () => {
    const checked = join(dir, "type-check");
    mkdirSync(checked);
    writeFileSync(join(checked, "package.json"), JSON.stringify({ name: "gms-start", version: "1.0.0", type: "module" }));
    installPackageCopy(checked);
    const blocks = fileBlocks(page.length).filter(({ tag }) => tag === "ts");
    expect(blocks.map(({ file }) => file)).toEqual(["index.ts", "driver.ts", "index.ts", "index.ts"]);
    blocks.forEach(({ file, body }, index) => {
      mkdirSync(join(checked, `block-${index}`));
      writeFileSync(join(checked, `block-${index}`, file), body);
    });
    const { output, status } = typeCheckStrict(checked, ["block-*/*.ts"]);
    expect(output).toBe("");
    expect(status).toBe(0);
  }, 120_000);
});
