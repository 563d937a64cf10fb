/**
 * `npm run upgrade:record -- --release <dir> [--checkout <dir>]`: records a release's upgrade corpus in
 * `test/upgrade/<version>/` (its shape: scripts/upgrade/corpus.mts), the stacks a user of that release has after `up`,
 * which the upgrade suites (test/upgrade/*.test.ts) then preview, refresh, change and destroy with the code under test:
 *
 * - every example of examples/programs/ as the Pulumi YAML program it is, on the release's plugin, installed from its
 *   tarball as a user installs a plugin they were handed (`pulumi plugin install resource gms <version> --file ...`);
 * - examples/quickstart on the dynamic resources of the release's npm package, as `npm pack` makes it;
 * - the same program on the native classes (`gms.native.<Kind>`, its lookups `gms.native.get...`), on the plugin.
 *
 * Everything runs on the release's own code: the emulator and the Automation API driver come from the packed package,
 * the plugin from the release's tarball; only the Pulumi CLI is this repository's (`npm run pulumi:install`). For each
 * stack it keeps the program with its settings file (the passphrase salt), `pulumi stack export`, and the emulator's
 * database, compacted; and it proves the stack settled first: a preview with the release changes nothing.
 *
 * `--release` is the folder `npm run dist` wrote for the release (its plugin tarball for this machine is what is used).
 * `--checkout` is a checkout of the release with its node_modules (by default this repository): its package.json
 * must hold the release's version and no tracked file may differ from its commit, since its examples and its `npm pack`
 * stand for the release. A corpus is never regenerated: the script refuses a version already recorded. A failure
 * exits 1 and says why, leaving nothing in test/upgrade/; a usage error exits 2.
 */
import { type SpawnOptions, spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { parse } from "yaml";
import { PLUGIN, tarballName } from "./dist/executables.mts";
import { hostPlatform } from "./dist/platforms.mts";
import {
  CORPORA,
  CORPUS_FILE,
  type Corpus,
  DATABASE_FILE,
  EXPORT_FILE,
  type FieldEdit,
  type Form,
  PROGRAM_DIR,
  type ProgramChange,
  ROOT,
  type RecordedStack,
  SCHEMA_FILE,
  STACK_FILE,
  applyEdits,
  settingsFile,
  writeJson,
} from "./upgrade/corpus.mts";

const USAGE = `usage: npm run upgrade:record -- --release <dir> [--checkout <dir>]

  --release <dir>    the release's artefacts as \`npm run dist\` wrote them (the plugin tarball of this machine is used)
  --checkout <dir>   a checkout of the release with its node_modules (default: this repository); its examples are
                     recorded and \`npm pack\` there makes the release's npm package`;

class UsageError extends Error {
  override readonly name = "UsageError";
}
class RecordError extends Error {
  override readonly name = "RecordError";
}

const STACK = "dev";
const PASSPHRASE = "pulumi-gms upgrade corpus passphrase";
const GENERATED_FORMS = new Set(["typescript", "python", "go"]);
/** What of examples/quickstart is not the program: the emulator's fixtures (in the database), its README and type-check settings. */
const NOT_THE_QUICKSTART = new Set(["node_modules", "README.md", "fixtures.yaml", "tsconfig.json"]);

/**
 * What the suites change in the quickstart: the Workflow's name, updated in place; and (dynamic resources) the Skill,
 * taken out of the program, which the provider serialized in the state deletes.
 */
const QUICKSTART_EDIT = {
  resource: "triage",
  kind: "Workflow",
  property: "name",
  path: ["name"],
  value: "Triage (edited)",
  edits: [{ file: "index.ts", find: '{ name: "Triage", app: app.id }', replace: '{ name: "Triage (edited)", app: app.id }' }],
};
const QUICKSTART_REMOVAL = {
  resource: "web-search",
  kind: "Skill",
  edits: [
    {
      file: "index.ts",
      find: 'const search = new gms.Skill("web-search", { name: config.get("skill") ?? "web-search", type: "web" });\n',
      replace: "",
    },
    { file: "index.ts", find: "export const skillGuid = search.guid;\n", replace: "" },
  ],
};

const started = Date.now();
const progress = (line: string) => console.log(`upgrade:record [${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);

/** The release's modules this script runs: its emulator and its Automation API engine. */
interface ReleaseModules {
  startEmulator(options: Record<string, unknown>): Promise<{ url: string; apiKey: string; close(): Promise<void> }>;
  PulumiCliEngine: new (
    options: Record<string, unknown>,
  ) => {
    up(): Promise<unknown>;
    preview(): Promise<{ counts: Record<string, number> }>;
    environment(): NodeJS.ProcessEnv;
  };
}

interface Setup {
  version: string;
  checkout: string;
  tarball: string;
  cli: { bin: string; dir: string; version: string };
  commit: string | undefined;
  /** The scratch folder: the packed package, PULUMI_HOME, the backends, the corpus before it is moved into place. */
  work: string;
  /** The packed package unpacked, its dependencies linked from the checkout's node_modules. */
  installed: string;
  home: string;
  release: ReleaseModules;
}

const OPTIONS = { release: { type: "string" }, checkout: { type: "string" }, help: { type: "boolean" } } as const;

function options(argv: string[]): { release: string; checkout: string } {
  let values: { release?: string; checkout?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (!values.release) throw new UsageError("--release <dir> is required: the folder `npm run dist` wrote for the release");
  return { release: resolve(values.release), checkout: resolve(values.checkout ?? ROOT) };
}

/** Runs a command, resolving with what it printed; rejects with the command and its output when it fails. */
function run(command: string, args: string[], options: SpawnOptions): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolvePromise(output) : reject(new RecordError(`${command} ${args.join(" ")} exited ${code}:\n${output}`)),
    );
  });
}

/** The release's version, from the name of its plugin tarball for this machine. */
function releaseTarball(dir: string): { version: string; tarball: string } {
  const host = hostPlatform();
  if (!host) throw new RecordError(`providers ship no plugin for ${process.platform}-${process.arch}`);
  if (!existsSync(dir)) throw new UsageError(`--release ${dir}: no such folder`);
  const [before, after] = tarballName(PLUGIN, "\0", host)
    .split("\0")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp(`^${before}(.+)${after}$`);
  const found = readdirSync(dir).flatMap((name) => {
    const version = pattern.exec(name)?.[1];
    return version ? [{ version, tarball: join(dir, name) }] : [];
  });
  if (found.length !== 1)
    throw new UsageError(
      `--release ${dir}: ${found.length === 0 ? "no" : "more than one"} plugin tarball for ${host.name} ` +
        `(${tarballName(PLUGIN, "<version>", host)}); name the folder \`npm run dist\` wrote for one release`,
    );
  return found[0]!;
}

/** The commit of a git checkout, or undefined when it is none; throws when a tracked file differs from it. */
function checkoutCommit(checkout: string): string | undefined {
  const head = spawnSync("git", ["rev-parse", "HEAD"], { cwd: checkout, encoding: "utf8" });
  if (head.status !== 0) return undefined;
  const changed = spawnSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: checkout, encoding: "utf8" }).stdout.trim();
  if (changed)
    throw new RecordError(
      `${checkout} has changes to tracked files, so it is not the release it stands for:\n${changed}\n` +
        "Record from a clean checkout of the release's tag (`--checkout <dir>`).",
    );
  return head.stdout.trim();
}

/** The Pulumi CLI this repository built, with the YAML language host and the dynamic-provider launcher beside it. */
function pulumiCli(): Setup["cli"] {
  const dir = join(ROOT, ".pulumi-cli", "bin");
  const bin = join(dir, "pulumi");
  const missing = [bin, join(dir, "pulumi-language-yaml"), join(dir, "pulumi-resource-pulumi-nodejs")].filter((file) => !existsSync(file));
  if (missing.length > 0) throw new RecordError(`no ${missing.join(", ")}: \`npm run pulumi:install\` builds the CLI and its hosts`);
  const version = spawnSync(bin, ["version"], {
    encoding: "utf8",
    env: { ...process.env, PULUMI_SKIP_UPDATE_CHECK: "true" },
  }).stdout.trim();
  return { bin, dir, version };
}

/** Links each runtime dependency of the package installed at `installed` from the checkout's node_modules, into `nodeModules`. */
function linkDependencies(installed: string, nodeModules: string, checkout: string): void {
  const { dependencies = {} } = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  for (const dependency of Object.keys(dependencies)) {
    const source = join(checkout, "node_modules", dependency);
    if (!existsSync(join(source, "package.json")))
      throw new RecordError(`${checkout} has no node_modules/${dependency}: run \`npm ci\` there`);
    const link = join(nodeModules, dependency);
    if (existsSync(link)) continue;
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(source, link, "dir");
  }
}

/** Installs a copy of the packed package into `programDir` (a copy, as `npm install` leaves it: see src/testing/program-dir.ts). */
function installRelease(setup: Setup, programDir: string): void {
  const target = join(programDir, "node_modules", "pulumi-gms");
  cpSync(setup.installed, target, { recursive: true });
  linkDependencies(target, join(programDir, "node_modules"), setup.checkout);
}

async function prepare(release: string, checkout: string): Promise<Setup> {
  const { version, tarball } = releaseTarball(release);
  const checkoutVersion = (JSON.parse(readFileSync(join(checkout, "package.json"), "utf8")) as { version: string }).version;
  if (checkoutVersion !== version)
    throw new UsageError(
      `--checkout ${checkout} is version ${checkoutVersion}, the release ${version}: record from a checkout of the release's tag`,
    );
  if (existsSync(join(CORPORA, version)))
    throw new RecordError(
      `test/upgrade/${version} is recorded already, and a corpus is never regenerated: it stands for what ${version} left behind. ` +
        "Record the next release instead.",
    );
  const commit = checkoutCommit(checkout);
  const cli = pulumiCli();
  const work = mkdtempSync(join(tmpdir(), "gms-upgrade-record-"));
  progress(`recording ${version} from ${checkout}${commit ? ` (${commit.slice(0, 12)})` : ""} with pulumi ${cli.version}, in ${work}`);
  const packed = (await run("npm", ["pack", "--silent", "--pack-destination", work], { cwd: checkout })).trim().split("\n").at(-1)!;
  progress(`npm pack: ${packed}`);
  const runtime = join(work, "runtime", "node_modules");
  mkdirSync(join(runtime, "pulumi-gms"), { recursive: true });
  await run("tar", ["-xzf", join(work, packed), "-C", join(runtime, "pulumi-gms"), "--strip-components=1"], {});
  const installed = join(runtime, "pulumi-gms");
  linkDependencies(installed, runtime, checkout);
  const load = async (path: string) => (await import(pathToFileURL(join(installed, path)).href)) as Record<string, unknown>;
  const emulator = await load("dist/emulator/index.js");
  const testing = await load("dist/testing/index.js");
  const home = join(work, "home");
  await run(cli.bin, ["plugin", "install", "resource", "gms", version, "--file", tarball], {
    env: cliEnv(cli, home, join(work, "unused")),
  });
  progress(`installed the release's plugin from ${tarball}`);
  return {
    version,
    checkout,
    tarball,
    cli,
    commit,
    work,
    installed,
    home,
    release: {
      startEmulator: emulator.startEmulator as ReleaseModules["startEmulator"],
      PulumiCliEngine: testing.PulumiCliEngine as ReleaseModules["PulumiCliEngine"],
    },
  };
}

/** The CLI's environment: its own home holding the release's plugin (never one on PATH), a file backend, offline. */
function cliEnv(cli: Setup["cli"], home: string, backend: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: [cli.dir, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter),
    PULUMI_HOME: home,
    PULUMI_BACKEND_URL: `file://${backend}`,
    PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_IGNORE_AMBIENT_PLUGINS: "true",
  };
}

/** One small file: the WAL folded in, the smallest page size, no free pages (the emulator turns WAL back on when it opens it). */
function compact(db: string): void {
  const database = new DatabaseSync(db);
  database.exec("PRAGMA journal_mode = DELETE; PRAGMA page_size = 1024; VACUUM;");
  database.close();
  for (const suffix of ["-wal", "-shm", "-journal"]) rmSync(`${db}${suffix}`, { force: true });
}

/** Fails when a secret shows in plain text in what is committed. */
function expectNoSecret(stackDir: string, secrets: string[]): void {
  for (const file of [EXPORT_FILE, join(PROGRAM_DIR, settingsFile(STACK))]) {
    const text = readFileSync(join(stackDir, file), "utf8");
    for (const secret of secrets) if (text.includes(secret)) throw new RecordError(`${file} holds a secret in plain text`);
  }
}

type Schema = { resources: Record<string, { inputProperties?: Record<string, { replaceOnChanges?: boolean; secret?: boolean }> }> };

/** The first leaf of a literal value a program edit can change: a string with no interpolation, or a number. */
function literalLeaf(value: unknown, path: string[]): { path: string[]; value: string | number } | undefined {
  if (typeof value === "number") return { path, value };
  if (typeof value === "string") return value.includes("${") ? undefined : { path, value };
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) {
      if (key.startsWith("fn::")) return undefined;
      const leaf = literalLeaf(inner, [...path, key]);
      if (leaf) return leaf;
    }
  }
  return undefined;
}

/**
 * Edits of examples whose first editable literal (see `yamlEdit`) an upgrade test cannot change long after the
 * recording: a file-backed Context Source is processed again when its splitter settings change, and the signed URL of
 * its upload expires 10 minutes after it. Its wait for indexing changes nothing the service holds and updates in place.
 */
const EXAMPLE_EDITS: Record<string, Omit<FieldEdit, "type">> = {
  "handbook-source": {
    resource: "handbookSource",
    property: "waitForIndexing",
    path: ["waitForIndexing"],
    value: { timeoutSeconds: 240 },
    edits: [{ file: "Pulumi.yaml", find: "waitForIndexing: true\n", replace: "waitForIndexing: { timeoutSeconds: 240 }\n" }],
  },
};

/**
 * The one-field edit of a YAML program: the one `EXAMPLE_EDITS` names, else the first resource (in the program's order)
 * with an input the release's schema updates in place (no replaceOnChanges, not secret) holding a literal, written once
 * in the file as `key: value`; a string gains " (edited)", a number grows by one.
 */
function yamlEdit(projectYaml: string, schema: Schema, example: string): FieldEdit {
  const program = parse(projectYaml) as { resources?: Record<string, { type: string; properties?: Record<string, unknown> }> };
  const named = EXAMPLE_EDITS[example];
  if (named) return { ...named, type: program.resources![named.resource]!.type };
  for (const [resource, { type, properties = {} }] of Object.entries(program.resources ?? {})) {
    const inputs = schema.resources[type]?.inputProperties ?? {};
    for (const [property, value] of Object.entries(properties)) {
      const spec = inputs[property];
      if (!spec || spec.replaceOnChanges || spec.secret) continue;
      const leaf = literalLeaf(value, [property]);
      if (!leaf) continue;
      const key = leaf.path.at(-1)!;
      const find = `${key}: ${leaf.value}\n`;
      if (projectYaml.split(find).length !== 2) continue;
      const next = typeof leaf.value === "number" ? leaf.value + 1 : `${leaf.value} (edited)`;
      return {
        resource,
        type,
        property,
        path: leaf.path,
        value: next,
        edits: [{ file: "Pulumi.yaml", find, replace: `${key}: ${JSON.stringify(next)}\n` }],
      };
    }
  }
  throw new RecordError(`examples/programs/${example}: no resource has an input the service updates in place with a literal value to edit`);
}

/** Proves the edits apply to the recorded program (on a scratch copy), so the suites can make them. */
function checkEdits(setup: Setup, programDir: string, changes: (ProgramChange | undefined)[]): void {
  const scratch = mkdtempSync(join(setup.work, "edit-"));
  cpSync(programDir, scratch, { recursive: true, filter: (source) => !source.includes("node_modules") });
  for (const change of changes) if (change) applyEdits(scratch, change.edits);
}

async function recordYaml(setup: Setup, out: string, example: string, schema: Schema): Promise<string> {
  const name = `yaml-${example}`;
  const source = join(setup.checkout, "examples", "programs", example);
  const stackDir = join(out, name);
  const programDir = join(stackDir, PROGRAM_DIR);
  mkdirSync(programDir, { recursive: true });
  for (const entry of readdirSync(source))
    if (!GENERATED_FORMS.has(entry)) cpSync(join(source, entry), join(programDir, entry), { recursive: true });
  const projectYaml = readFileSync(join(programDir, "Pulumi.yaml"), "utf8");
  const parsed = parse(projectYaml) as { name: string; config?: Record<string, { secret?: boolean }> };
  const secrets = Object.fromEntries(
    Object.entries(parsed.config ?? {})
      .filter(([, setting]) => setting.secret === true)
      .map(([key]) => [key, `sk-upgrade-${example}-${key}`]),
  );
  const db = join(stackDir, DATABASE_FILE);
  const emulatorOptions = { fineTuneSeconds: 1 };
  const emulator = await setup.release.startEmulator({
    port: 0,
    db,
    fixtures: join(setup.checkout, "examples", "programs", "fixtures.json"),
    ...emulatorOptions,
  });
  const env = cliEnv(setup.cli, setup.home, join(setup.work, "backends", name));
  mkdirSync(join(setup.work, "backends", name), { recursive: true });
  const pulumi = (...args: string[]) => run(setup.cli.bin, [...args, "--non-interactive", "--color", "never"], { cwd: programDir, env });
  try {
    await pulumi("stack", "init", STACK);
    await pulumi("config", "set", "gms:baseUrl", emulator.url);
    await pulumi("config", "set", "--secret", "gms:apiKey", emulator.apiKey);
    for (const [key, value] of Object.entries(secrets)) await pulumi("config", "set", "--secret", key, value);
    await pulumi("up", "--yes", "--skip-preview");
    await pulumi("preview", "--expect-no-changes");
    writeFileSync(join(stackDir, EXPORT_FILE), await pulumi("stack", "export"));
    const edit = yamlEdit(projectYaml, schema, example);
    const stack: RecordedStack = {
      name,
      form: "yaml",
      project: parsed.name,
      stack: STACK,
      passphrase: PASSPHRASE,
      baseUrl: emulator.url,
      apiKey: emulator.apiKey,
      secrets,
      emulator: emulatorOptions,
      edit,
    };
    writeJson(join(stackDir, STACK_FILE), stack);
    checkEdits(setup, programDir, [edit]);
    expectNoSecret(stackDir, [emulator.apiKey, ...Object.values(secrets)]);
  } finally {
    await emulator.close();
  }
  compact(db);
  return name;
}

async function recordQuickstart(setup: Setup, out: string, form: Exclude<Form, "yaml">): Promise<string> {
  const name = `${form}-quickstart`;
  const source = join(setup.checkout, "examples", "quickstart");
  const stackDir = join(out, name);
  const programDir = join(stackDir, PROGRAM_DIR);
  mkdirSync(programDir, { recursive: true });
  for (const entry of readdirSync(source))
    if (!NOT_THE_QUICKSTART.has(entry)) cpSync(join(source, entry), join(programDir, entry), { recursive: true });
  if (form === "native") {
    // The same program on the native classes and the plugin's functions: every `gms.X` becomes `gms.native.X`.
    const program = readFileSync(join(programDir, "index.ts"), "utf8");
    const native = program.replace(/\bgms\.(?=[A-Za-z])/g, "gms.native.");
    if (native === program) throw new RecordError("examples/quickstart/index.ts names nothing of gms to move to gms.native");
    writeFileSync(join(programDir, "index.ts"), native);
  }
  const project = (parse(readFileSync(join(programDir, "Pulumi.yaml"), "utf8")) as { name: string }).name;
  installRelease(setup, programDir);
  const db = join(stackDir, DATABASE_FILE);
  const emulatorOptions = { fineTuneSeconds: 1 };
  const emulator = await setup.release.startEmulator({ port: 0, db, fixtures: join(source, "fixtures.yaml"), ...emulatorOptions });
  const secrets = { openaiKey: `sk-upgrade-${form}-quickstart-openaiKey` };
  try {
    const engine = new setup.release.PulumiCliEngine({
      cli: { ...setup.cli, source: "project" },
      stateDir: join(setup.work, "backends", name),
      pulumiHome: setup.home,
      programDir,
      program: "index.ts",
      project,
      stack: STACK,
      config: {
        "gms:baseUrl": emulator.url,
        "gms:apiKey": { secret: emulator.apiKey },
        ...Object.fromEntries(Object.entries(secrets).map(([key, value]) => [key, { secret: value }])),
      },
      secretsPassphrase: PASSPHRASE,
      env: { PULUMI_IGNORE_AMBIENT_PLUGINS: "true" },
      log: () => undefined,
    });
    await engine.up();
    const { counts } = await engine.preview();
    const changes = Object.entries(counts).filter(([op, count]) => op !== "same" && count > 0);
    if (changes.length > 0) throw new RecordError(`${name}: a preview after up plans ${JSON.stringify(Object.fromEntries(changes))}`);
    writeFileSync(
      join(stackDir, EXPORT_FILE),
      await run(setup.cli.bin, ["stack", "export", "--stack", STACK, "--non-interactive"], { cwd: programDir, env: engine.environment() }),
    );
    const token = (kind: string) => (form === "dynamic" ? `pulumi-nodejs:dynamic/gms:${kind}` : `gms:index:${kind}`);
    const { kind, ...edit } = QUICKSTART_EDIT;
    const removal = QUICKSTART_REMOVAL;
    const stack: RecordedStack = {
      name,
      form,
      project,
      stack: STACK,
      entry: "index.ts",
      passphrase: PASSPHRASE,
      baseUrl: emulator.url,
      apiKey: emulator.apiKey,
      secrets,
      emulator: emulatorOptions,
      edit: { ...edit, type: token(kind) },
      ...(form === "dynamic" ? { remove: { resource: removal.resource, type: token(removal.kind), edits: removal.edits } } : {}),
    };
    writeJson(join(stackDir, STACK_FILE), stack);
    rmSync(join(programDir, "node_modules"), { recursive: true, force: true });
    checkEdits(setup, programDir, [stack.edit, stack.remove]);
    expectNoSecret(stackDir, [emulator.apiKey, ...Object.values(secrets)]);
  } finally {
    await emulator.close();
  }
  compact(db);
  return name;
}

/** Each form in the README's words. */
const FORM_WORDS: Record<Form, string> = {
  yaml: "Pulumi YAML, on the plugin",
  dynamic: "TypeScript, dynamic resources",
  native: "TypeScript, native classes on the plugin",
};

/** The corpus folder's README: what it is, for someone who meets it in the repository. */
function readme(corpus: Corpus): string {
  return `# Upgrade corpus of release ${corpus.version}

What a user of pulumi-gms ${corpus.version} has after \`pulumi up\`, recorded by \`npm run upgrade:record\` on ${corpus.recorded}
with that release's plugin and npm package${corpus.commit ? ` (commit ${corpus.commit.slice(0, 12)})` : ""}, the Pulumi CLI ${corpus.pulumi}
and Node.js ${corpus.node}. The upgrade suites (\`test/upgrade/*.test.ts\`) load each stack into the code under test and
expect a preview and a refresh with no change, an edit of one field updated in place, and a destroy that leaves only
the emulator's fixtures. \`schema.json\` is the release's package schema, which \`npm run schema:compare\` compares the
current one with. The shape of every file: \`scripts/upgrade/corpus.mts\`.

| Stack | Form | Program |
| --- | --- | --- |
${corpus.stacks
  .map((name) => {
    const [form, ...program] = name.split("-");
    const what = form === "yaml" ? `examples/programs/${program.join("-")}` : "examples/quickstart";
    return `| \`${name}\` | ${FORM_WORDS[form as Form]} | ${what} |`;
  })
  .join("\n")}

Never regenerate this folder: it stands for what ${corpus.version} left behind. Every passphrase and key in it is a test
value, written in each \`stack.json\`.
`;
}

async function main(argv: string[]): Promise<void> {
  const { release, checkout } = options(argv);
  const setup = await prepare(release, checkout);
  try {
    const out = join(setup.work, "corpus", setup.version);
    mkdirSync(out, { recursive: true });
    cpSync(join(setup.installed, SCHEMA_FILE), join(out, SCHEMA_FILE));
    const schema = JSON.parse(readFileSync(join(out, SCHEMA_FILE), "utf8")) as Schema;
    const examples = readdirSync(join(checkout, "examples", "programs"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(checkout, "examples", "programs", entry.name, "Pulumi.yaml")))
      .map((entry) => entry.name)
      .sort();
    const stacks: string[] = [];
    for (const example of examples) {
      stacks.push(await recordYaml(setup, out, example, schema));
      progress(`recorded ${stacks.at(-1)}`);
    }
    for (const form of ["dynamic", "native"] as const) {
      stacks.push(await recordQuickstart(setup, out, form));
      progress(`recorded ${stacks.at(-1)}`);
    }
    const corpus: Corpus = {
      version: setup.version,
      pulumi: setup.cli.version,
      node: process.version,
      recorded: new Date().toISOString().slice(0, 10),
      ...(setup.commit ? { commit: setup.commit } : {}),
      stacks,
    };
    writeJson(join(out, CORPUS_FILE), corpus);
    writeFileSync(join(out, "README.md"), readme(corpus));
    const target = join(CORPORA, setup.version);
    cpSync(out, target, { recursive: true });
    const size = spawnSync("du", ["-sh", target], { encoding: "utf8" }).stdout.split("\t")[0];
    progress(`wrote test/upgrade/${setup.version}/ (${stacks.length} stacks, ${size}): commit it`);
  } finally {
    rmSync(setup.work, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`upgrade:record: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  console.error(`upgrade:record: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
