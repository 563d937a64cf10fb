/**
 * The run of `pulumi-gms discover` (src/cli/discover.ts parses its flags): list the workspace, write the import
 * document, print the summary or the JSON. Apart from the command's module so that `pulumi-gms --help` loads none of it.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { stringify } from "yaml";
import type { CommandIo } from "../cli/command";
import { EXIT } from "../cli/command";
import { AuthenticationError, ConnectionError, GmsClient, GmsError, RequestRateLimiter, TimeoutError } from "../client";
import { packageManifest } from "../manifest";
import { MigrationError } from "../migrate/errors";
import { discover } from ".";
import { adoptionProgram, readLiveInputs } from "./adopt";
import { ConverterError, convertProgram } from "./convert";
import { PROGRAM_LANGUAGES, type ProgramLanguage } from "./languages";
import type { Discovery } from "./plan";
import { LANGUAGES, projectLanguage } from "./program";
import { renderDocument, renderSummary } from "./render";
import { exportStack, managedObjects, StackExportError } from "./stack";

/** What the command's flags and environment ask for (src/cli/discover.ts reads them). */
export interface DiscoverSettings {
  baseUrl: string;
  apiKey: string;
  maxRetries: number | undefined;
  /** GMS_MAX_REQUESTS_PER_SECOND: the rate the listing keeps to. */
  maxRequestsPerSecond: number | undefined;
  /** The import document's path, or with `language` the folder of the program. */
  out: string;
  /** `--language`: write the program that adopts the workspace in this language, rather than the import document. */
  language: ProgramLanguage | undefined;
  stack: string | undefined;
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

export async function discoverWith(settings: DiscoverSettings, io: CommandIo): Promise<number> {
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
    if (settings.language !== undefined) {
      await writeAdoption(client, settings, settings.language, managed, io);
      return EXIT.done;
    }
    const { language, assumed } = projectLanguage(io.cwd);
    const discovery = await discover(client, {
      ...(managed ? { managed } : {}),
      language,
      ...(assumed ? { assumedLanguage: assumed } : {}),
      file: settings.out,
    });
    writeFileSync(resolve(io.cwd, settings.out), renderDocument(discovery));
    if (settings.json) io.out(`${JSON.stringify({ file: settings.out, ...discovery }, null, 2)}\n`);
    else io.err(renderSummary(discovery, { importDocument: settings.out }));
    return EXIT.done;
  } catch (error) {
    io.err(`pulumi-gms discover: ${failureMessage(error, settings)}\n`);
    return EXIT.failed;
  } finally {
    await client.close();
  }
}

/** The project name of a program written into `dir`: its folder's name, in the characters a project name may hold. */
const projectNameOf = (dir: string) =>
  basename(dir)
    .replace(/[^A-Za-z0-9_.-]+/g, "-")
    .replace(/^[-.]+/, "") || "adopted";

/** What sets up each language's project beside its program, before the first `up`. */
const SETUP: Record<ProgramLanguage, (version: string, project: string) => string[]> = {
  yaml: () => [],
  typescript: (version) => ["npm init --yes", `npm install @pulumi/pulumi pulumi-gms@${version}`],
  python: (version) => ["python3 -m venv venv", `venv/bin/pip install pulumi pulumi-gms==${version}`],
  go: (version, project) => [
    `go mod init ${project}`,
    `go get github.com/pulumi-gms/pulumi-gms/sdk/go@v${version} github.com/pulumi/pulumi/sdk/v3`,
    "go mod tidy",
  ],
};

/** Pulumi.yaml of a program in another language than YAML: the project's name and runtime. */
function projectFile(program: Record<string, unknown>, language: ProgramLanguage): string {
  const { runtime } = PROGRAM_LANGUAGES[language];
  const project = {
    name: program.name,
    description: program.description,
    // The virtual environment the setup line makes, which the Python language host then uses.
    runtime: language === "python" ? { name: runtime, options: { virtualenv: "venv" } } : runtime,
  };
  return stringify(project, { lineWidth: 0 });
}

/**
 * `--language`: the program that adopts the workspace, in its own folder (`--out`), with the commands that take it
 * to a first `up` (which imports every object and changes nothing) and a preview that finds no change.
 */
async function writeAdoption(
  client: GmsClient,
  settings: DiscoverSettings,
  language: ProgramLanguage,
  managed: Parameters<typeof discover>[1]["managed"],
  io: CommandIo,
): Promise<void> {
  const dir = resolve(io.cwd, settings.out);
  const shownDir = relative(io.cwd, dir) || ".";
  if (existsSync(join(dir, "Pulumi.yaml")))
    throw new ConverterError(
      `${shownDir} already holds a Pulumi project (Pulumi.yaml): give --out a new folder, so that nothing of yours is overwritten`,
    );
  const stackFlag = managed ? ` --stack ${managed.stack}` : "";
  const discovery = await discover(client, {
    ...(managed ? { managed } : {}),
    language: LANGUAGES[PROGRAM_LANGUAGES[language].runtime],
    file: shownDir,
  });
  const program = adoptionProgram(discovery, await readLiveInputs(client, discovery.document.resources), projectNameOf(dir));
  const source = await convertProgram(program, language, io.env);
  const { file } = PROGRAM_LANGUAGES[language];
  mkdirSync(dir, { recursive: true });
  if (language !== "yaml") writeFileSync(join(dir, "Pulumi.yaml"), projectFile(program, language));
  writeFileSync(join(dir, file), source);
  const { version } = packageManifest;
  const adopted: Discovery = {
    ...discovery,
    next: [
      `cd ${shownDir}`,
      ...SETUP[language](version, String(program.name)),
      "pulumi stack init",
      `pulumi config set gms:baseUrl ${shownUrl(settings.baseUrl)}`,
      "pulumi config set --secret gms:apiKey",
      ...discovery.configKeys.map((key) => key.setCommand.replace(stackFlag, "")),
      "pulumi up",
      "pulumi preview --expect-no-changes",
    ],
  };
  if (settings.json) io.out(`${JSON.stringify({ directory: shownDir, file: join(shownDir, file), ...adopted }, null, 2)}\n`);
  else io.err(renderSummary(adopted, { program: join(shownDir, file), language }));
}
