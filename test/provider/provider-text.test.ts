/**
 * Every resource's `__provider` is written without Pulumi's closure serializer when the shim module is
 * installed below node_modules (src/provider/provider-text.ts). The text must be exactly what the
 * serializer makes, or every resource of an existing stack would see its `__provider` change: this runs
 * both, for every kind, in a program directory with the package installed as a user has it.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
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

  it("is left to the serializer when the shim is not below node_modules (a linked checkout)", () => {
    const linked = join(__dirname, "../../dist/shims/app.js");
    writeFileSync(
      join(dir, "linked.cjs"),
      `const { requireText } = require("./node_modules/pulumi-gms/dist/provider/provider-text.js");
process.stdout.write(String(requireText(require(${JSON.stringify(linked)}))));`,
    );
    expect(execFileSync(process.execPath, ["linked.cjs"], { cwd: dir, encoding: "utf8" })).toBe("undefined");
  });
});
