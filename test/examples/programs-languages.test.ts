import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installPackageCopy } from "../../src/testing";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { type InstalledPlugin, installPlugin, type PluginRelease, releaseFor } from "../release/harness";
import { goModuleOnRelease, pythonWithWheel, run, toolchainAbsent, withPath } from "../release/scenario";
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

/** A language's driver, made once in its own folder. */
interface Driver {
  /** Puts the example's generated program (unchanged) into `dir`, the example's folder. */
  place(example: ExampleProject, dir: string): void;
  /** Run as `<command...> <example> <stack> <operation>` in the example's folder. */
  command: string[];
  /** Folders the driver needs before the CLI's environment's PATH. */
  path: string[];
}

type Prepared = Driver | ReturnType<typeof toolchainAbsent> | string;

/** The generated file of `language` for an example. */
const generated = (example: ExampleProject, language: string, file: string) => join(example.source, language, file);

/**
 * Loads the example's index.ts as the program: its module's exports become the stack's outputs. The Automation API
 * and the program share the one `@pulumi/pulumi` that installPackageCopy links into the package's node_modules.
 */
const TYPESCRIPT_DRIVER = `import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation/index.js";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [example, stackName, operation] = process.argv.slice(2);
const here = process.cwd();
const program = async () => ({ ...(await import(pathToFileURL(join(here, "index.ts")).href)) });
const pulumiCommand = await PulumiCommand.get({ root: process.env.PULUMI_CLI_ROOT, skipVersionCheck: true });
const stack = await LocalWorkspace.createOrSelectStack(
  { stackName, projectName: example, program },
  { workDir: here, pulumiCommand, secretsProvider: "passphrase" },
);
await stack.setAllConfig(JSON.parse(process.env.GMS_EXAMPLE_CONFIG));
const onOutput = (text) => process.stdout.write(text);
if (operation === "up") await stack.up({ onOutput });
else if (operation === "preview") await stack.preview({ onOutput, expectNoChanges: true });
else if (operation === "destroy") await stack.destroy({ onOutput });
else throw new Error(\`unknown operation \${operation}\`);
`;

/** Runs the example's __main__.py as the program, as the Python language host would run the project. */
const PYTHON_DRIVER = `import json
import os
import runpy
import sys

from pulumi import automation as auto

example, stack_name, operation = sys.argv[1:4]
here = os.getcwd()


def program():
    runpy.run_path(os.path.join(here, "__main__.py"), run_name="__main__")


command = auto.PulumiCommand(root=os.environ["PULUMI_CLI_ROOT"], skip_version_check=True)
stack = auto.create_or_select_stack(
    stack_name=stack_name,
    project_name=example,
    program=program,
    opts=auto.LocalWorkspaceOptions(work_dir=here, pulumi_command=command, secrets_provider="passphrase"),
)
settings = json.loads(os.environ["GMS_EXAMPLE_CONFIG"])
stack.set_all_config({key: auto.ConfigValue(s["value"], secret=s["secret"]) for key, s in settings.items()})
if operation == "up":
    stack.up(on_output=print)
elif operation == "preview":
    stack.preview(on_output=print, expect_no_changes=True)
elif operation == "destroy":
    stack.destroy(on_output=print)
else:
    sys.exit("unknown operation " + operation)
`;

/** The Go package of an example's program in the driver's module: its folder name as an identifier. */
const goPackage = (name: string) => name.replaceAll("-", "_");

/** Runs the `Program` of the example's package (its main.go through inlineGoProgram) as an inline program. */
const goDriver = (module: string, examples: string[]) => `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
${examples.map((name) => `\t${goPackage(name)} "${module}/programs/${name}"`).join("\n")}
)

var programs = map[string]pulumi.RunFunc{
${examples.map((name) => `\t"${name}": ${goPackage(name)}.Program,`).join("\n")}
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: driver <example> <stack> <up|preview|destroy>")
		os.Exit(2)
	}
	if err := drive(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func drive(example, stackName, operation string) error {
	program, found := programs[example]
	if !found {
		return fmt.Errorf("no example %q", example)
	}
	here, err := os.Getwd()
	if err != nil {
		return err
	}
	var settings map[string]struct {
		Value  string \`json:"value"\`
		Secret bool   \`json:"secret"\`
	}
	if err := json.Unmarshal([]byte(os.Getenv("GMS_EXAMPLE_CONFIG")), &settings); err != nil {
		return err
	}
	config := auto.ConfigMap{}
	for key, setting := range settings {
		config[key] = auto.ConfigValue{Value: setting.Value, Secret: setting.Secret}
	}
	ctx := context.Background()
	command, err := auto.NewPulumiCommand(&auto.PulumiCommandOptions{Root: os.Getenv("PULUMI_CLI_ROOT"), SkipVersionCheck: true})
	if err != nil {
		return err
	}
	stack, err := auto.UpsertStackInlineSource(ctx, stackName, example, program,
		auto.WorkDir(here), auto.Pulumi(command), auto.SecretsProvider("passphrase"))
	if err != nil {
		return err
	}
	if err := stack.SetAllConfig(ctx, config); err != nil {
		return err
	}
	switch operation {
	case "up":
		_, err = stack.Up(ctx, optup.ProgressStreams(os.Stdout))
	case "preview":
		_, err = stack.Preview(ctx, optpreview.ProgressStreams(os.Stdout), optpreview.ExpectNoChanges())
	case "destroy":
		_, err = stack.Destroy(ctx, optdestroy.ProgressStreams(os.Stdout))
	default:
		err = fmt.Errorf("unknown operation %q", operation)
	}
	return err
}
`;

const LANGUAGES: { name: string; prepare(dir: string, release: PluginRelease): Promise<Prepared> }[] = [
  {
    name: "TypeScript",
    async prepare(dir) {
      if (!process.features.typescript)
        return toolchainAbsent(`Node.js ${process.version} does not strip types; the generated index.ts is imported as it is`);
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "gms-examples-typescript", private: true, type: "module" }));
      installPackageCopy(dir);
      writeFileSync(join(dir, "driver.mjs"), TYPESCRIPT_DRIVER);
      return {
        place: (example, exampleDir) => copyFileSync(generated(example, "typescript", "index.ts"), join(exampleDir, "index.ts")),
        command: [process.execPath, join(dir, "driver.mjs")],
        path: [],
      };
    },
  },
  {
    name: "Python",
    async prepare(dir, release) {
      const made = await pythonWithWheel(dir, release);
      if (typeof made === "string" || "toolchainAbsent" in made) return made;
      const { venv } = made;
      writeFileSync(join(dir, "driver.py"), PYTHON_DRIVER);
      return {
        place: (example, exampleDir) => copyFileSync(generated(example, "python", "__main__.py"), join(exampleDir, "__main__.py")),
        command: [join(venv, "bin", "python"), join(dir, "driver.py")],
        path: [join(venv, "bin")],
      };
    },
  },
  {
    name: "Go",
    async prepare(dir, release) {
      const module = "gms-examples-go";
      const problem = goModuleOnRelease(dir, release, module);
      if (problem) return problem;
      // Why an example is left out of the driver: its main.go is not of the generated shape, or does not compile.
      const broken = new Map<string, string>();
      for (const name of EXAMPLES) {
        mkdirSync(join(dir, "programs", name), { recursive: true });
        try {
          const source = readFileSync(generated(exampleProject(name), "go", "main.go"), "utf8");
          writeFileSync(join(dir, "programs", name, "program.go"), inlineGoProgram(source, goPackage(name)));
        } catch (error) {
          broken.set(name, (error as Error).message);
          rmSync(join(dir, "programs", name), { recursive: true });
        }
      }
      writeFileSync(
        join(dir, "main.go"),
        goDriver(
          module,
          EXAMPLES.filter((name) => !broken.has(name)),
        ),
      );
      try {
        await run("go", ["mod", "tidy"], { cwd: dir, env: process.env });
        // One example that does not compile fails alone: `go build` names each package it could not build.
        await run("go", ["build", "-trimpath", "./programs/..."], { cwd: dir, env: process.env }).catch((error: Error) => {
          const failed = [...error.message.matchAll(new RegExp(`^# ${module}/programs/(\\S+)\n((?:(?!# ).*\n?)*)`, "gm"))];
          if (failed.length === 0) throw error;
          for (const [, name, errors] of failed) broken.set(name!, `its main.go, as generated, does not compile:\n${errors!.trim()}`);
        });
        writeFileSync(
          join(dir, "main.go"),
          goDriver(
            module,
            EXAMPLES.filter((name) => !broken.has(name)),
          ),
        );
        await run("go", ["build", "-trimpath", "-o", "driver", "."], { cwd: dir, env: process.env });
      } catch (error) {
        return `the Go driver of the examples does not build: ${(error as Error).message}`;
      }
      // The programs are compiled in; an example's folder holds only what it reads.
      return {
        place: (example) => {
          if (broken.has(example.name)) throw new Error(`the Go program of ${example.name}: ${broken.get(example.name)}`);
        },
        command: [join(dir, "driver")],
        path: [],
      };
    },
  },
];

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

    for (const language of LANGUAGES)
      describe(language.name, () => {
        let installed: InstalledPlugin;
        let driver: Driver | undefined;
        let dir: string;

        beforeAll(async () => {
          dir = join(root, language.name.toLowerCase());
          mkdirSync(dir);
          installed = installPlugin(cli!, release!);
          const prepared = await language.prepare(dir, release!);
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
            driver!.place(example, exampleDir);
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
