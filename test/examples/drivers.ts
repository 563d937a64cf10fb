/**
 * The drivers that run a generated program, unchanged, on the real CLI through the Automation API: TypeScript and
 * Python as inline programs that run the program file, Go as a driver that compiles each program in (its main.go as
 * a package, through inlineGoProgram). Each is run as `<command...> <project> <stack> <up|preview|destroy>` in the
 * program's folder, with the stack's config in GMS_EXAMPLE_CONFIG. The examples' suite and discover's adoption suite
 * share them.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { installPackageCopy } from "../../src/testing";
import type { PluginRelease } from "../release/harness";
import { goModuleOnRelease, pythonWithWheel, run, type ToolchainAbsent, toolchainAbsent } from "../release/scenario";
import { inlineGoProgram } from "./programs-harness";

/** The program files a driver runs, by language. */
export const PROGRAM_FILES = { typescript: "index.ts", python: "__main__.py", go: "main.go" } as const;
export type DriverLanguage = keyof typeof PROGRAM_FILES;

/** A program to run: its project's name, and the path of its program file in each language. */
export interface DrivenProgram {
  name: string;
  file(language: DriverLanguage): string;
}

/** A language's driver, made once in its own folder. */
export interface Driver {
  /** Puts the program's file (unchanged) into `dir`, the program's folder. */
  place(program: DrivenProgram, dir: string): void;
  /** Run as `<command...> <example> <stack> <operation>` in the example's folder. */
  command: string[];
  /** Folders the driver needs before the CLI's environment's PATH. */
  path: string[];
}

export type Prepared = Driver | ToolchainAbsent | string;

/**
 * Loads the example's index.ts as the program: its module's exports become the stack's outputs. The Automation API
 * and the program share the one `@pulumi/pulumi` that installPackageCopy links into the package's node_modules.
 */
export const TYPESCRIPT_DRIVER = `import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation/index.js";
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
export const PYTHON_DRIVER = `import json
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

export interface LanguageDriver {
  name: string;
  /** Makes the driver in `dir`; the Go driver compiles `programs` in. */
  prepare(dir: string, release: PluginRelease, programs: readonly DrivenProgram[]): Promise<Prepared>;
}

export const LANGUAGE_DRIVERS: LanguageDriver[] = [
  {
    name: "TypeScript",
    async prepare(dir) {
      if (!process.features.typescript)
        return toolchainAbsent(`Node.js ${process.version} does not strip types; the generated index.ts is imported as it is`);
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "gms-examples-typescript", private: true, type: "module" }));
      installPackageCopy(dir);
      writeFileSync(join(dir, "driver.mjs"), TYPESCRIPT_DRIVER);
      return {
        place: (program, programDir) => copyFileSync(program.file("typescript"), join(programDir, PROGRAM_FILES.typescript)),
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
        place: (program, programDir) => copyFileSync(program.file("python"), join(programDir, PROGRAM_FILES.python)),
        command: [join(venv, "bin", "python"), join(dir, "driver.py")],
        path: [join(venv, "bin")],
      };
    },
  },
  {
    name: "Go",
    async prepare(dir, release, programs) {
      const module = "gms-examples-go";
      const problem = goModuleOnRelease(dir, release, module);
      if (problem) return problem;
      // Why an example is left out of the driver: its main.go is not of the generated shape, or does not compile.
      const broken = new Map<string, string>();
      const names = programs.map((program) => program.name);
      for (const program of programs) {
        const { name } = program;
        mkdirSync(join(dir, "programs", name), { recursive: true });
        try {
          const source = readFileSync(program.file("go"), "utf8");
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
          names.filter((name) => !broken.has(name)),
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
            names.filter((name) => !broken.has(name)),
          ),
        );
        await run("go", ["build", "-trimpath", "-o", "driver", "."], { cwd: dir, env: process.env });
      } catch (error) {
        return `the Go driver of the programs does not build: ${(error as Error).message}`;
      }
      // The programs are compiled in; an example's folder holds only what it reads.
      return {
        place: (program) => {
          if (broken.has(program.name)) throw new Error(`the Go program of ${program.name}: ${broken.get(program.name)}`);
        },
        command: [join(dir, "driver")],
        path: [],
      };
    },
  },
];
