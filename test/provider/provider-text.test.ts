/**
 * Every resource's `__provider` is written without Pulumi's closure serializer when the shim module is
 * installed below node_modules (src/provider/provider-text.ts). The text must be exactly what the
 * serializer makes, or every resource of an existing stack would see its `__provider` change: this runs
 * both, for every kind, in a program directory with the package installed as a user has it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installPackageCopy } from "../../src/testing";

describe("the __provider text", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "gms-provider-text-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "provider-text", private: true }));
    installPackageCopy(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("equals the closure serializer's for every kind when the package is installed", () => {
    const kinds = readdirSync(join(dir, "node_modules/pulumi-gms/dist/shims")).filter((file) => file.endsWith(".js"));
    expect(kinds.length).toBeGreaterThanOrEqual(9);
    writeFileSync(
      join(dir, "compare.cjs"),
      `const pulumi = require("@pulumi/pulumi");
const { requireText } = require("./node_modules/pulumi-gms/dist/provider/provider-text.js");
(async () => {
  const results = {};
  for (const file of ${JSON.stringify(kinds)}) {
    const provider = require("pulumi-gms/dist/shims/" + file);
    const serialized = (await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true })).text;
    results[file] = { serialized, written: requireText(provider) };
  }
  process.stdout.write(JSON.stringify(results));
})();
`,
    );
    const results = JSON.parse(execFileSync(process.execPath, ["compare.cjs"], { cwd: dir, encoding: "utf8" })) as Record<
      string,
      { serialized: string; written: string }
    >;
    for (const file of kinds) {
      expect(results[file]!.serialized).toContain(`require("pulumi-gms/dist/shims/${file}")`);
      expect(results[file]!.written).toBe(results[file]!.serialized);
    }
  });

  it("is left to the serializer, with one warning naming the fix, when the program reaches a checkout by path", () => {
    const checkout = join(__dirname, "../../dist/shims/app.js");
    writeFileSync(
      join(dir, "by-path.cjs"),
      `const { requireText, providerText } = require(${JSON.stringify(join(__dirname, "../../dist/provider/provider-text.js"))});
const app = require(${JSON.stringify(checkout)});
process.stdout.write(String(requireText(app)));
providerText(app);
providerText(require(${JSON.stringify(join(__dirname, "../../dist/shims/workflow.js"))}));`,
    );
    const run = spawnSync(process.execPath, ["by-path.cjs"], { cwd: dir, encoding: "utf8" });
    expect(run.stdout).toBe("undefined");
    expect(run.stderr.match(/not installed below this program's node_modules/g)).toHaveLength(1);
    expect(run.stderr).toMatch(/npm install --install-links/);
  });

  it("is the same one-line require for a linked install (node_modules/pulumi-gms a link to a checkout), which loads", () => {
    const linkedDir = mkdtempSync(join(tmpdir(), "gms-provider-text-linked-"));
    try {
      writeFileSync(join(linkedDir, "package.json"), JSON.stringify({ name: "provider-text-linked", private: true }));
      mkdirSync(join(linkedDir, "node_modules"));
      symlinkSync(join(__dirname, "..", ".."), join(linkedDir, "node_modules", "pulumi-gms"), "dir");
      writeFileSync(
        join(linkedDir, "linked.cjs"),
        `const { requireText } = require("./node_modules/pulumi-gms/dist/provider/provider-text.js");
const text = requireText(require("pulumi-gms/dist/shims/app.js"));
const loaded = new Function("exports", "require", text);
const exported = {};
loaded(exported, require);
process.stdout.write(JSON.stringify({ text, loads: typeof exported.handler().create === "function" }));`,
      );
      const out = JSON.parse(execFileSync(process.execPath, ["linked.cjs"], { cwd: linkedDir, encoding: "utf8" }));
      expect(out.text).toContain('const provider = require("pulumi-gms/dist/shims/app.js");');
      expect(out.text.length).toBeLessThan(400);
      expect(out.loads).toBe(true);
    } finally {
      rmSync(linkedDir, { recursive: true, force: true });
    }
  });
});
