/**
 * examples/smoke: `npm run smoke`'s script run as the README says (after the build the global setup
 * makes): every check passes and it exits 0; with fixtures whose Action renders another text, the checks
 * on the text fail, the rest still run (destroy included) and it exits 1. Neither run prints a secret.
 * Also: the script and the example program type-check.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { typeCheckProgram, typeCheckScript } from "./type-check";
import { installPackageCopy } from "../../src/testing";

const ROOT = join(__dirname, "..", "..");
const SMOKE = join(ROOT, "examples", "smoke");
/** The secrets the script holds: the fixtures' API key and the provider key it deploys. */
const SECRETS = ["gms_smoke_key", "sk-smoke-"];
const CHECKS = [
  "deploy",
  "read back",
  "run synchronous",
  "run environments",
  "run streaming",
  "run asynchronous",
  "session",
  "feedback",
  "destroy",
];

/** Runs the script with Node 24 from the repository root; its exit code and everything it printed. */
async function smoke(...args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [join(SMOKE, "smoke.mts"), ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((done) => child.on("close", done));
  return { code, output };
}

/** Each check's verdict, by the check's name, from the `PASS  name: ...` / `FAIL  name: ...` lines. */
const verdicts = (output: string) =>
  Object.fromEntries([...output.matchAll(/^(PASS|FAIL) {2}([^:]+): /gm)].map((match) => [match[2], match[1]]));

describe("npm run smoke", () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "gms-smoke-test-"));
  });
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("deploys, runs the Action every way, in a Session, leaves Feedback, destroys: every check passes, exit 0", async () => {
    const { code, output } = await smoke();
    expect(code, output).toBe(0);
    expect(verdicts(output)).toEqual(Object.fromEntries(CHECKS.map((name) => [name, "PASS"])));
    for (const line of [
      /^PASS {2}deploy: 4 resources created \(App, ProviderConnection, Model, Dataset\); Action Greet looked up$/m,
      /^PASS {2}read back: App, connection \(key not answered\), Model linked to it, Dataset of 2 Data records$/m,
      /^PASS {2}run synchronous: "Hello Linus, welcome to Helsinki\.", logged as Data [0-9a-f-]{36} \(Production\)$/m,
      /^PASS {2}run streaming: 5 tokens, then END_STREAM; joined they are the text$/m,
      /^PASS {2}run asynchronous: generation [0-9a-f-]{36} read at its result URL: SUCCESS, with the text$/m,
      /^PASS {2}destroy: 4 resources deleted; each answers 404$/m,
      /^smoke: 9 of 9 checks passed$/m,
    ]) {
      expect(output).toMatch(line);
    }
    for (const secret of SECRETS) expect(output).not.toContain(secret);
  }, 120_000);

  it("reports each failing check, still runs the rest and destroys, and exits 1", async () => {
    // The same fixtures, but the Action renders another text than the one the smoke test expects.
    const fixtures = join(work, "fixtures.yaml");
    const original = readFileSync(join(SMOKE, "fixtures.yaml"), "utf8");
    const changed = original.replace('prompt: "Hello {{name}}, welcome to {{place}}."', 'prompt: "Goodbye {{name}}, from {{place}}."');
    expect(changed).not.toBe(original);
    writeFileSync(fixtures, changed);

    const { code, output } = await smoke("--fixtures", fixtures);
    expect(code, output).toBe(1);
    expect(verdicts(output)).toEqual({
      deploy: "PASS",
      "read back": "PASS",
      "run synchronous": "FAIL",
      "run environments": "FAIL",
      "run streaming": "FAIL",
      "run asynchronous": "FAIL",
      session: "FAIL",
      feedback: "PASS",
      destroy: "PASS",
    });
    expect(output).toContain('FAIL  run synchronous: msg is "Goodbye Linus, from Helsinki.", expected "Hello Linus, welcome to Helsinki."');
    expect(output).toMatch(/^smoke: 4 of 9 checks passed, 5 failed$/m);
    for (const secret of SECRETS) expect(output).not.toContain(secret);
  }, 120_000);

  it("a --fixtures without a file is a usage error (exit 2)", async () => {
    const { code, output } = await smoke("--fixtures");
    expect(code).toBe(2);
    expect(output).toBe("usage: node examples/smoke/smoke.mts [--keep] [--fixtures FILE]\n");
  });

  it("its script type-checks (it imports the package by its own name, as a user's code would)", () => {
    const { output, status } = typeCheckScript(join(SMOKE, "smoke.mts"));
    expect(output).toBe("");
    expect(status).toBe(0);
  }, 60_000);

  it("the example program type-checks with its own tsconfig.json against the installed package", () => {
    const programDir = join(work, "program");
    cpSync(join(SMOKE, "program"), programDir, { recursive: true });
    installPackageCopy(programDir);
    const { output, status } = typeCheckProgram(programDir);
    expect(output).toBe("");
    expect(status).toBe(0);
  }, 60_000);
});
