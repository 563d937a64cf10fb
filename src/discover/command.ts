/**
 * The run of `pulumi-gms discover` (src/cli/discover.ts parses its flags and maps the outcome to an exit code): list the
 * workspace, then write the import document, or the program that adopts it (`--language`), or one program per App
 * and a shared one with their stack list (`--split-by app`); print the summary or the JSON. Apart from the command's
 * module so that `pulumi-gms --help` loads none of it.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { AuthenticationError, ConnectionError, GmsClient, GmsError, RequestRateLimiter, TimeoutError } from "../client";
import { packageManifest, pluginDownloadURL } from "../manifest";
import { MigrationError } from "../migrate/errors";
import { discover } from ".";
import { adoptionProgram, type Elsewhere, type PlainReference, type ProgramPlan, readLiveInputs } from "./adopt";
import { currentBackend } from "./backend";
import { GO_MAIN, GO_PROGRAM_FUNCTION, goRunFunction } from "./go-program";
import { ConverterError, convertPrograms } from "./convert";
import { PROGRAM_LANGUAGES, type ProgramLanguage } from "./languages";
import type { Discovery, ImportEntry, LiveInputs } from "./plan";
import { LANGUAGES, projectLanguage } from "./program";
import { renderDocument, renderSummary, type WrittenProject } from "./render";
import type { Selection } from "./select";
import { actionApps, exportedKinds, SHARED_ENTRY, type SplitProject, STACK_LIST_FILE, splitByApp, stackList } from "./split";
import { exportStack, type ManagedObjects, managedObjects, StackExportError } from "./stack";
import { type ApiKeySource, adoptionSteps, projectFile } from "./steps";

/** What the command prints to and reads from: the part of the command-line tool's contract the run needs. */
export interface DiscoverIo {
  /** Standard output: the JSON under `--json`. */
  out(text: string): void;
  /** Standard error: the summary, warnings and failures. */
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  /** The folder relative paths are resolved against. */
  cwd: string;
}

/** What the command's flags and environment ask for (src/cli/discover.ts reads them). */
export interface DiscoverSettings {
  baseUrl: string;
  apiKey: string;
  /** Where the API key was read: GMS_API_KEY, or the file `--api-key-file` names (an absolute path). */
  apiKeyFrom: ApiKeySource;
  maxRetries: number | undefined;
  /** GMS_MAX_REQUESTS_PER_SECOND: the rate the listing keeps to. */
  maxRequestsPerSecond: number | undefined;
  /** The import document's path, or with `language` the folder of the program (of the programs, with `splitBy`). */
  out: string;
  /** `--language`: write the program that adopts the workspace in this language, rather than the import document. */
  language: ProgramLanguage | undefined;
  /** `--split-by app`: a program per App and a shared one, with the stack list. */
  splitBy: "app" | undefined;
  /** `--kind`, `--name`, `--exclude`: what to adopt. */
  selection: Selection;
  /** `--stack`: the stack whose objects are left out. */
  stack: string | undefined;
  /** `--new-stack`: the stack the printed commands make for a written program. */
  newStack: string;
  pulumi: string;
  json: boolean;
}

/** The base URL as printed: without any user or password it may carry. */
function shownUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.username = "";
  url.password = "";
  return url.toString().replace(/\/$/, "");
}

/** A failure in the user's terms: what was tried, and what to check. */
function failureMessage(error: unknown, settings: DiscoverSettings): string {
  const where = shownUrl(settings.baseUrl);
  if (error instanceof AuthenticationError)
    return (
      `the service at ${where} refused the API key (${error.status} ${error.detail}): ` +
      "GMS_API_KEY (or --api-key-file) must be a key of the workspace to list"
    );
  if (error instanceof ConnectionError || error instanceof TimeoutError)
    return `cannot reach the service at ${where} (GMS_BASE_URL): ${error.detail}`;
  if (error instanceof GmsError) return `the service at ${where} failed a request: ${error.message}`;
  if (error instanceof StackExportError || error instanceof MigrationError) return error.message;
  return (error as Error).message ?? String(error);
}

/** Runs discover; a failure is printed, in the user's terms, on standard error. */
export async function discoverWith(settings: DiscoverSettings, io: DiscoverIo): Promise<"done" | "failed"> {
  const client = new GmsClient({
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    ...(settings.maxRetries === undefined ? {} : { maxRetries: settings.maxRetries }),
    ...(settings.maxRequestsPerSecond === undefined ? {} : { rateLimiter: new RequestRateLimiter(settings.maxRequestsPerSecond) }),
  });
  try {
    const managed =
      settings.stack === undefined
        ? undefined
        : managedObjects(settings.stack, await exportStack(settings.pulumi, settings.stack, io.cwd, io.env));
    if (settings.language !== undefined || settings.splitBy !== undefined) {
      await writeAdoption(client, settings, settings.language ?? "yaml", managed, io);
      return "done";
    }
    const { language, assumed } = projectLanguage(io.cwd);
    const discovery = await discover(client, {
      ...(managed ? { managed } : {}),
      selection: settings.selection,
      language,
      ...(assumed ? { assumedLanguage: assumed } : {}),
      file: settings.out,
    });
    writeFileSync(resolve(io.cwd, settings.out), renderDocument(discovery));
    if (settings.json) io.out(`${JSON.stringify({ file: settings.out, ...discovery }, null, 2)}\n`);
    else io.err(renderSummary(discovery, { importDocument: settings.out }));
    return "done";
  } catch (error) {
    io.err(`pulumi-gms discover: ${failureMessage(error, settings)}\n`);
    return "failed";
  } finally {
    await client.close();
  }
}

/** The project name of a program written into `dir`: its folder's name, in the characters a project name may hold. */
const projectNameOf = (dir: string) =>
  basename(dir)
    .replace(/[^A-Za-z0-9_.-]+/g, "-")
    .replace(/^[-.]+/, "") || "adopted";

/** The folder the programs go into must hold nothing of the user's: no project, and with `--split-by` nothing at all. */
function checkOutFolder(dir: string, shownDir: string, split: boolean): void {
  if (split ? existsSync(dir) && readdirSync(dir).length > 0 : existsSync(join(dir, "Pulumi.yaml")))
    throw new ConverterError(
      split
        ? `${shownDir} is not empty: give --out a new or empty folder, so that nothing of yours is overwritten`
        : `${shownDir} already holds a Pulumi project (Pulumi.yaml): give --out a new folder, so that nothing of yours is overwritten`,
    );
}

/** A written project before conversion: where it goes, what it adopts, and its YAML program. */
interface Planned {
  dir: string;
  split?: SplitProject;
  plan: ProgramPlan;
}

/** The program of each project: the single one, or with `--split-by app` the shared one and one per App. */
function plannedProjects(
  discovery: Discovery,
  live: LiveInputs,
  actionApp: ReadonlyMap<string, string> | undefined,
  dir: string,
  language: ProgramLanguage,
): Planned[] {
  const project = projectNameOf(dir);
  const workspace = `the workspace "${discovery.workspace.name}" (${discovery.workspace.guid})`;
  const plugin = language === "yaml" ? { plugin: { version: packageManifest.version, pluginDownloadURL } } : {};
  const leftOut = new Map<string, Elsewhere>(
    discovery.leftOut.map((entry) => [entry.guid, { label: `${entry.type} "${entry.object}"`, why: entry.reason }]),
  );
  const keysOf = (resources: readonly ImportEntry[]) => {
    const names = new Set(resources.map((entry) => entry.name));
    return discovery.configKeys.filter((key) => names.has(key.resource));
  };
  if (actionApp === undefined)
    return [
      {
        dir,
        plan: {
          projectName: project,
          description: `Adopts the objects of ${workspace}`,
          resources: discovery.document.resources,
          configKeys: discovery.configKeys,
          elsewhere: leftOut,
          ...plugin,
        },
      },
    ];
  const projects = splitByApp(discovery, live, actionApp, project);
  const shared = projects.find((split) => split.entry === SHARED_ENTRY)!;
  const sharedEntries = new Map(shared.resources.map((entry) => [entry.id, entry]));
  return projects.map((split): Planned => {
    const elsewhere = new Map(leftOut);
    for (const other of projects)
      if (other !== split)
        for (const entry of other.resources)
          elsewhere.set(entry.id, { label: `${entry.type} ${entry.name}`, why: `adopted by the project ${other.dir}` });
    const isShared = split === shared;
    if (!isShared) for (const guid of sharedEntries.keys()) elsewhere.delete(guid);
    return {
      dir: join(dir, split.dir),
      split,
      plan: {
        projectName: split.project,
        description: isShared
          ? `Adopts what the Apps of ${workspace} share`
          : `Adopts the App "${split.app!.name}" (${split.app!.guid}) of ${workspace}, and what belongs to it`,
        resources: split.resources,
        configKeys: keysOf(split.resources),
        elsewhere,
        split: { exports: exportedKinds(split), ...(isShared ? {} : { shared: { project: shared.project, entries: sharedEntries } }) },
        ...plugin,
      },
    };
  });
}

/**
 * `--language` (and `--split-by app`): the programs that adopt the workspace, in a new folder (`--out`), with the
 * commands that take each to a first `up` (which imports every object and changes nothing) and a preview that finds
 * no change; with `--split-by app`, the stack list beside them.
 */
async function writeAdoption(
  client: GmsClient,
  settings: DiscoverSettings,
  language: ProgramLanguage,
  managed: ManagedObjects | undefined,
  io: DiscoverIo,
): Promise<void> {
  const dir = resolve(io.cwd, settings.out);
  const shownDir = relative(io.cwd, dir) || ".";
  const split = settings.splitBy !== undefined;
  checkOutFolder(dir, shownDir, split);
  const discovery = await discover(client, {
    ...(managed ? { managed } : {}),
    selection: settings.selection,
    language: LANGUAGES[PROGRAM_LANGUAGES[language].runtime],
    file: shownDir,
  });
  const live = await readLiveInputs(client, discovery.document.resources);
  const actionApp = split ? await actionApps(client, discovery) : undefined;
  const planned = plannedProjects(discovery, live, actionApp, dir, language);
  const programs = planned.map(({ plan }) => adoptionProgram(plan, live));
  if (language === "go") {
    const reads = programs.flatMap((program) => program.sharedReads);
    if (reads.length > 0)
      throw new ConverterError(
        `the Go program generator cannot read a value of the shared stack's outputs, which ${reads.slice(0, 3).join(", ")}` +
          `${reads.length > 3 ? ` and ${reads.length - 3} more` : ""} need: use --language yaml, typescript or python with --split-by app`,
      );
  }
  const sources = await convertPrograms(
    programs.map((program) => program.program),
    language,
    io.env,
  );
  const { file } = PROGRAM_LANGUAGES[language];
  for (const [index, { dir: projectDir }] of planned.entries()) {
    mkdirSync(projectDir, { recursive: true });
    if (language !== "yaml") writeFileSync(join(projectDir, "Pulumi.yaml"), projectFile(programs[index]!.program, language));
    if (language === "go") {
      const comment = `${GO_PROGRAM_FUNCTION} declares the objects the stack adopts; main.go runs it.`;
      let program: string;
      try {
        program = goRunFunction(sources[index]!, "main", GO_PROGRAM_FUNCTION, comment);
      } catch (error) {
        throw new ConverterError(
          `the converter's main.go is not of the shape discover writes program.go from: ${(error as Error).message}`,
        );
      }
      writeFileSync(join(projectDir, file), program);
      writeFileSync(join(projectDir, "main.go"), GO_MAIN);
    } else writeFileSync(join(projectDir, file), sources[index]!);
  }
  const splits = planned.flatMap((project) => (project.split ? [project.split] : []));
  if (split) writeFileSync(join(dir, STACK_LIST_FILE), stackList(splits, settings.newStack, "pulumi-gms discover --split-by app"));

  const backend = await currentBackend(settings.pulumi, io.cwd, io.env);
  let from = io.cwd;
  const next = adoptionSteps(
    {
      language,
      version: packageManifest.version,
      stack: settings.newStack,
      baseUrl: shownUrl(settings.baseUrl),
      apiKey: settings.apiKeyFrom,
      backend,
      env: io.env,
    },
    planned.map(({ dir: projectDir, plan }) => {
      const cd = relative(from, projectDir) || ".";
      from = projectDir;
      return { cd, project: plan.projectName, configKeys: plan.configKeys, adopted: plan.resources.length };
    }),
  );
  const written: WrittenProject[] = planned.map(({ dir: projectDir, split: splitProject, plan }) => ({
    ...(splitProject ? { entry: splitProject.entry, dependsOn: splitProject.dependsOn } : {}),
    directory: relative(io.cwd, projectDir),
    file: join(relative(io.cwd, projectDir), file),
    project: plan.projectName,
    adopted: plan.resources.length,
  }));
  const references: PlainReference[] = programs.flatMap((program) => program.plain);
  const adopted: Discovery = { ...discovery, next };
  if (settings.json)
    io.out(
      `${JSON.stringify(
        {
          directory: shownDir,
          ...(split ? { stackList: join(shownDir, STACK_LIST_FILE), projects: written } : { file: written[0]!.file }),
          ...adopted,
          references,
        },
        null,
        2,
      )}\n`,
    );
  else
    io.err(
      renderSummary(adopted, {
        language,
        projects: written,
        references,
        ...(split ? { stackList: join(shownDir, STACK_LIST_FILE) } : {}),
      }),
    );
}
