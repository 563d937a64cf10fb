/**
 * docs/typescript.md's `driver.ts`, as the page gives it, on the real Pulumi CLI: in a fresh folder with the package
 * installed as a copy, beside an `index.ts` of the test's own on the dynamic resources (no plugin to download), against
 * an emulator of the test's own. An `up` that succeeds exits 0 and prints the outputs; one that fails exits 1 and
 * says which operation failed, whatever failed: the service refusing a create (with the page's earlier driver, exit
 * code 0: the error reached the Automation API's handler of the program's uncaught errors), the program throwing, an
 * error raised in the program after it returned, or `pulumi config set-all` refused (whose command line holds the
 * keys). No key shows in anything printed. A wrong command line exits
 * 2 without the CLI. And the page's quote of the CLI's refusal of a `runtime: nodejs` project without the Node.js
 * language host is what the CLI prints. Skipped, saying why, without the real CLI (required under CI=true).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { cliName, makeProgramDir, pulumiCliFor } from "../pulumi-cli/harness";
import { type Run, spawned } from "./spawned";

const FILE = "examples/typescript-driver.test.ts";
const cli = pulumiCliFor(FILE);
const page = readFileSync(join(__dirname, "..", "..", "docs", "typescript.md"), "utf8");
const driver = /^```ts driver\.ts\n([\s\S]*?)^```$/m.exec(page)![1]!;
const API_KEY = "gms_driver_test_key";
const OPENAI_KEY = "sk-driver-test-key";
const TIMEOUT = 300_000;

/** A program on the dynamic resources: an App, whose GUID it exports, and `more` after it. */
const program = (more = "") =>
  `import * as gms from "pulumi-gms";\n\nconst app = new gms.App("support", { name: "Driver test" });\n${more}\nexport const appGuid = app.id;\n`;

/** `node driver.ts <args>` in `cwd`, on the Node.js the tests run on. */
const node = (cwd: string, args: string[], env: NodeJS.ProcessEnv) => spawned(process.execPath, ["driver.ts", ...args], cwd, env);

describe("docs/typescript.md's driver.ts, its command line", () => {
  let dir: string;
  beforeAll(() => {
    dir = makeProgramDir("gms-driver-usage", program());
    writeFileSync(join(dir, "driver.ts"), driver);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses an unknown operation, and a setting missing from the environment, with 2", async () => {
    const unknown = await node(dir, ["deploy"], { PATH: process.env.PATH });
    expect(unknown).toEqual({ code: 2, printed: "usage: node driver.ts preview|up|destroy (got deploy)\n" });
    const missing = await node(dir, ["up"], { PATH: process.env.PATH });
    expect(missing).toEqual({ code: 2, printed: "GMS_BASE_URL is not set\n" });
  });
});

describe.skipIf(!cli)(`docs/typescript.md's driver.ts on the real CLI: ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let root: string;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, db: ":memory:", apiKey: API_KEY });
    root = makeProgramDir("gms-driver-cli");
  });
  afterAll(async () => {
    await emulator?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /**
   * A folder of its own under `root` (whose node_modules it finds, as Node.js looks up the folders), with the page's
   * driver and `index.ts`; what it returns runs the driver there.
   */
  function project(name: string, index: string) {
    const dir = join(root, name);
    mkdirSync(join(dir, "state"), { recursive: true });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }));
    writeFileSync(join(dir, "driver.ts"), driver);
    writeFileSync(join(dir, "index.ts"), index);
    const env = (settings: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
      PATH: [cli!.dir, dirname(process.execPath), ...(process.env.PATH ?? "").split(delimiter)].join(delimiter),
      HOME: process.env.HOME,
      PULUMI_HOME: join(root, "pulumi-home"),
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_BACKEND_URL: `file://${join(dir, "state")}`,
      PULUMI_CONFIG_PASSPHRASE: "the test's passphrase",
      GMS_BASE_URL: emulator.url,
      GMS_API_KEY: API_KEY,
      OPENAI_KEY,
      ...settings,
    });
    return (operation: string, settings: NodeJS.ProcessEnv = {}) => node(dir, [operation], env(settings));
  }

  it("is what a plain `pulumi up` needs the Node.js host for, which a CLI without it refuses in the words the page quotes", {
    timeout: TIMEOUT,
  }, async () => {
    const quoted = /a CLI without\s+it stops with `([^`]+)`/.exec(page)?.[1]?.replace(/\s+/g, " ");
    expect(quoted).toMatch(/^error: .*pulumi-language-nodejs/);
    const dir = join(root, "no-host");
    mkdirSync(join(dir, "state"), { recursive: true });
    writeFileSync(join(dir, "Pulumi.yaml"), "name: no-host\nruntime: nodejs\n");
    writeFileSync(join(dir, "index.ts"), program());
    // The CLI's folder holds no pulumi-language-nodejs (nor does the rest of PATH: checked).
    const env = {
      PATH: [cli!.dir, "/usr/bin", "/bin"].join(delimiter),
      HOME: process.env.HOME,
      PULUMI_HOME: join(root, "pulumi-home"),
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_BACKEND_URL: `file://${join(dir, "state")}`,
      PULUMI_CONFIG_PASSPHRASE: "the test's passphrase",
    };
    const shell = (script: string) => spawned("bash", ["-c", script], dir, env);
    expect((await shell("command -v pulumi-language-nodejs")).code).not.toBe(0);
    const up = await shell("pulumi stack init dev && pulumi up --yes --non-interactive");
    expect(up.code, up.printed).not.toBe(0);
    expect(up.printed).toContain(`${quoted}\n`);
  });

  const noKey = (run: Run) => {
    for (const key of [API_KEY, OPENAI_KEY, "gms_wrong_key"]) expect(run.printed, run.printed).not.toContain(key);
  };

  it("exits 0 from an up that succeeds, printing the outputs, the App's GUID among them", { timeout: TIMEOUT }, async () => {
    const run = await project("succeeds", program())("up");
    expect(run.code, run.printed).toBe(0);
    expect(run.printed).toMatch(/^\{"appGuid":"[0-9a-f-]{36}"\}$/m);
    noKey(run);
  });

  it.for([
    ["the service refuses the create (a wrong API key)", program(), { GMS_API_KEY: "gms_wrong_key" }],
    ["the program throws", program('throw new Error("the program failed on purpose");'), {}],
    [
      "an error raised in the program after it returned",
      program('app.id.apply(() => {\n  throw new Error("an apply failed on purpose");\n});'),
      {},
    ],
  ] as const)("exits 1 from an up that fails when %s, saying so", { timeout: TIMEOUT }, async ([, index, settings], context) => {
    const run = await project(`fails-${context.task.id}`, index)("up", settings);
    expect(run.code, run.printed).toBe(1);
    expect(run.printed).toMatch(/^up failed: /m);
    noKey(run);
  });

  it("exits 1 when the stack's configuration cannot be set, with every key masked in the command line it prints", {
    timeout: TIMEOUT,
  }, async () => {
    const driver = project("config-refused", program());
    const first = await driver("preview");
    expect(first.code, first.printed).toBe(0);
    // The stack's secrets are sealed with another passphrase: `pulumi config set-all --secret ...` is refused.
    const refused = await driver("preview", { PULUMI_CONFIG_PASSPHRASE: "another passphrase" });
    expect(refused.code, refused.printed).toBe(1);
    expect(refused.printed).toMatch(/^preview failed: /m);
    expect(refused.printed).toContain("gms:apiKey=[secret]");
    noKey(refused);
  });
});
