/**
 * The SDKs `npm run dist` generates from schema.json (scripts/dist/sdks.mts), generated afresh into the temp
 * directory rather than read from release/, which may be stale: twice, byte for byte the same; the Go module at
 * the import path schema.json names, building, vetted and used by a Go program through a `replace` directive,
 * its resources registered with the package's version and the plugin's download URL; the Python package and its
 * wheel carrying that version and a pulumi-plugin.json naming the plugin `gms` at it and where it is released. Needs
 * Go (required under CI=true, as the CLI is), and the Go module proxy for the SDK's dependencies; the wheel needs
 * python3 with pip and skips, saying why, without it.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runToEnd } from "../run-to-end";
import { buildWheel, generateSdks, goModulePath } from "../../scripts/dist/sdks.mts";
import { pythonName, sdkInputs } from "../../src/docs/kind-pages";
import { pluginDownloadURL } from "../../src/manifest";
import { KIND_NAMES } from "../../src/resources";

const FILE = "release/sdks.test.ts";
const ROOT = join(__dirname, "..", "..");
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
const schema = JSON.parse(readFileSync(join(ROOT, "schema.json"), "utf8")) as { language: { go: { importBasePath: string } } };
const importBasePath = schema.language.go.importBasePath;
/** The pulumi-plugin.json both SDKs carry: the plugin, its version, and where the engine downloads it (`server`). */
const PLUGIN = { resource: true, name: "gms", version, server: pluginDownloadURL };
const MINUTES = 60_000;
/** Prints one member of a zip archive (a wheel): `python3 -c READ_MEMBER <archive> <member>`. */
const READ_MEMBER = "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())";

/** Whether `command versionArgs` runs; if not, prints why the tests needing it skip, or fails under CI=true when required. */
function toolPresent(command: string, versionArgs: string[], purpose: string, requiredUnderCi: boolean): boolean {
  const probe = spawnSync(command, versionArgs, { encoding: "utf8" });
  if (probe.status === 0) return true;
  const reason = `${command} does not run (${probe.error?.message ?? probe.stderr.trim()})`;
  if (requiredUnderCi && process.env.CI === "true") throw new Error(`${FILE}: ${command} is required under CI=true: ${reason}`);
  console.log(`${FILE}: skipping ${purpose}: ${reason}`);
  return false;
}

const hasGo = toolPresent("go", ["version"], "the generated SDKs (the generator is a Go program)", true);
const hasPython = hasGo && toolPresent("python3", ["-m", "pip", "--version"], "the Python SDK's wheel", false);

/** A Python SDK signature's type as the kind pages write it: no `pulumi.Input[...]`, `Optional[...]` or `_builtins.`. */
function plainPythonType(type: string): string {
  let plain = type.replaceAll("_builtins.", "");
  for (let before = ""; before !== plain; ) {
    before = plain;
    plain = plain.replace(/(?:pulumi\.Input|Optional)\[([^[\]]*(?:\[[^[\]]*(?:\[[^[\]]*\])*[^[\]]*\])*[^[\]]*)\]/, "$1");
  }
  return plain;
}

/** The first fenced block of `language` in a README. */
function fenced(readme: string, language: string): string {
  const block = new RegExp("```" + language + "\\n([\\s\\S]*?)```").exec(readme);
  if (!block) throw new Error(`no \`\`\`${language} block in the README`);
  return block[1]!;
}

/** Every file under `dir` by its relative path, with its bytes. */
function tree(dir: string): Map<string, Buffer> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
  return new Map(files.sort().map((file) => [file, readFileSync(join(dir, file))]));
}

/** A program of the Go SDK on Pulumi's mocks: it prints what each resource registration asked for. */
const CONSUMER = `package main

import (
	"fmt"
	"os"

	"${importBasePath}"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

type mocks struct{}

func (mocks) NewResource(args pulumi.MockResourceArgs) (string, resource.PropertyMap, error) {
	fmt.Printf("%s %s %q version=%s\\n", args.TypeToken, args.Name, args.Inputs["name"].StringValue(), args.RegisterRPC.GetVersion())
	return args.Name + "-guid", args.Inputs, nil
}

func (mocks) Call(args pulumi.MockCallArgs) (resource.PropertyMap, error) {
	return args.Args, nil
}

func main() {
	err := pulumi.RunErr(func(ctx *pulumi.Context) error {
		app, err := gms.NewApp(ctx, "support", &gms.AppArgs{Name: pulumi.String("Customer support")})
		if err != nil {
			return err
		}
		_, err = gms.NewWorkflow(ctx, "triage", &gms.WorkflowArgs{Name: pulumi.String("Triage"), App: app.ID().ToStringOutput()})
		return err
	}, pulumi.WithMocks("consumer", "dev", mocks{}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`;

describe.skipIf(!hasGo)("the SDKs generated from schema.json", () => {
  let first: string;
  let second: string;

  beforeAll(async () => {
    first = mkdtempSync(join(tmpdir(), "gms-sdks-first-"));
    second = mkdtempSync(join(tmpdir(), "gms-sdks-second-"));
    await generateSdks(ROOT, first);
    await generateSdks(ROOT, second);
  }, 15 * MINUTES);

  afterAll(() => {
    for (const dir of [first, second]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("are byte-identical when generated twice", () => {
    const [a, b] = [tree(first), tree(second)];
    expect([...a.keys()]).toEqual([...b.keys()]);
    expect([...a.keys()]).toEqual(expect.arrayContaining(["go/go.mod", "go/go.sum", "python/setup.py"]));
    for (const [file, bytes] of a) expect(bytes.equals(b.get(file)!), `${file} differs between two runs`).toBe(true);
  });

  it("hold a Go module whose root package is schema.json's language.go.importBasePath, at the package's version", async () => {
    const go = join(first, "go");
    const modulePath = await goModulePath(go);
    expect(importBasePath.startsWith(`${modulePath}/`), `${importBasePath} is not in the module ${modulePath}`).toBe(true);
    const packages = await runToEnd("go", ["list", "./..."], go);
    expect(packages.code, packages.output).toBe(0);
    expect(packages.output.split("\n")).toContain(importBasePath);

    const root = join(go, importBasePath.slice(modulePath.length + 1));
    expect(JSON.parse(readFileSync(join(root, "pulumi-plugin.json"), "utf8"))).toEqual(PLUGIN);
    expect(readFileSync(join(root, "internal", "pulumiVersion.go"), "utf8")).toContain(
      `var SdkVersion semver.Version = semver.MustParse("${version}")`,
    );
    // Every resource's default options tell the engine where the plugin is released.
    expect(readFileSync(join(root, "internal", "pulumiUtilities.go"), "utf8")).toContain(
      `pulumi.PluginDownloadURL(${JSON.stringify(pluginDownloadURL)})`,
    );
  });

  it(
    "build and pass go vet",
    async () => {
      const go = join(first, "go");
      const build = await runToEnd("go", ["build", "-trimpath", "./..."], go);
      expect(build.code, build.output).toBe(0);
      const vet = await runToEnd("go", ["vet", "-trimpath", "./..."], go);
      expect(vet.code, vet.output).toBe(0);
    },
    10 * MINUTES,
  );

  it(
    "serve a Go program through a replace directive, registering gms:index:* resources at the package's version",
    async () => {
      const program = mkdtempSync(join(tmpdir(), "gms-sdks-consumer-"));
      try {
        const sdk = join(first, "go");
        const modulePath = await goModulePath(sdk);
        const goLine = /^go \S+$/m.exec(readFileSync(join(sdk, "go.mod"), "utf8"))![0];
        writeFileSync(
          join(program, "go.mod"),
          `module example.com/consumer\n\n${goLine}\n\nrequire ${modulePath} v${version}\n\nreplace ${modulePath} => ${sdk}\n`,
        );
        writeFileSync(join(program, "main.go"), CONSUMER);
        const tidy = await runToEnd("go", ["mod", "tidy"], program);
        expect(tidy.code, tidy.output).toBe(0);
        const ran = await runToEnd("go", ["run", "-trimpath", "."], program);
        expect(ran.code, ran.output).toBe(0);
        expect(ran.output.trim().split("\n").sort()).toEqual([
          `gms:index:App support "Customer support" version=${version}`,
          `gms:index:Workflow triage "Triage" version=${version}`,
        ]);
      } finally {
        rmSync(program, { recursive: true, force: true });
      }
    },
    10 * MINUTES,
  );

  it(
    "describe themselves, and their READMEs' first programs build: the Go one against the module, the Python one parses",
    async () => {
      const description = JSON.parse(readFileSync(join(ROOT, "schema.json"), "utf8")).description as string;
      expect(description).not.toMatch(/dynamic|emulator/);
      const go = join(first, "go");
      const root = join(go, importBasePath.slice((await goModulePath(go)).length + 1));
      expect(readFileSync(join(root, "doc.go"), "utf8")).toContain(description.slice(0, 60));
      const goReadme = readFileSync(join(go, "README.md"), "utf8");
      expect(goReadme).toContain(`go get ${await goModulePath(go)}@v${version}`);
      const program = mkdtempSync(join(tmpdir(), "gms-sdks-readme-"));
      try {
        const goLine = /^go \S+$/m.exec(readFileSync(join(go, "go.mod"), "utf8"))![0];
        const modulePath = await goModulePath(go);
        writeFileSync(
          join(program, "go.mod"),
          `module example.com/readme\n\n${goLine}\n\nrequire ${modulePath} v${version}\n\nreplace ${modulePath} => ${go}\n`,
        );
        writeFileSync(join(program, "main.go"), fenced(goReadme, "go"));
        expect((await runToEnd("go", ["mod", "tidy"], program)).code).toBe(0);
        const vet = await runToEnd("go", ["vet", "-trimpath", "."], program);
        expect(vet.code, vet.output).toBe(0);
      } finally {
        rmSync(program, { recursive: true, force: true });
      }
      // Each resource's docs carry its examples in the SDK's own language (schema.json's {{% examples %}}).
      const goExperiment = readFileSync(join(root, "experiment.go"), "utf8");
      expect(goExperiment).toContain("// ## Example Usage");
      expect(goExperiment).toContain("// ```go");
      expect(goExperiment).not.toContain("```python");
      const pythonExperiment = readFileSync(join(first, "python", "pulumi_gms", "experiment.py"), "utf8");
      expect(pythonExperiment).toContain("## Example Usage");
      expect(pythonExperiment).toContain("```python");
      expect(pythonExperiment).not.toMatch(/```(go|typescript|yaml)/);
      const pythonReadme = readFileSync(join(first, "python", "README.md"), "utf8");
      expect(pythonReadme).toContain("pip install pulumi pulumi_gms");
      if (hasPython) {
        const parsed = spawnSync("python3", ["-c", "import ast, sys; ast.parse(sys.stdin.read())"], {
          input: fenced(pythonReadme, "python"),
          encoding: "utf8",
        });
        expect(parsed.status, parsed.stderr).toBe(0);
      }
    },
    10 * MINUTES,
  );

  it("have every input under the name and type the kind pages give for Go and Python (docs/kinds/*.md)", async () => {
    const go = join(first, "go");
    const root = join(go, importBasePath.slice((await goModulePath(go)).length + 1));
    for (const kind of KIND_NAMES) {
      const goSource = readFileSync(join(root, `${kind[0]!.toLowerCase()}${kind.slice(1)}.go`), "utf8");
      const goArgs = new RegExp(`^type ${kind}Args struct \\{\\n([\\s\\S]*?)^\\}`, "m").exec(goSource)![1]!;
      const goFields = Object.fromEntries(
        goArgs
          .split("\n")
          .map((line) => line.trim())
          .filter((line) => line && !line.startsWith("//"))
          .map((line) => line.split(/\s+/) as [string, string]),
      );
      const pythonSource = readFileSync(
        join(first, "python", "pulumi_gms", `${pythonName(kind[0]!.toLowerCase() + kind.slice(1))}.py`),
        "utf8",
      );
      const pythonArgs = new RegExp(`class ${kind}Args:\\n\\s+def __init__\\(__self__, \\*,\\n([\\s\\S]*?)\\):`).exec(pythonSource)![1]!;
      const pythonParameters = Object.fromEntries(
        pythonArgs.split("\n").map((line) => {
          const [name, type] = line
            .trim()
            .replace(/ = None,?$|,$/, "")
            .split(": ") as [string, string];
          return [name, plainPythonType(type)];
        }),
      );
      for (const input of sdkInputs(kind)) {
        expect(goFields[input.go], `${kind}Args.${input.go}`).toBe(input.goType);
        expect(pythonParameters[input.python], `${kind}Args(${input.python})`).toBe(input.pythonType);
      }
      expect(Object.keys(goFields).sort(), kind).toEqual(
        sdkInputs(kind)
          .map((input) => input.go)
          .sort(),
      );
    }
  });

  it("hold the Python package pulumi_gms at the package's version, naming the plugin gms at it", () => {
    const python = join(first, "python");
    expect(readFileSync(join(python, "setup.py"), "utf8")).toMatch(new RegExp(`^VERSION = "${version.replaceAll(".", "\\.")}"$`, "m"));
    expect(readFileSync(join(python, "pulumi_gms", "_utilities.py"), "utf8")).toContain(`return "${version}"`);
    expect(JSON.parse(readFileSync(join(python, "pulumi_gms", "pulumi-plugin.json"), "utf8"))).toEqual(PLUGIN);
  });

  it.skipIf(!hasPython)(
    "build into a wheel of pulumi_gms at the package's version, with pulumi-plugin.json and py.typed",
    async () => {
      const out = mkdtempSync(join(tmpdir(), "gms-sdks-wheel-"));
      try {
        const wheel = await buildWheel(join(first, "python"), out);
        expect(wheel.endsWith(`pulumi_gms-${version}-py3-none-any.whl`), wheel).toBe(true);
        const read = (member: string) => spawnSync("python3", ["-c", READ_MEMBER, wheel, member], { encoding: "utf8" });
        const metadata = read(`pulumi_gms-${version}.dist-info/METADATA`);
        expect(metadata.status, metadata.stderr).toBe(0);
        expect(metadata.stdout).toMatch(/^Name: pulumi_gms$/m);
        expect(metadata.stdout).toMatch(new RegExp(`^Version: ${version.replaceAll(".", "\\.")}$`, "m"));
        expect(metadata.stdout).toMatch(/^Requires-Dist: pulumi[<>=]/m);
        expect(JSON.parse(read("pulumi_gms/pulumi-plugin.json").stdout)).toEqual(PLUGIN);
        expect(read("pulumi_gms/py.typed").status).toBe(0);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    },
    5 * MINUTES,
  );
});
