/**
 * `pulumi-gms discover --language`: the program that adopts a whole workspace, seeded through the API with several
 * objects of every kind (twins of one name among them). The YAML program is checked as data (every object imported by
 * its GUID, keys read from secret config, links between objects as references); the TypeScript, Python and Go forms
 * come from the examples' converter (Go, required under CI=true). Then each runs on the real CLI: YAML as a project,
 * Python and Go through the Automation API drivers of the examples, with the release's plugin. Its first `up`
 * imports every object and makes none, a preview finds no change, and destroy deletes what it adopted. No key shows
 * in any file, output or stack export.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Discovery } from "../../src/discover/plan";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { KIND_NAMES } from "../../src/provider/kind";
import { LANGUAGE_DRIVERS } from "../examples/drivers";
import { goPresent } from "../go-present";
import { startCliProject, yamlCliFor } from "../plugin/cli-project";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { ACME_KEY, type FixtureLookups, fixtureLookups, KINDS_FIXTURES } from "../pulumi-cli/kinds-fixtures";
import { installPlugin, releaseFor } from "../release/harness";
import { run, withPath } from "../release/scenario";
import { runDiscover } from "./run";
import { type Seeded, seedWorkspace } from "./seed";

const FILE = "discover/adopt.test.ts";
const TIMEOUT = 600_000;
const go = goPresent(FILE, "the programs in TypeScript, Python and Go (the converter is a Go program)");
const yamlCli = yamlCliFor(FILE);
const release = go ? releaseFor(FILE) : undefined;
const cli = release && pulumiCliFor(FILE);

type Adoption = Discovery & { directory: string; file: string };
interface Program {
  name: string;
  config?: Record<string, { type: string; secret: boolean }>;
  resources: Record<string, { type: string; properties: Record<string, unknown>; options: { import: string } }>;
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
  /** Discover with --json, which must succeed. */
  adopt(language: string, out: string): Promise<Adoption>;
  /** What the service holds now, by kind: the GUIDs, sorted. */
  holdings(): Promise<Record<string, string[]>>;
  close(): Promise<void>;
}

async function startBed(prefix: string): Promise<Bed> {
  const emulator = await startEmulator({ port: 0, db: ":memory:", fixtures: KINDS_FIXTURES, fineTuneSeconds: 0 });
  const fixtures = await fixtureLookups(emulator);
  const seeded = await seedWorkspace(fixtures);
  // Text that Pulumi YAML would read as an interpolation, were it not escaped.
  const literal = await fixtures.api("POST", "/apps", { name: "Costs ${region}", description: "100% $${x}" });
  expect(literal.status).toBe(200);
  seeded.guids.App.push(literal.body.guid);
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const printed: string[] = [];
  const env = { ...process.env, GMS_BASE_URL: emulator.url, GMS_API_KEY: ACME_KEY };
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
    async adopt(language, out) {
      const result = await discover("--json", "--language", language, "--out", out);
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

/** The stack's config: the service, its key, and each config key the program reads, set to the key it stands for. */
function stackSettings(bed: Bed, adoption: Adoption): Record<string, { value: string; secret: boolean }> {
  const idOf = new Map(adoption.document.resources.map((entry) => [entry.name, entry.id]));
  return {
    "gms:baseUrl": { value: bed.emulator.url, secret: false },
    "gms:apiKey": { value: ACME_KEY, secret: true },
    ...Object.fromEntries(
      adoption.configKeys.map((key) => [key.configKey, { value: bed.seeded.keys.get(idOf.get(key.resource)!)!, secret: true }]),
    ),
  };
}

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
  steps: Record<"up" | "preview" | "exportState" | "destroy", () => Promise<string>>,
): Promise<void> {
  const before = await bed.holdings();
  const up = await steps.up();
  expect(up).toMatch(new RegExp(`${adoption.document.resources.length} imported`));
  expect(await bed.holdings()).toEqual(before);
  const preview = await steps.preview();
  const exported = await steps.exportState();
  expect(exported).toContain("ciphertext");
  const destroy = await steps.destroy();
  const left = Object.values(await bed.holdings()).flat();
  for (const entry of adoption.document.resources) expect(left).not.toContain(entry.id);
  expectNoKey(bed, [...bed.printed, up, preview, exported, destroy]);
}

describe("pulumi-gms discover --language against the emulator", () => {
  let bed: Bed;
  beforeAll(async () => {
    bed = await startBed("gms-discover-adopt");
  }, TIMEOUT);
  afterAll(() => bed?.close());

  it("writes a YAML program that imports every object by its GUID, reads each key from secret config and links objects by reference", async () => {
    const adoption = await bed.adopt("yaml", "adopted");
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

    // What to run next, in the new folder.
    expect(adoption.next[0]).toBe("cd adopted");
    expect(adoption.next.slice(-2)).toEqual(["pulumi up", "pulumi preview --expect-no-changes"]);
    expect(adoption.next).toContain(`pulumi config set gms:baseUrl ${bed.emulator.url.replace(/\/$/, "")}`);
    for (const key of adoption.configKeys) expect(adoption.next).toContain(`pulumi config set --secret ${key.configKey}`);
    expectNoKey(bed);
  });

  it("prints a summary that says what it wrote and what to run, without --json", async () => {
    const { code, out, err } = await bed.discover("--language", "yaml", "--out", "summary");
    expect(code).toBe(0);
    expect(out).toBe("");
    expect(err).toMatch(/Wrote summary\/Pulumi\.yaml: a yaml program that adopts \d+ objects/);
    expect(err).toContain("the program reads each from a secret config value");
    expect(err).toMatch(/Next:\n {2}cd summary\n/);
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

  it.skipIf(!go).for([
    ["typescript", "index.ts", "nodejs", 'import: "'],
    ["python", "__main__.py", "python", 'import_="'],
    ["go", "main.go", "go", "pulumi.Import(pulumi.ID("],
  ])(
    "writes the %s program, converted from the YAML one, with its Pulumi.yaml",
    { timeout: TIMEOUT },
    async ([language, file, runtime, importOption]) => {
      const adoption = await bed.adopt(language!, `adopted-${language}`);
      expect(adoption.file).toBe(join(`adopted-${language}`, file!));
      const source = readFileSync(join(bed.dir, adoption.file), "utf8");
      expect(source.split(importOption!).length - 1).toBe(adoptable(bed.seeded).length);
      for (const guid of adoptable(bed.seeded)) expect(source).toContain(guid);
      const project = parse(readFileSync(join(bed.dir, `adopted-${language}`, "Pulumi.yaml"), "utf8")) as { runtime: unknown };
      expect(project.runtime).toEqual(language === "python" ? { name: runtime, options: { virtualenv: "venv" } } : runtime);
      expectNoKey(bed);
    },
  );
});

describe.skipIf(!yamlCli)(`adopting a workspace with the YAML program on the real CLI: ${cliName(yamlCli)}`, () => {
  it(
    "imports every object in the first up, making none; a preview finds no change; destroy deletes what it adopted",
    async () => {
      const bed = await startBed("gms-discover-adopt-yaml");
      const adoption = await bed.adopt("yaml", "adopted");
      const project = startCliProject(yamlCli!, "gms-discover-adopt-yaml-cli", readFileSync(join(bed.dir, adoption.file), "utf8"));
      try {
        const settings = stackSettings(bed, adoption);
        await project.initStack(
          "dev",
          Object.fromEntries(Object.entries(settings).map(([key, { value, secret }]) => [key, secret ? { secret: value } : value])),
        );
        await checkAdoption(bed, adoption, {
          up: () => project.pulumi("up", "--yes"),
          preview: () => project.pulumi("preview", "--expect-no-changes"),
          exportState: () => project.pulumi("stack", "export"),
          destroy: () => project.pulumi("destroy", "--yes", "--skip-preview"),
        });
      } finally {
        project.close();
        await bed.close();
      }
    },
    TIMEOUT,
  );
});

describe.skipIf(!cli)(`adopting a workspace in Python and Go on the real CLI with the release's plugin: ${cliName(cli)}`, () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "gms-discover-adopt-languages-"));
  });
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it.for([
    ["Python", "python"],
    ["Go", "go"],
  ])(
    "%s: the first up imports every object and makes none, a preview finds no change, destroy deletes them",
    { timeout: TIMEOUT },
    async ([name, language]) => {
      const bed = await startBed(`gms-discover-adopt-${language}`);
      const installed = installPlugin(cli!, release!);
      try {
        const adoption = await bed.adopt(language!, "adopted");
        const program = { name: "adopted", file: () => join(bed.dir, adoption.file) };
        const driverDir = join(root, language!);
        // The program's folder, where the driver puts the program file and runs.
        const programDir = join(driverDir, "program");
        mkdirSync(programDir, { recursive: true });
        const driver = await LANGUAGE_DRIVERS.find((candidate) => candidate.name === name)!.prepare(driverDir, release!, [program]);
        if (typeof driver === "string" || "toolchainAbsent" in driver) {
          const reason = typeof driver === "string" ? driver : driver.toolchainAbsent;
          if (process.env.CI === "true") throw new Error(`${FILE}: required under CI=true: ${reason}`);
          console.log(`${FILE}: skipping ${name}: ${reason}`);
          return;
        }
        driver.place(program, programDir);
        const env = withPath(installed.env, ...driver.path);
        const driverEnv = {
          ...env,
          PULUMI_CLI_ROOT: dirname(cli!.dir),
          GMS_EXAMPLE_CONFIG: JSON.stringify(stackSettings(bed, adoption)),
        };
        const operation = (step: string) =>
          run(driver.command[0]!, [...driver.command.slice(1), "adopted", "dev", step], { cwd: programDir, env: driverEnv });

        await checkAdoption(bed, adoption, {
          up: () => operation("up"),
          preview: () => operation("preview"),
          exportState: () => run(cli!.bin, ["stack", "export", "--stack", "dev"], { cwd: programDir, env }),
          destroy: () => operation("destroy"),
        });
      } finally {
        installed.remove();
        await bed.close();
      }
    },
  );
});
