/**
 * docs/python.md's `driver.py` and docs/go.md's `main.go`, as the pages give them, on the real Pulumi CLI, as
 * typescript-driver.test.ts holds docs/typescript.md's: beside a program of the test's own (it makes nothing, or fails
 * on purpose with a key in its error), in a fresh folder with a file backend. A wrong command line and a missing
 * setting exit 2 without the CLI; a preview that succeeds exits 0; a `pulumi config set-all` refused (the stack's
 * secrets sealed with another passphrase) and a program that fails exit 1, saying which operation failed, and no key
 * shows in anything printed (the driver masks each key in the error it prints, as the CLI masks the stack's secrets in
 * its own output). Each language skips, saying why, without its toolchain (python3 with venv and `pulumi` from the
 * package index; go and the Pulumi Go SDK), or without the real CLI (required under CI=true, with the toolchains).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { PULUMI_PYTHON, run } from "../release/scenario";
import { type Run, spawned } from "./spawned";

const FILE = "examples/page-drivers.test.ts";
const ROOT = join(__dirname, "..", "..");
const cli = pulumiCliFor(FILE);
const API_KEY = "gms_page_driver_test_key";
const OPENAI_KEY = "sk-page-driver-test-key";
/** A virtual environment or a build, then four runs of the CLI, on a busy 2-core machine. */
const TIMEOUT = 300_000;

/** The page's file block of `file` (a fence tagged `<language> <file>`). */
const pageFile = (page: string, file: string): string =>
  new RegExp(`^\`\`\`\\w+ ${file.replace(".", "\\.")}\n([\\s\\S]*?)^\`\`\`$`, "m").exec(
    readFileSync(join(ROOT, "docs", page), "utf8"),
  )![1]!;

interface PageDriver {
  language: string;
  page: string;
  /** Makes the driver and the program in `dir`; answers the command that runs the driver, or why it cannot be made. */
  prepare(dir: string): Promise<string[] | string>;
}

const DRIVERS: PageDriver[] = [
  {
    language: "Python",
    page: "python.md",
    async prepare(dir) {
      writeFileSync(join(dir, "driver.py"), pageFile("python.md", "driver.py"));
      writeFileSync(
        join(dir, "__main__.py"),
        'import os\n\nif os.environ.get("FAIL_PROGRAM"):\n    raise Exception("the program failed on purpose with " + os.environ["OPENAI_KEY"])\n',
      );
      try {
        await run("python3", ["-m", "venv", join(dir, "venv")], { cwd: dir, env: process.env });
        const pip = ["install", "--quiet", "--disable-pip-version-check", `pulumi==${PULUMI_PYTHON}`];
        await run(join(dir, "venv", "bin", "pip"), pip, { cwd: dir, env: process.env });
      } catch (error) {
        return `python3 could not make a virtual environment with pulumi ${PULUMI_PYTHON}: ${(error as Error).message}`;
      }
      return [join(dir, "venv", "bin", "python"), "driver.py"];
    },
  },
  {
    language: "Go",
    page: "go.md",
    async prepare(dir) {
      // The Pulumi Go SDK the repository's Go tools are built on.
      const sdk = /github\.com\/pulumi\/pulumi\/sdk\/v3 v\S+/.exec(readFileSync(join(ROOT, "scripts", "examplegen", "go.mod"), "utf8"))![0];
      writeFileSync(join(dir, "go.mod"), `module gms-page-driver\n\ngo 1.24\n\nrequire ${sdk}\n`);
      writeFileSync(join(dir, "main.go"), pageFile("go.md", "main.go"));
      writeFileSync(
        join(dir, "program.go"),
        `package main

import (
	"errors"
	"os"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func program(ctx *pulumi.Context) error {
	if os.Getenv("FAIL_PROGRAM") != "" {
		return errors.New("the program failed on purpose with " + os.Getenv("OPENAI_KEY"))
	}
	return nil
}
`,
      );
      try {
        await run("go", ["mod", "tidy"], { cwd: dir, env: process.env });
        await run("go", ["build", "-o", "driver", "."], { cwd: dir, env: process.env });
      } catch (error) {
        return `the page's main.go does not build here: ${(error as Error).message}`;
      }
      return [join(dir, "driver")];
    },
  },
];

/** Whether `command` runs here at all (its toolchain is installed). */
const runs = async (command: string, args: string[]) =>
  (await spawned(command, args, ROOT, process.env).catch(() => undefined))?.code === 0;

describe.skipIf(!cli).each(DRIVERS)(`docs/$page's driver on the real CLI: ${cliName(cli)}`, (driver) => {
  let dir: string;
  let command: string[] | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `gms-page-driver-${driver.language.toLowerCase()}-`));
    const toolchain = driver.language === "Python" ? await runs("python3", ["-c", "import venv"]) : await runs("go", ["version"]);
    if (!toolchain) {
      console.log(
        `${FILE}: skipping ${driver.page}'s driver: ${driver.language === "Python" ? "python3 with venv" : "go"} does not run here`,
      );
      return;
    }
    const prepared = await driver.prepare(dir);
    if (typeof prepared === "string") {
      if (process.env.CI === "true") throw new Error(`${FILE}: ${prepared}`);
      console.log(`${FILE}: skipping ${driver.page}'s driver: ${prepared}`);
      return;
    }
    command = prepared;
    mkdirSync(join(dir, "state"));
  }, TIMEOUT);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const env = (settings: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
    PATH: [cli!.dir, ...(process.env.PATH ?? "").split(delimiter)].join(delimiter),
    HOME: process.env.HOME,
    PULUMI_HOME: join(dir, "pulumi-home"),
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_BACKEND_URL: `file://${join(dir, "state")}`,
    PULUMI_CONFIG_PASSPHRASE: "the test's passphrase",
    GMS_BASE_URL: "http://127.0.0.1:9/v1",
    GMS_API_KEY: API_KEY,
    OPENAI_KEY,
    ...settings,
  });
  const drive = (args: string[], settings: NodeJS.ProcessEnv = {}) =>
    spawned(command![0]!, [...command!.slice(1), ...args], dir, env(settings));
  const noKey = (run: Run) => {
    for (const key of [API_KEY, OPENAI_KEY]) expect(run.printed, run.printed).not.toContain(key);
  };

  it("exits 2 for a wrong operation and for a missing setting; 0 from a preview; " +
    "1, masking every key, when the configuration is refused or the program fails", {
    timeout: TIMEOUT,
  }, async (context) => {
    if (!command) return context.skip();
    const wrong = await drive(["deploy"]);
    expect(wrong.code, wrong.printed).toBe(2);
    expect(wrong.printed).toMatch(/^usage: .*preview\|up\|destroy \(got deploy\)$/m);
    const missing = await drive(["up"], { GMS_BASE_URL: undefined });
    expect(missing).toEqual({ code: 2, printed: "GMS_BASE_URL is not set\n" });

    const preview = await drive(["preview"]);
    expect(preview.code, preview.printed).toBe(0);
    noKey(preview);

    // The stack's secrets are sealed with another passphrase: `pulumi config set-all --secret ...` is refused.
    const refused = await drive(["preview"], { PULUMI_CONFIG_PASSPHRASE: "another passphrase" });
    expect(refused.code, refused.printed).toBe(1);
    expect(refused.printed).toMatch(/^preview failed: /m);
    noKey(refused);

    const failed = await drive(["up"], { FAIL_PROGRAM: "1" });
    expect(failed.code, failed.printed).toBe(1);
    expect(failed.printed).toMatch(/^up failed: /m);
    expect(failed.printed).toContain("the program failed on purpose with [secret]");
    noKey(failed);
  });
});
