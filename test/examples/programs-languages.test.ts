import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { type InstalledPlugin, installPlugin, releaseFor } from "../release/harness";
import { run, withPath } from "../release/scenario";
import { type DrivenProgram, type Driver, LANGUAGE_DRIVERS, PROGRAM_FILES } from "./drivers";
import {
  checkExampleLifecycle,
  copyExampleFiles,
  EXAMPLES,
  type ExampleProject,
  exampleProject,
  inlineGoProgram,
  PROGRAMS,
  stackConfig,
  stackOutputsOf,
  startExampleEmulator,
} from "./programs-harness";

const FILE = "examples/programs-languages.test.ts";
const release = releaseFor(FILE);
const cli = release && pulumiCliFor(FILE);
const STACK = "dev";
/** A venv with pip installs, or a Go build of the Pulumi SDK with a cold cache, on 2 cores. */
const PREPARE_TIMEOUT = 600_000;
/** Four CLI runs of one example (up, export, preview, destroy) while others run beside it. */
const EXAMPLE_TIMEOUT = 300_000;

/** An example as the drivers run it: its generated files beside its Pulumi.yaml. */
const driven = (example: ExampleProject): DrivenProgram => ({
  name: example.name,
  file: (language) => join(example.source, language, PROGRAM_FILES[language]),
});

describe("inlineGoProgram: a generated main.go as a package whose Program a driver runs inline", () => {
  const main = readFileSync(join(PROGRAMS, "app-workflow", "go", "main.go"), "utf8");

  it("keeps the imports and the function given to pulumi.Run, as `Program` of the package named", () => {
    const inlined = inlineGoProgram(main, "app_workflow");
    const run = "pulumi.Run(func(ctx *pulumi.Context) error {\n";
    const body = main.slice(main.indexOf(run) + run.length, main.lastIndexOf("\n\t})\n}"));
    expect(inlined.startsWith("package app_workflow\n")).toBe(true);
    expect(inlined).toContain(main.slice(main.indexOf("import ("), main.indexOf(")\n") + 2));
    expect(inlined).toContain(`func Program(ctx *pulumi.Context) error {\n${body}\n}\n`);
    expect(inlined).not.toContain("func main");
    expect(inlined).not.toMatch(/pulumi\.Run\(/);
    // A compile error in the package names the line of main.go: every line of the body keeps its number.
    const before = main.slice(0, main.indexOf(run) + run.length).split("\n").length - 1;
    expect(
      inlined
        .split("\n")
        .slice(before, before + body.split("\n").length)
        .join("\n"),
    ).toBe(body);
  });

  it("takes every generated main.go of the examples", () => {
    for (const name of EXAMPLES)
      expect(inlineGoProgram(readFileSync(join(PROGRAMS, name, "go", "main.go"), "utf8"), "p"), name).toMatch(/^package p\n/);
  });

  it("fails loudly, saying what it expected, on any other shape", () => {
    const shapes = {
      "another package": main.replace("package main", "package other"),
      "a main that names its function": main.replace("pulumi.Run(func(ctx *pulumi.Context) error {", "pulumi.Run(program)\n\tif false {"),
      "two mains": `${main}\nfunc main() {\n\tpulumi.Run(func(ctx *pulumi.Context) error {\n\t\treturn nil\n\t})\n}\n`,
      "code after main": `${main}\nvar extra = 1\n`,
      "a function before main": main.replace("\nfunc main()", "\nfunc helper() {}\n\nfunc main()"),
    };
    for (const [shape, source] of Object.entries(shapes))
      expect(() => inlineGoProgram(source, "p"), shape).toThrow(/inlineGoProgram: .*generated main\.go is/);
    expect(() => inlineGoProgram(main, "not-a-name")).toThrow(/not a Go package name/);
  });
});

describe.skipIf(!cli)(
  `every example program in TypeScript, Python and Go on the real CLI with the release's plugin: ${cliName(cli)}`,
  () => {
    let root: string;
    beforeAll(() => {
      root = mkdtempSync(join(tmpdir(), "gms-examples-languages-"));
    });
    afterAll(() => {
      if (root) rmSync(root, { recursive: true, force: true });
    });

    for (const language of LANGUAGE_DRIVERS)
      describe(language.name, () => {
        let installed: InstalledPlugin;
        let driver: Driver | undefined;
        let dir: string;

        beforeAll(async () => {
          dir = join(root, language.name.toLowerCase());
          mkdirSync(dir);
          installed = installPlugin(cli!, release!);
          const prepared = await language.prepare(
            dir,
            release!,
            EXAMPLES.map((name) => driven(exampleProject(name))),
          );
          if (typeof prepared === "string") {
            if (process.env.CI === "true") throw new Error(`${FILE}: required under CI=true: ${prepared}`);
            console.log(`${FILE}: skipping the ${language.name} programs: ${prepared}`);
          } else if ("toolchainAbsent" in prepared)
            console.log(`${FILE}: skipping the ${language.name} programs: ${prepared.toolchainAbsent}`);
          else driver = prepared;
        }, PREPARE_TIMEOUT);
        afterAll(() => installed?.remove());

        it.concurrent.for(EXAMPLES)(
          "%s: up makes its objects, a preview finds no change, destroy leaves only the fixtures; no secret shows",
          { timeout: EXAMPLE_TIMEOUT },
          async (name, context) => {
            if (!driver) context.skip();
            const example = exampleProject(name);
            const exampleDir = join(dir, "examples", name);
            mkdirSync(exampleDir, { recursive: true });
            copyExampleFiles(example, exampleDir);
            driver!.place(driven(example), exampleDir);
            const { emulator, api } = await startExampleEmulator();
            try {
              const env = withPath(installed.env, ...driver!.path);
              const driverEnv = {
                ...env,
                PULUMI_CLI_ROOT: dirname(cli!.dir),
                GMS_EXAMPLE_CONFIG: JSON.stringify(stackConfig(example, emulator.url)),
              };
              const operation = (step: string) =>
                run(driver!.command[0]!, [...driver!.command.slice(1), example.name, STACK, step], { cwd: exampleDir, env: driverEnv });
              const exported = await checkExampleLifecycle(
                api,
                {
                  up: () => operation("up"),
                  previewNoChanges: () => operation("preview"),
                  destroy: () => operation("destroy"),
                  exportState: () => run(cli!.bin, ["stack", "export", "--stack", STACK], { cwd: exampleDir, env }),
                },
                example.secrets,
              );
              expect(stackOutputsOf(exported), "the stack's outputs are the ones the YAML declares").toEqual(example.outputs);
            } finally {
              await emulator.close();
            }
          },
        );
      });
  },
);
