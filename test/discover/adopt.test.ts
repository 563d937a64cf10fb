/**
 * `pulumi-gms discover --language`: the program that adopts a whole workspace, seeded through the API with several
 * objects of every kind (twins of one name among them). The YAML program is checked as data (every object imported by
 * its GUID, keys read from secret config, links between objects as references, the plugin's version and release on
 * its first resource); `--kind`, `--name` and `--exclude` pick what it adopts, a value naming an object left out
 * written as its GUID with a warning; the printed commands name the new stack (`dev`, or `--new-stack`), the state
 * backend (the current login, or the hint for a new project), and for each key whose it is and where it comes from.
 * The TypeScript, Python and Go forms come from the examples' converter (Go, required under CI=true).
 *
 * Then on the real CLI with the release's plugin (both required under CI=true):
 * - YAML: the commands discover printed, run as written in the new folder (./printed.ts), the engine downloading the
 *   plugin from the release laid out on a loopback server, as on a user's machine;
 * - Python and Go, whose language hosts this build machine cannot build (docs/layout.md): the written project's
 *   requirements installed with the language's own tools as the printed commands say (a virtual environment and pip,
 *   from the release's wheel; `go mod init`, then the release's Go module and `go mod tidy`, and `go build`), then
 *   the printed stack and settings lines and the page's driver as the page gives it (python.md's driver.py beside
 *   the program; go.md's main.go in place of the written one, which runs the written program.go on the host), in
 *   place of `pulumi up`.
 * - TypeScript, with the plugin this checkout builds on PATH: the printed setup (an ES module package), the printed
 *   stack and settings lines, then typescript.md's `driver.ts` as the page gives it, in place of `pulumi up`.
 * Each time the first `up` imports every object and makes none, the service then holds what it held, a preview finds
 * no change, and destroy deletes what it adopted. No key shows in any file, output or stack export.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Discovery } from "../../src/discover/plan";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { goModule, packageManifest, pluginDownloadURL } from "../../src/manifest";
import { KIND_NAMES } from "../../src/resources";
import { cliEnvironment, installPackageCopy } from "../../src/testing";
import type { PlainReference } from "../../src/discover/adopt";
import { GO_MAIN } from "../../src/discover/go-program";
import { goPresent } from "../go-present";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { ACME_KEY, type FixtureLookups, fixtureLookups, KINDS_FIXTURES } from "../pulumi-cli/kinds-fixtures";
import { type DownloadServer, startDownloadServer } from "../release/download-server";
import { downloadingSandbox, installPlugin, releaseFor } from "../release/harness";
import { goModuleOnRelease, run, withPath } from "../release/scenario";
import { printedBlocks, resourceCounts, runBlock } from "./printed";
import { runDiscover } from "./run";
import { type Seeded, seedWorkspace } from "./seed";

const FILE = "discover/adopt.test.ts";
const TIMEOUT = 600_000;
const go = goPresent(FILE, "the programs in TypeScript, Python and Go (the converter is a Go program)");
const release = releaseFor(FILE);
/** The CLI: with the release for YAML, Python and Go; alone for TypeScript, whose plugin is the one this checkout builds. */
const localCli = pulumiCliFor(FILE);
const cli = release && localCli;
const ROOT = join(__dirname, "..", "..");

/** The file block `file` of a docs page, as the page gives it: the drivers a reader copies. */
const pageFile = (page: string, file: string): string => {
  const body = new RegExp(`^\`\`\`\\w+ ${file.replace(".", "\\.")}\n([\\s\\S]*?)^\`\`\`$`, "m").exec(
    readFileSync(join(ROOT, page), "utf8"),
  )?.[1];
  if (body === undefined) throw new Error(`${page} has no block of ${file}`);
  return body;
};

type Adoption = Discovery & { directory: string; file: string; references: PlainReference[] };
interface Program {
  name: string;
  config?: Record<string, { type: string; secret: boolean }>;
  resources: Record<string, { type: string; properties: Record<string, unknown>; options: { import: string; [option: string]: string } }>;
}

/** A seeded workspace on its own emulator, and discover run against it. */
interface Bed {
  emulator: RunningEmulator;
  fixtures: FixtureLookups;
  seeded: Seeded;
  /** The folder discover runs in. */
  dir: string;
  /** Every line printed and every file written, to search for keys. */
  printed: string[];
  discover(...argv: string[]): Promise<{ code: number; out: string; err: string }>;
  /** Discover with --json, which must succeed; `more` are further flags. */
  adopt(language: string, out: string, ...more: string[]): Promise<Adoption>;
  /** What the service holds now, by kind: the GUIDs, sorted. */
  holdings(): Promise<Record<string, string[]>>;
  close(): Promise<void>;
}

/** `shell` is the user's environment discover runs in (its PATH, their state backend), GMS_BASE_URL and GMS_API_KEY added. */
async function startBed(prefix: string, shell: NodeJS.ProcessEnv = process.env): Promise<Bed> {
  const emulator = await startEmulator({ port: 0, db: ":memory:", fixtures: KINDS_FIXTURES, fineTuneSeconds: 0 });
  const fixtures = await fixtureLookups(emulator);
  const seeded = await seedWorkspace(fixtures);
  // Text that Pulumi YAML would read as an interpolation, were it not escaped.
  const literal = await fixtures.api("POST", "/apps", { name: "Costs ${region}", description: "100% $${x}" });
  expect(literal.status).toBe(200);
  seeded.guids.App.push(literal.body.guid);
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const printed: string[] = [];
  const env = { ...shell, GMS_BASE_URL: emulator.url, GMS_API_KEY: ACME_KEY };
  const discover = async (...argv: string[]) => {
    const result = await runDiscover(argv, { env, cwd: dir });
    printed.push(result.out, result.err);
    return result;
  };
  return {
    emulator,
    fixtures,
    seeded,
    dir,
    printed,
    discover,
    async adopt(language, out, ...more) {
      const result = await discover("--json", "--language", language, "--out", out, ...more);
      expect(result.err).toBe("");
      expect(result.code).toBe(0);
      const adoption = JSON.parse(result.out) as Adoption;
      printed.push(readFileSync(join(dir, adoption.file), "utf8"), readFileSync(join(dir, out, "Pulumi.yaml"), "utf8"));
      return adoption;
    },
    async holdings() {
      const result = await discover("--json", "--out", "holdings.json");
      expect(result.code).toBe(0);
      const { document } = JSON.parse(result.out) as Discovery;
      const byKind: Record<string, string[]> = {};
      for (const entry of document.resources) (byKind[entry.type] ??= []).push(entry.id);
      for (const guids of Object.values(byKind)) guids.sort();
      return byKind;
    },
    async close() {
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The objects discover adopts: every seeded one but the configured Skills it leaves out. */
const adoptable = (seeded: Seeded) =>
  KIND_NAMES.flatMap((kind) => seeded.guids[kind])
    .filter((guid) => !seeded.configuredSkills.includes(guid))
    .sort();

/** No key of the workspace, nor the API key, in anything printed or written. */
function expectNoKey(bed: Bed, texts: string[] = bed.printed): void {
  for (const key of [ACME_KEY, ...bed.seeded.keys.values()]) for (const text of texts) expect(text).not.toContain(key);
}

/**
 * The adopting program's lifecycle, whatever runs it: the first `up` imports every object and makes none (the
 * service holds the same objects after it), a preview expecting no change passes, the export keeps the keys encrypted,
 * destroy deletes every adopted object, and no key shows in anything printed.
 */
async function checkAdoption(
  bed: Bed,
  adoption: Adoption,
  steps: { adopt(): Promise<{ up: string; preview: string }> } & Record<"exportState" | "destroy", () => Promise<string>>,
): Promise<void> {
  const before = await bed.holdings();
  const { up, preview } = await steps.adopt();
  // The stack itself is made; every object is imported, none made, changed or deleted.
  expect(resourceCounts(up)).toEqual({ created: 1, imported: adoption.document.resources.length });
  expect(await bed.holdings()).toEqual(before);
  expect(preview).toMatch(new RegExp(`${adoption.document.resources.length + 1} unchanged`));
  const exported = await steps.exportState();
  expect(exported).toContain("ciphertext");
  const destroy = await steps.destroy();
  const left = Object.values(await bed.holdings()).flat();
  for (const entry of adoption.document.resources) expect(left).not.toContain(entry.id);
  expectNoKey(bed, [...bed.printed, up, preview, exported, destroy]);
}

describe("pulumi-gms discover --language against the emulator", () => {
  let bed: Bed;
  /** No Pulumi CLI to ask which backend is the current login. */
  let noPulumi: string[];
  beforeAll(async () => {
    // A shell with no passphrase set, which the printed `pulumi stack init` then asks for.
    bed = await startBed("gms-discover-adopt", {
      ...process.env,
      PULUMI_CONFIG_PASSPHRASE: undefined,
      PULUMI_CONFIG_PASSPHRASE_FILE: undefined,
    });
    noPulumi = ["--pulumi", join(bed.dir, "no-such-pulumi")];
  }, TIMEOUT);
  afterAll(() => bed?.close());

  it("writes a YAML program that imports every object by its GUID, reads each key from secret config and links objects by reference", async () => {
    const adoption = await bed.adopt("yaml", "adopted", ...noPulumi);
    expect(adoption.file).toBe(join("adopted", "Pulumi.yaml"));
    const program = parse(readFileSync(join(bed.dir, adoption.file), "utf8")) as Program;
    expect(program.name).toBe("adopted");
    const resources = Object.entries(program.resources);
    expect(resources.map(([, resource]) => resource.options.import).sort()).toEqual(adoptable(bed.seeded));
    for (const [name, resource] of resources)
      expect(adoption.document.resources).toContainEqual(
        expect.objectContaining({ name, type: resource.type, id: resource.options.import }),
      );

    // Each key: a secret config value of the program, named as the summary names it, and never the key itself.
    expect(adoption.configKeys).toHaveLength(bed.seeded.keys.size);
    for (const key of adoption.configKeys) {
      expect(program.resources[key.resource]!.properties[key.property]).toBe(`\${${key.configKey}}`);
      expect(program.config![key.configKey]).toEqual({ type: "string", secret: true });
    }
    // The connection type the Models show, which the service never returns of the connection itself.
    for (const entry of adoption.document.resources.filter((resource) => resource.inputs))
      expect(program.resources[entry.name]!.properties).toMatchObject(entry.inputs!);
    // A Workflow names its App by reference, not by GUID; a value equal to its field's default is left out.
    const nameOf = new Map(adoption.document.resources.map((entry) => [entry.id, entry.name]));
    const workflows = resources.filter(([, resource]) => resource.type === "gms:index:Workflow");
    expect(workflows).toHaveLength(3);
    for (const [, workflow] of workflows) expect(workflow.properties.app).toMatch(/^\$\{[a-z0-9_]+\.id\}$/);
    const billingTriage = (await bed.fixtures.api("GET", `/workflows/${bed.seeded.guids.Workflow[0]}`)).body;
    expect(program.resources[nameOf.get(bed.seeded.guids.Workflow[0]!)!]!.properties).toEqual({
      name: "Triage",
      app: `\${${nameOf.get(billingTriage.app)}.id}`,
    });

    // Pulumi YAML's interpolation is escaped in text: each `$` is written `$$`.
    expect(resources.find(([, resource]) => resource.properties.name === "Costs $${region}")?.[1].properties.description).toBe(
      "100% $$$${x}",
    );

    // The engine fetches the plugin for the YAML program, which has no SDK to say where it is: its first resource says it.
    expect(resources[0]![1].options).toEqual({
      version: packageManifest.version,
      pluginDownloadURL,
      import: resources[0]![1].options.import,
    });
    for (const [, resource] of resources.slice(1)) expect(Object.keys(resource.options)).toEqual(["import"]);

    // What to run next, from where discover ran: the backend (no login here: the hint), then in the new folder the
    // stack, its settings, each key saying whose it is and where it comes from, up and a preview.
    const idOf = new Map(adoption.document.resources.map((entry) => [entry.name, entry.id]));
    expect(adoption.next).toEqual([
      "pulumi login   # no current login: this stores the stacks in Pulumi Cloud; to keep them in a " +
        "folder instead, run `mkdir -p ~/.pulumi-state && export PULUMI_BACKEND_URL=file://~/.pulumi-state " +
        "PULUMI_CONFIG_PASSPHRASE=<a passphrase you keep>`",
      "cd adopted",
      "pulumi stack init dev   # with the state in a folder or a bucket, its secrets are sealed with a passphrase: export " +
        "PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE) first, and keep it; Pulumi Cloud seals them itself, " +
        "with nothing to set",
      `pulumi config set gms:baseUrl ${bed.emulator.url.replace(/\/$/, "")}`,
      `printf '%s' "$GMS_API_KEY" | pulumi config set --secret gms:apiKey   # the API key discover read (GMS_API_KEY)`,
      ...adoption.configKeys.map((key) => {
        const object = adoption.document.resources.find((entry) => entry.name === key.resource)!;
        const kind = object.type.replace("gms:index:", "");
        expect(key.about).toMatch(
          new RegExp(`^the key ${kind} "[^"]+" \\(${idOf.get(key.resource)}\\) was made with: the service never returns it`),
        );
        return `pulumi config set --secret ${key.configKey}   # ${key.about}`;
      }),
      `pulumi up   # shows the plan and asks first: it imports the ${resources.length} objects and changes none`,
      "pulumi preview --expect-no-changes",
    ]);
    expectNoKey(bed);
  });

  it("names the new stack --new-stack gives, and reads the API key from the file --api-key-file names", async () => {
    writeFileSync(join(bed.dir, "gms.key"), `${ACME_KEY}\n`);
    const result = await runDiscover(
      ["--json", "--language", "yaml", "--out", "prod", "--new-stack", "prod", "--api-key-file", "gms.key", ...noPulumi],
      { env: { ...process.env, GMS_BASE_URL: bed.emulator.url, PULUMI_CONFIG_PASSPHRASE: "set" }, cwd: bed.dir },
    );
    expect(result.code, result.err).toBe(0);
    const { next } = JSON.parse(result.out) as Adoption;
    expect(next).toContain(
      "pulumi stack init prod   # with the state in a folder or a bucket, its secrets are sealed with the passphrase of " +
        "PULUMI_CONFIG_PASSPHRASE (or _FILE), set in this shell; Pulumi Cloud seals them itself, with nothing to set",
    );
    expect(next).toContain(
      `pulumi config set --secret gms:apiKey < ${join(bed.dir, "gms.key")}   # the API key discover read (--api-key-file)`,
    );
    const misused = await bed.discover("--new-stack", "prod");
    expect(misused.code).toBe(2);
    expect(misused.err).toContain("--new-stack names the stack of the programs --language or --split-by writes: give one of them too");
  });

  it("adopts what --kind, --name and --exclude pick; a value naming an object left out is its GUID, with a warning", async () => {
    const adoption = await bed.adopt(
      "yaml",
      "picked",
      ...noPulumi,
      "--kind",
      "Workflow,Dataset",
      "--name",
      "Tri*",
      "--name",
      "golden",
      "--name",
      "esc*",
      "--exclude",
      "escalate",
    );
    const program = parse(readFileSync(join(bed.dir, adoption.file), "utf8")) as Program;
    const picked = Object.values(program.resources).map((resource) => [resource.type, resource.properties.name]);
    // The two Triage Workflows and the Golden Datasets; not Escalate, not the Reviewed Dataset, no other kind.
    expect(picked.sort()).toEqual([
      ["gms:index:Dataset", "Golden"],
      ["gms:index:Dataset", "Golden"],
      ["gms:index:Workflow", "Triage"],
      ["gms:index:Workflow", "Triage"],
    ]);
    const notPicked = adoption.leftOut.filter((entry) => entry.code === "not-picked");
    expect(notPicked.find((entry) => entry.object === "Escalate")!.reason).toBe("not picked: its name matches --exclude escalate");
    expect(notPicked.find((entry) => entry.object === "Reviewed")!.reason).toBe(
      "not picked: its name matches no --name (Tri*, golden, esc*)",
    );
    expect(notPicked.find((entry) => entry.type === "gms:index:App")!.reason).toBe("not picked: not of --kind Workflow,Dataset");
    // The Workflows' Apps and the Golden Dataset's App are not adopted: their GUIDs, each named in a warning.
    const apps = new Map(notPicked.filter((entry) => entry.type === "gms:index:App").map((entry) => [entry.guid, entry.object]));
    const written = Object.entries(program.resources).filter(([, resource]) => resource.properties.app);
    expect(written.map(([name, resource]) => [name, resource.properties.app]).sort()).toEqual(
      adoption.references.map((reference) => [reference.resource, reference.guid]).sort(),
    );
    expect(adoption.references).toHaveLength(3);
    for (const reference of adoption.references)
      expect(reference).toMatchObject({
        property: "app",
        target: `gms:index:App "${apps.get(reference.guid)}"`,
        why: "not picked: not of --kind Workflow,Dataset",
      });
    const summary = await bed.discover(
      "--language",
      "yaml",
      "--out",
      "picked-summary",
      ...noPulumi,
      "--kind",
      "Workflow",
      "--name",
      "Tri*",
    );
    expect(summary.err).toMatch(/Left out, not picked by --kind, --name or --exclude: \d+ \(--json lists each\)\./);
    expect(summary.err).toMatch(
      /Warning: 2 values name objects that the program holding them does not adopt, and are written as their GUIDs .*:\n/,
    );
    expect(summary.err).toMatch(
      /\n {2}triage_[0-9a-f]{8}\.app \(gms:index:Workflow\) = [0-9a-f-]{36}: gms:index:App "(Billing|Onboarding)", not picked: not of --kind Workflow\n/,
    );
    const unknown = await bed.discover("--language", "yaml", "--kind", "Apps");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("--kind Apps is not a kind: use one of App, ProviderConnection, Model");
  });

  it("prints a summary that says what it wrote and what to run, without --json", async () => {
    const { code, out, err } = await bed.discover("--language", "yaml", "--out", "summary", ...noPulumi);
    expect(code).toBe(0);
    expect(out).toBe("");
    expect(err).toMatch(/Wrote summary\/Pulumi\.yaml: a yaml program that adopts \d+ objects/);
    expect(err).toContain("the program reads each from a secret config value");
    expect(err).toMatch(/Next:\n {2}pulumi login {3}# no current login: .*\n {2}cd summary\n {2}pulumi stack init dev {3}#/);
  });

  it("refuses an unknown language (2), a folder that holds a project (1) and a converter that is not there (1)", async () => {
    const unknown = await bed.discover("--language", "cobol");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("--language cobol is not one of yaml, typescript, python, go");

    mkdirSync(join(bed.dir, "taken"));
    writeFileSync(join(bed.dir, "taken", "Pulumi.yaml"), "name: mine\nruntime: yaml\n");
    const taken = await bed.discover("--language", "yaml", "--out", "taken");
    expect(taken.code).toBe(1);
    expect(taken.err).toContain("taken already holds a Pulumi project (Pulumi.yaml): give --out a new folder");
    expect(readFileSync(join(bed.dir, "taken", "Pulumi.yaml"), "utf8")).toBe("name: mine\nruntime: yaml\n");

    const result = await runDiscover(["--language", "python", "--out", "nowhere"], {
      env: { ...process.env, GMS_BASE_URL: bed.emulator.url, GMS_API_KEY: ACME_KEY, GMS_CONVERTER: join(bed.dir, "no-such-converter") },
      cwd: bed.dir,
    });
    expect(result.code).toBe(1);
    expect(result.err).toContain(`GMS_CONVERTER names ${join(bed.dir, "no-such-converter")}, which does not exist`);
    expect(existsSync(join(bed.dir, "nowhere"))).toBe(false);
  });

  it.skipIf(!go)("splits in Go too where no program reads the shared stack's outputs", { timeout: TIMEOUT }, async () => {
    const run = await bed.discover("--json", "--split-by", "app", "--language", "go", "--out", "split-go", ...noPulumi);
    expect(run.code, run.err).toBe(0);
    const { projects } = JSON.parse(run.out) as { projects: { file: string; adopted: number }[] };
    expect(projects.reduce((sum, project) => sum + project.adopted, 0)).toBe(adoptable(bed.seeded).length);
    const support = readFileSync(join(bed.dir, projects.find((project) => project.file.includes("support"))!.file), "utf8");
    expect(support).toMatch(/\t_, err :?= pulumi\.NewStackReference\(ctx, "sharedStack", &pulumi\.StackReferenceArgs\{\n/);
    expect(support).not.toContain("sharedStack.Outputs");
  });

  it.skipIf(!go).for([
    // An ES module (package.json's type, set by the printed setup) that Node.js runs itself, stripping the types.
    [
      "typescript",
      "index.ts",
      'import: "',
      { runtime: { name: "nodejs", options: { typescript: false } }, main: "index.ts" },
      ["npm init --yes", "npm pkg set type=module", `npm install @pulumi/pulumi pulumi-gms@${packageManifest.version}`],
    ],
    [
      "python",
      "__main__.py",
      'import_="',
      { runtime: { name: "python", options: { virtualenv: "venv" } } },
      ["python3 -m venv venv", `venv/bin/pip install pulumi pulumi-gms==${packageManifest.version}`],
    ],
    [
      "go",
      "program.go",
      "pulumi.Import(pulumi.ID(",
      { runtime: "go" },
      ["go mod init adopted-go", `go get ${goModule}@v${packageManifest.version} github.com/pulumi/pulumi/sdk/v3`, "go mod tidy"],
    ],
  ] as const)(
    "writes the %s program, converted from the YAML one, with its Pulumi.yaml and setup",
    { timeout: TIMEOUT },
    async ([language, file, importOption, project, setup]) => {
      const adoption = await bed.adopt(language, `adopted-${language}`, ...noPulumi);
      expect(adoption.file).toBe(join(`adopted-${language}`, file));
      const source = readFileSync(join(bed.dir, adoption.file), "utf8");
      expect(source.split(importOption).length - 1).toBe(adoptable(bed.seeded).length);
      for (const guid of adoptable(bed.seeded)) expect(source).toContain(guid);
      const written = parse(readFileSync(join(bed.dir, `adopted-${language}`, "Pulumi.yaml"), "utf8")) as Record<string, unknown>;
      expect(written).toEqual({ name: `adopted-${language}`, description: expect.any(String), ...project });
      // Go: the program is a function of program.go, which main.go runs (and go.md's driver, in main.go's place).
      if (language === "go") {
        expect(source).toMatch(/^package main\n/);
        expect(source).toContain("\nfunc program(ctx *pulumi.Context) error {\n");
        expect(source).not.toContain("func main()");
        expect(readFileSync(join(bed.dir, `adopted-${language}`, "main.go"), "utf8")).toBe(GO_MAIN);
      }
      const cd = adoption.next.indexOf(`cd adopted-${language}`);
      expect(adoption.next.slice(cd + 1, cd + 1 + setup.length)).toEqual(setup);
      expect(adoption.next[cd + 1 + setup.length]).toMatch(/^pulumi stack init dev/);
      expectNoKey(bed);
    },
  );
});

/** The printed `pulumi config set --secret <configKey>` lines, each with the key the user gives when the CLI asks. */
function keyAnswers(bed: Bed, adoption: Adoption): (line: string) => string | undefined {
  const idOf = new Map(adoption.document.resources.map((entry) => [entry.name, entry.id]));
  const answers = new Map(
    adoption.configKeys.map((key) => [`pulumi config set --secret ${key.configKey}`, bed.seeded.keys.get(idOf.get(key.resource)!)!]),
  );
  return (line) => answers.get(line.split("   #")[0]!);
}

describe.skipIf(!cli)(`adopting a workspace on the real CLI with the release's plugin: ${cliName(cli)}`, () => {
  let server: DownloadServer;
  beforeAll(async () => {
    server = await startDownloadServer(dirname(release!.tarball), release!.version);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("names the state backend the user is logged in to, with `pulumi login`", async () => {
    const home = downloadingSandbox(cli!, release!, server);
    const { PULUMI_BACKEND_URL: backend, ...loggedIn } = home.env;
    const bed = await startBed("gms-discover-adopt-login", loggedIn);
    try {
      await run(cli!.bin, ["login", backend!], { cwd: bed.dir, env: loggedIn });
      const adoption = await bed.adopt("yaml", "adopted");
      expect(adoption.next[0]).toBe(`pulumi login ${backend}   # the state backend you are logged in to now`);
    } finally {
      home.remove();
      await bed.close();
    }
  });

  it(
    "YAML: the printed commands, run as written in a new folder, import every object in the first up and make none; a preview finds no change",
    async () => {
      // The user's shell: the Pulumi CLI on PATH, a state backend and its passphrase, a PULUMI_HOME with no plugin.
      const home = downloadingSandbox(cli!, release!, server);
      const bed = await startBed("gms-discover-adopt-yaml", home.env);
      const shell = { ...home.env, GMS_API_KEY: ACME_KEY };
      const downloaded = server.downloads().length;
      try {
        const adoption = await bed.adopt("yaml", "adopted");
        expect(adoption.next[0]).toBe(
          `export PULUMI_BACKEND_URL=${home.env.PULUMI_BACKEND_URL}   # the state backend you use now (PULUMI_BACKEND_URL)`,
        );
        const projectDir = join(bed.dir, "adopted");
        await checkAdoption(bed, adoption, {
          async adopt() {
            const outputs: string[] = [];
            for (const block of printedBlocks(adoption.next, bed.dir))
              outputs.push(...(await runBlock(block, shell, keyAnswers(bed, adoption))));
            bed.printed.push(...outputs);
            return { up: outputs.at(-2)!, preview: outputs.at(-1)! };
          },
          exportState: () => run(cli!.bin, ["stack", "export"], { cwd: projectDir, env: shell }),
          destroy: () => run(cli!.bin, ["destroy", "--yes", "--skip-preview", "--non-interactive"], { cwd: projectDir, env: shell }),
        });
        // The engine fetched the plugin the program names, once.
        expect(server.downloads().slice(downloaded)).toEqual([basename(release!.tarball)]);
      } finally {
        home.remove();
        await bed.close();
      }
    },
    TIMEOUT,
  );

  // This build machine cannot build the Python and Go language hosts (docs/layout.md): the written project's
  // requirements are installed as the printed commands say, and the steps that follow (the stack, its settings, up,
  // a preview) run through the page's Automation API driver, which serves the language runtime itself: the printed
  // stack and settings lines, then python.md's driver.py beside the program, or go.md's main.go in place of the
  // written one, as the pages give them.
  it.for([
    ["Python", "python"],
    ["Go", "go"],
  ])(
    "%s: the written project's requirements installed with the language's tools, the first up imports every object and makes none",
    { timeout: TIMEOUT },
    async ([, language]) => {
      const bed = await startBed(`gms-discover-adopt-${language}`);
      const installed = installPlugin(cli!, release!);
      try {
        const adoption = await bed.adopt(language!, "adopted");
        const [, project] = printedBlocks(adoption.next, bed.dir);
        const init = project!.lines.findIndex((line) => line.startsWith("pulumi stack init"));
        const setup = project!.lines.slice(0, init);
        const releaseDir = dirname(release!.tarball);
        let operation: (step: string) => Promise<string>;
        let stackDir: string;
        if (language === "python") {
          // python3 -m venv venv, then venv/bin/pip install pulumi pulumi-gms==<version>: the wheel from the release.
          expect(setup).toEqual(["python3 -m venv venv", `venv/bin/pip install pulumi pulumi-gms==${release!.version}`]);
          const pip = { ...process.env, PIP_FIND_LINKS: join(releaseDir, "python"), PIP_DISABLE_PIP_VERSION_CHECK: "1" };
          await runBlock({ cwd: project!.cwd, lines: setup }, pip, () => undefined);
          writeFileSync(join(project!.cwd, "driver.py"), pageFile("docs/python.md", "driver.py"));
          const venv = join(project!.cwd, "venv", "bin");
          const shell = { ...withPath(installed.env, venv), GMS_BASE_URL: bed.emulator.url, GMS_API_KEY: ACME_KEY };
          const up = project!.lines.findIndex((line) => line.startsWith("pulumi up"));
          bed.printed.push(
            ...(await runBlock({ cwd: project!.cwd, lines: project!.lines.slice(init, up) }, shell, keyAnswers(bed, adoption))),
          );
          operation = (step) => run(join(venv, "python"), ["driver.py", step], { cwd: project!.cwd, env: shell });
          stackDir = project!.cwd;
        } else {
          // go mod init, the SDK's module (the release's, where the printed `go get` would fetch the published one), go mod tidy.
          expect(setup[0]).toBe("go mod init adopted");
          await runBlock({ cwd: project!.cwd, lines: [setup[0]!] }, process.env, () => undefined);
          const problem = goModuleOnRelease(project!.cwd, release!, "adopted");
          if (problem) throw new Error(`${FILE}: ${typeof problem === "string" ? problem : problem.toolchainAbsent}`);
          await runBlock({ cwd: project!.cwd, lines: [setup[2]!, "go build -o adopted ."] }, process.env, () => undefined);
          // go.md's main.go, as the page gives it, in place of the written one, built as the page says.
          writeFileSync(join(project!.cwd, "main.go"), pageFile("docs/go.md", "main.go"));
          await runBlock({ cwd: project!.cwd, lines: ["go mod tidy", "go build -o adopted ."] }, process.env, () => undefined);
          const shell = { ...installed.env, GMS_BASE_URL: bed.emulator.url, GMS_API_KEY: ACME_KEY };
          const up = project!.lines.findIndex((line) => line.startsWith("pulumi up"));
          bed.printed.push(
            ...(await runBlock({ cwd: project!.cwd, lines: project!.lines.slice(init, up) }, shell, keyAnswers(bed, adoption))),
          );
          operation = (step) => run(join(project!.cwd, "adopted"), [step], { cwd: project!.cwd, env: shell });
          stackDir = project!.cwd;
        }
        await checkAdoption(bed, adoption, {
          adopt: async () => ({ up: await operation("up"), preview: await operation("preview") }),
          exportState: () => run(cli!.bin, ["stack", "export", "--stack", "dev"], { cwd: stackDir, env: installed.env }),
          destroy: () => operation("destroy"),
        });
      } finally {
        installed.remove();
        await bed.close();
      }
    },
  );
});

/**
 * TypeScript on the real CLI with the plugin this checkout builds on PATH (as the engine finds a plugin there), so no
 * release is needed: the printed setup makes the package an ES module (npm init and npm pkg set, run as printed; the
 * package copied in where `npm install` would fetch it from the registry), the printed stack and settings lines run
 * as written, and typescript.md's `driver.ts`, copied into the folder unchanged, runs up, the preview and destroy, as
 * the page says for a CLI without the Node.js language host (this build machine's).
 */
describe.skipIf(!localCli || !go)(`adopting into TypeScript through typescript.md's driver: ${cliName(localCli)}`, () => {
  it("the first up imports every object and makes none; a preview finds no change", { timeout: TIMEOUT }, async () => {
    const root = mkdtempSync(join(tmpdir(), "gms-discover-adopt-typescript-"));
    for (const folder of ["bin", "state"]) mkdirSync(join(root, folder));
    const plugin = join(ROOT, "dist", "plugin", "main.js");
    chmodSync(plugin, 0o755);
    symlinkSync(plugin, join(root, "bin", "pulumi-resource-gms"));
    const env = cliEnvironment(
      localCli!,
      { backendDir: join(root, "state"), passphrase: "adopt-typescript", pulumiHome: join(root, "home") },
      { ...process.env, PATH: [join(root, "bin"), process.env.PATH ?? ""].join(delimiter) },
    );
    const bed = await startBed("gms-discover-adopt-typescript", env);
    try {
      const adoption = await bed.adopt("typescript", "adopted");
      const [, project] = printedBlocks(adoption.next, bed.dir);
      const init = project!.lines.findIndex((line) => line.startsWith("pulumi stack init"));
      const up = project!.lines.findIndex((line) => line.startsWith("pulumi up"));
      const setup = project!.lines.slice(0, init);
      expect(setup).toEqual([
        "npm init --yes",
        "npm pkg set type=module",
        `npm install @pulumi/pulumi pulumi-gms@${packageManifest.version}`,
      ]);
      await runBlock({ cwd: project!.cwd, lines: setup.slice(0, 2) }, env, () => undefined);
      expect(JSON.parse(readFileSync(join(project!.cwd, "package.json"), "utf8")).type).toBe("module");
      installPackageCopy(project!.cwd);
      writeFileSync(join(project!.cwd, "driver.ts"), pageFile("docs/typescript.md", "driver.ts"));
      const shell = { ...env, GMS_BASE_URL: bed.emulator.url, GMS_API_KEY: ACME_KEY };
      bed.printed.push(...(await runBlock({ cwd: project!.cwd, lines: project!.lines.slice(init, up) }, shell, keyAnswers(bed, adoption))));
      const driver = (operation: string) => run(process.execPath, ["driver.ts", operation], { cwd: project!.cwd, env: shell });
      await checkAdoption(bed, adoption, {
        adopt: async () => ({ up: await driver("up"), preview: await driver("preview") }),
        exportState: () => run(localCli!.bin, ["stack", "export", "--stack", "dev"], { cwd: project!.cwd, env: shell }),
        destroy: () => driver("destroy"),
      });
    } finally {
      await bed.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
