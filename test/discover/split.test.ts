/**
 * `pulumi-gms discover --split-by app` on a workspace of 2,000 objects across 20 Apps (./estate.ts): the shared
 * project and one project per App, the stack list `gms-stacks.yaml` in the format the GitOps pipeline reads (checked
 * here by its rules: known keys, names of [a-z0-9-]+, a dir+stack once, every dependsOn an entry, no cycle), an App's
 * reads of the shared stack's outputs through its StackReference, and the values that name another App's object
 * written as GUIDs with a warning. The TypeScript and Python programs come from the converter (Go, required under
 * CI=true); Go is refused, saying why, where a program reads the shared stack's outputs.
 *
 * Then, on the real CLI with the release's plugin (both required under CI=true), the commands discover printed, run
 * as written (./printed.ts): the shared project's first, then the App projects' four at a time, as the pipeline's
 * matrix jobs run a level's stacks. The first `up` of every stack imports each of its objects and changes nothing, the
 * preview after it finds no change, and a full listing of the service afterwards equals the one before. The engine
 * downloads the plugin once, from the release laid out on a loopback server, as on a user's machine. No key shows in
 * anything printed or written. The test prints how long each part took.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { z } from "zod";
import type { PlainReference } from "../../src/discover/adopt";
import type { Discovery } from "../../src/discover/plan";
import type { WrittenProject } from "../../src/discover/render";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { goPresent } from "../go-present";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { type DownloadServer, startDownloadServer } from "../release/download-server";
import { downloadingSandbox, type InstalledPlugin, releaseFor } from "../release/harness";
import { APPS, ESTATE_FIXTURES, ESTATE_KEY, type Estate, fullListing, seedEstate } from "./estate";
import { printedBlocks, resourceCounts, runBlock } from "./printed";
import { runDiscover } from "./run";

const FILE = "discover/split.test.ts";
const TIMEOUT = 1_200_000;
const go = goPresent(FILE, "the split programs in TypeScript and Python (the converter is a Go program)");
const release = releaseFor(FILE);
const cli = release && pulumiCliFor(FILE);

type Split = Discovery & { directory: string; stackList: string; projects: WrittenProject[]; references: PlainReference[] };

/** The stack list's format, as the GitOps pipeline reads it: unknown keys are errors. */
const Entry = z.strictObject({
  dir: z.string().min(1),
  stack: z.string().min(1),
  config: z.string().optional(),
  dependsOn: z.array(z.string()).optional(),
});
const StackList = z.strictObject({
  shared: z.array(z.string()).optional(),
  stacks: z.record(z.string().regex(/^[a-z0-9-]+$/), Entry),
});

/** The rules across entries: each dir+stack once, every dependsOn an entry, no cycle. */
function checkStackList(list: z.infer<typeof StackList>): void {
  const entries = Object.entries(list.stacks);
  const places = entries.map(([, entry]) => `${entry.dir}@${entry.stack}`);
  expect(new Set(places).size).toBe(places.length);
  for (const [, entry] of entries) for (const needed of entry.dependsOn ?? []) expect(Object.keys(list.stacks)).toContain(needed);
  const done = new Set<string>();
  const visit = (name: string, path: string[]) => {
    expect(path, `a cycle through ${name}`).not.toContain(name);
    if (done.has(name)) return;
    for (const needed of list.stacks[name]!.dependsOn ?? []) visit(needed, [...path, name]);
    done.add(name);
  };
  for (const [name] of entries) visit(name, []);
}

const elapsed = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

describe("pulumi-gms discover --split-by app on a workspace of 2,000 objects across 20 Apps", () => {
  let emulator: RunningEmulator;
  let estate: Estate;
  let root: string;
  let before: Record<string, unknown>;
  /** Everything discover printed and wrote, to search for keys. */
  const printed: string[] = [];
  const env = () => ({ ...process.env, GMS_BASE_URL: emulator.url, GMS_API_KEY: ESTATE_KEY });
  const split = async (out: string, ...argv: string[]): Promise<Split> => {
    const run = await runDiscover(["--json", "--split-by", "app", "--out", out, ...argv], { env: env(), cwd: root });
    printed.push(run.out, run.err);
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    return JSON.parse(run.out) as Split;
  };
  let yaml: Split;

  beforeAll(async () => {
    const started = performance.now();
    emulator = await startEmulator({ port: 0, db: ":memory:", fixtures: ESTATE_FIXTURES, fineTuneSeconds: 0 });
    estate = await seedEstate(emulator.url);
    before = await fullListing(emulator.url);
    root = mkdtempSync(join(tmpdir(), "gms-discover-split-"));
    console.log(`${FILE}: seeded ${estate.made} objects through the API and listed them in ${elapsed(started)}`);
    const discovered = performance.now();
    yaml = await split("estate");
    console.log(`${FILE}: discover --split-by app wrote ${yaml.projects.length} projects in ${elapsed(discovered)}`);
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("writes the shared project and one per App, holding between them every object it lists but the configured Skill", () => {
    expect(yaml.document.resources).toHaveLength(estate.made + APPS);
    expect(estate.made + APPS).toBe(2000);
    expect(yaml.leftOut.map((entry) => entry.code)).toEqual(["configured-skill"]);
    const [shared, ...apps] = yaml.projects;
    expect(shared).toMatchObject({ entry: "shared", directory: join("estate", "shared"), project: "estate-shared", dependsOn: [] });
    expect(apps.map((project) => project.entry)).toEqual(Array.from({ length: APPS }, (_, n) => `team-${String(n + 1).padStart(2, "0")}`));
    for (const project of apps) expect(project).toMatchObject({ directory: join("estate", "apps", project.entry!), dependsOn: ["shared"] });
    // 30 Workflows, 21 Datasets, 12 Evals, 10 Experiments, a fine-tune and the App itself; the rest is shared.
    for (const project of apps) expect(project.adopted).toBe(75);
    expect(shared!.adopted).toBe(500);
    expect(yaml.projects.reduce((sum, project) => sum + project.adopted, 0)).toBe(2000);
    expect(readdirSync(join(root, "estate")).sort()).toEqual(["apps", "gms-stacks.yaml", "shared"]);
  });

  it("writes gms-stacks.yaml as the GitOps pipeline reads it: each project its stack, every App's depending on the shared one", () => {
    const text = readFileSync(join(root, yaml.stackList), "utf8");
    printed.push(text);
    const list = StackList.parse(parse(text));
    checkStackList(list);
    expect(Object.keys(list.stacks)).toEqual(yaml.projects.map((project) => project.entry));
    for (const project of yaml.projects) {
      const entry = list.stacks[project.entry!]!;
      expect(entry.stack).toBe("dev");
      expect(join("estate", entry.dir)).toBe(project.directory);
      expect(entry.dependsOn ?? []).toEqual(project.dependsOn);
      expect(readFileSync(join(root, project.file), "utf8")).toMatch(new RegExp(`^name: ${project.project}\n`));
    }
    expect(list.stacks.shared).toEqual({ dir: "shared", stack: "dev" });
  });

  it("exports the shared project's GUIDs per kind; an App's program reads them through its StackReference to the shared stack", () => {
    type Program = {
      resources: Record<string, { type: string; properties: Record<string, unknown> }>;
      outputs: Record<string, Record<string, string>>;
    };
    const program = (project: WrittenProject) => parse(readFileSync(join(root, project.file), "utf8")) as Program;
    const shared = program(yaml.projects[0]!);
    expect(Object.keys(shared.outputs)).toEqual(["connections", "models", "datasets", "skills", "contextSources"]);
    expect(Object.keys(shared.outputs.connections!)).toHaveLength(5);
    for (const [name, value] of Object.entries(shared.outputs.datasets!)) expect(value).toBe(`\${${name}.id}`);
    const team = program(yaml.projects[1]!);
    expect(team.resources.sharedStack).toEqual({
      type: "pulumi:pulumi:StackReference",
      properties: { name: "${pulumi.organization}/estate-shared/${pulumi.stack}" },
    });
    const evals = Object.values(team.resources).filter((resource) => resource.type === "gms:index:Eval");
    const reads = evals.map((resource) => resource.properties.dataset).filter((value) => String(value).startsWith("${sharedStack"));
    expect(reads).toHaveLength(2);
    for (const read of reads) expect(read).toMatch(/^\$\{sharedStack\.outputs\["datasets"\]\["shared_set_\d+"\]\}$/);
    expect(Object.keys(team.outputs)).toEqual(["apps", "workflows", "datasets", "evals", "experiments", "fineTunes"]);
  });

  it("writes a value naming another App's object as its GUID, and warns of each", () => {
    // Each App has one Eval on the next App's Dataset.
    expect(yaml.references).toHaveLength(APPS);
    for (const reference of yaml.references)
      expect(reference).toMatchObject({
        type: "gms:index:Eval",
        property: "dataset",
        target: expect.stringMatching(/^gms:index:Dataset set_\d+_0$/),
        why: expect.stringMatching(/^adopted by the project apps\/team-\d\d$/),
      });
  });

  it("refuses a folder that is not empty (1), and Go where a program reads the shared stack's outputs (1)", async () => {
    const taken = await runDiscover(["--split-by", "app", "--out", "estate"], { env: env(), cwd: root });
    expect(taken.code).toBe(1);
    expect(taken.err).toContain("estate is not empty: give --out a new or empty folder");
    const inGo = await runDiscover(["--split-by", "app", "--language", "go", "--out", "estate-go"], { env: env(), cwd: root });
    expect(inGo.code).toBe(1);
    expect(inGo.err).toContain("the Go program generator cannot read a value of the shared stack's outputs, which check_");
    expect(inGo.err).toMatch(/\.dataset and 37 more need: use --language yaml, typescript or python with --split-by app\n$/);
    expect(readdirSync(root)).not.toContain("estate-go");
  });

  it.skipIf(!go).for([
    ["typescript", "index.ts", "sharedStack.outputs.datasets?.shared_set_"],
    ["python", "__main__.py", 'shared_stack.outputs["datasets"]["shared_set_'],
  ])(
    "writes the split in %s, each App's program reading the shared stack as the YAML one does",
    { timeout: TIMEOUT },
    async ([language, file, read]) => {
      const converted = await split(`estate-${language}`, "--language", language!);
      expect(converted.projects.map((project) => project.file)).toEqual(
        yaml.projects.map((project) => project.file.replace(/^estate/, `estate-${language}`).replace(/Pulumi\.yaml$/, file!)),
      );
      const team = readFileSync(join(root, converted.projects[1]!.file), "utf8");
      expect(team).toContain("StackReference(");
      expect(team.split(read!).length - 1).toBe(2);
    },
  );

  describe.skipIf(!cli)(`the printed commands, run as written on the real CLI with the release's plugin: ${cliName(cli)}`, () => {
    let server: DownloadServer;
    let home: InstalledPlugin;
    beforeAll(async () => {
      server = await startDownloadServer(dirname(release!.tarball), release!.version);
      home = downloadingSandbox(cli!, release!, server);
    });
    afterAll(async () => {
      await server?.close();
      home?.remove();
    });

    it(
      "the first up of every stack imports each of its objects and changes nothing; the service then holds what it held",
      async () => {
        // The user's shell: the CLI and its state backend, the passphrase, the service's key; discover in the same.
        const shell: NodeJS.ProcessEnv = { ...home.env, GMS_BASE_URL: emulator.url, GMS_API_KEY: ESTATE_KEY };
        const started = performance.now();
        const run = await runDiscover(["--json", "--split-by", "app", "--out", "adopt"], { env: shell, cwd: root });
        printed.push(run.out, run.err);
        expect(run.code, run.err).toBe(0);
        const adoption = JSON.parse(run.out) as Split;
        expect(adoption.next[0]).toBe(
          `export PULUMI_BACKEND_URL=${shell.PULUMI_BACKEND_URL}   # the state backend you use now (PULUMI_BACKEND_URL)`,
        );
        const keyOf = new Map(
          adoption.configKeys.map((key) => {
            const guid = adoption.document.resources.find((entry) => entry.name === key.resource)!.id;
            return [`pulumi config set --secret ${key.configKey}`, estate.keys.get(guid)!];
          }),
        );
        expect(keyOf.size).toBe(15);
        const answers = (line: string) => keyOf.get(line.split("   #")[0]!);
        const [login, shared, ...apps] = printedBlocks(adoption.next, root);
        expect(login!.lines).toHaveLength(1);
        expect(apps).toHaveLength(APPS);

        const outputs = await runBlock(login!, shell, answers);
        const sharedStarted = performance.now();
        outputs.push(...(await runBlock(shared!, shell, answers)));
        const sharedTook = elapsed(sharedStarted);
        const level = [...apps];
        const appsStarted = performance.now();
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            for (let block = level.shift(); block; block = level.shift()) outputs.push(...(await runBlock(block, shell, answers)));
          }),
        );
        console.log(
          `${FILE}: the printed commands of ${adoption.projects.length} stacks ran in ${elapsed(started)}: the shared stack's ` +
            `(${yaml.projects[0]!.adopted} objects, ${keyOf.size} keys) in ${sharedTook}, the ${APPS} Apps' four at a time in ${elapsed(appsStarted)}`,
        );

        // Each project's `pulumi up` imported every one of its objects, and nothing else happened but the stack's creation.
        const ups = outputs.filter((output) => output.includes("Resources:") && /\d+ imported/.test(output));
        expect(ups).toHaveLength(adoption.projects.length);
        const imported = ups.map((output) => resourceCounts(output));
        for (const counts of imported) expect(Object.keys(counts).sort()).toEqual(["created", "imported"]);
        expect(imported.map((counts) => counts.imported!).sort((a, b) => a - b)).toEqual(
          adoption.projects.map((project) => project.adopted).sort((a, b) => a - b),
        );
        expect(imported.every((counts) => counts.created === 1)).toBe(true);
        // The preview after each finds every resource unchanged.
        const previews = outputs.filter((output) => output.includes("Resources:") && !/\d+ imported/.test(output));
        expect(previews.map((output) => resourceCounts(output)).sort((a, b) => a.unchanged! - b.unchanged!)).toEqual(
          adoption.projects.map((project) => ({ unchanged: project.adopted + 1 })).sort((a, b) => a.unchanged - b.unchanged),
        );
        expect(await fullListing(emulator.url)).toEqual(before);
        // The plugin came once, by the engine's own download.
        expect(server.downloads()).toEqual([release!.tarball.split("/").at(-1)]);
        for (const text of [...printed, ...outputs])
          for (const key of [ESTATE_KEY, ...estate.keys.values()]) expect(text).not.toContain(key);
      },
      TIMEOUT,
    );
  });
});
