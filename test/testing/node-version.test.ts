/**
 * LocalEngine refuses a Node.js older than the package needs before it starts anything, naming both versions
 * and how to get the one it needs (issue 22: a program of one's own on Node 20 met a raw ERR_UNKNOWN_FILE_EXTENSION).
 * The check is unit-tested, and run for real under an older `node` on PATH when the machine has one.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NODE_NEEDED, nodeTooOld } from "../../src/node-version";
import { EngineError } from "../../src/testing";
import { requireNode } from "../../src/testing/engine";

const ROOT = join(__dirname, "..", "..");
const pathNode = spawnSync("node", ["-p", "process.versions.node"], {
  encoding: "utf8",
  env: { ...process.env, PATH: "/usr/local/bin:/usr/bin:/bin" },
});
const olderNode = pathNode.status === 0 && nodeTooOld(pathNode.stdout.trim()) ? pathNode.stdout.trim() : undefined;
if (!olderNode)
  console.log(
    `node-version.test.ts: no Node.js older than ${NODE_NEEDED} on /usr/local/bin:/usr/bin:/bin, so the run under one is skipped`,
  );

describe("the Node.js LocalEngine needs", () => {
  it("tells an older version from a new enough one", () => {
    expect(["20.20.2", "22.18.9", "18.0.0"].map((version) => nodeTooOld(version))).toEqual([true, true, true]);
    expect(["22.19.0", "22.20.1", "24.21.0", "25.0.0"].map((version) => nodeTooOld(version))).toEqual([false, false, false, false]);
  });

  it("refuses an older one with NODE_TOO_OLD, naming both versions and the way out", () => {
    const error = (() => {
      try {
        requireNode("20.20.2");
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ code: "NODE_TOO_OLD" });
    expect((error as Error).message).toMatch(/v20\.20\.2.*22\.19\.0 or later.*npx -p node@22/);
    expect(() => requireNode("22.19.0")).not.toThrow();
  });

  it.skipIf(!olderNode)("is what an up on an older node prints, before anything starts", () => {
    const dir = mkdtempSync(join(tmpdir(), "gms-old-node-"));
    try {
      writeFileSync(join(dir, "index.ts"), `import * as gms from "pulumi-gms"; new gms.App("a", { name: "A" });\n`);
      const script = `const { LocalEngine } = require(${JSON.stringify(join(ROOT, "dist", "testing"))});
new LocalEngine({ programDir: ${JSON.stringify(dir)}, stateFile: ${JSON.stringify(join(dir, "state.json"))}, project: "p", stack: "s" })
  .up().then(() => process.exit(0), (error) => { console.log(JSON.stringify({ code: error.code, message: error.message })); process.exit(3); });`;
      const run = spawnSync("node", ["-e", script], { encoding: "utf8", env: { ...process.env, PATH: "/usr/local/bin:/usr/bin:/bin" } });
      expect(run.status, run.stderr).toBe(3);
      const { code, message } = JSON.parse(run.stdout) as { code: string; message: string };
      expect(code).toBe("NODE_TOO_OLD");
      expect(message).toContain(`v${olderNode}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
