/**
 * The commands that take a written project (`--language`, `--split-by`) to its first `pulumi up`, as discover prints
 * them: the state backend once (./backend.ts), then for each project, in order, its folder, its language's setup, the
 * new stack, the stack's settings (the service's address, its API key from where discover read it, and each key the
 * service never returns, saying whose it is and where it comes from), `pulumi up` (which imports every object and
 * changes none) and a preview that must find no change. Each line is a POSIX shell command; a comment after ` # `
 * says why, where that helps.
 */
import { stringify } from "yaml";
import { goModule } from "../manifest";
import { type Backend, backendLines, shellWord, stackInitNote } from "./backend";
import { PROGRAM_LANGUAGES, type ProgramLanguage } from "./languages";
import { type ConfigKey, explainedSetCommand } from "./plan";
import { objects } from "./render";

/** What sets up each language's project beside its program, before the first `up`. */
const SETUP: Record<ProgramLanguage, (version: string, project: string) => string[]> = {
  yaml: () => [],
  // The program is an ES module (its imports), which Node.js runs as one when package.json says so.
  typescript: (version) => ["npm init --yes", "npm pkg set type=module", `npm install @pulumi/pulumi pulumi-gms@${version}`],
  python: (version) => ["python3 -m venv venv", `venv/bin/pip install pulumi pulumi-gms==${version}`],
  go: (version, project) => [`go mod init ${project}`, `go get ${goModule}@v${version} github.com/pulumi/pulumi/sdk/v3`, "go mod tidy"],
};

/** Each language's `runtime` of Pulumi.yaml, and what else the file says, beside the project's name and description. */
const PROJECT: Record<Exclude<ProgramLanguage, "yaml">, Record<string, unknown>> = {
  // Node.js runs index.ts itself, stripping its types, as the ES module package.json makes it (SETUP): no ts-node.
  typescript: {
    runtime: { name: PROGRAM_LANGUAGES.typescript.runtime, options: { typescript: false } },
    main: PROGRAM_LANGUAGES.typescript.file,
  },
  // The virtual environment the setup line makes, which the Python language host then uses.
  python: { runtime: { name: PROGRAM_LANGUAGES.python.runtime, options: { virtualenv: "venv" } } },
  go: { runtime: PROGRAM_LANGUAGES.go.runtime },
};

/** Pulumi.yaml of a program in another language than YAML: the project's name, its description and its runtime. */
export function projectFile(program: Record<string, unknown>, language: Exclude<ProgramLanguage, "yaml">): string {
  return stringify({ name: program.name, description: program.description, ...PROJECT[language] }, { lineWidth: 0 });
}

/** Where discover read the API key, which the stack's `gms:apiKey` is set from. */
export type ApiKeySource = { variable: "GMS_API_KEY" } | { file: string };

/** What every project's commands share. */
export interface StepsContext {
  language: ProgramLanguage;
  /** The package's version, which the setup installs. */
  version: string;
  /** The new stack's name (`--new-stack`). */
  stack: string;
  /** The service's address, as printed. */
  baseUrl: string;
  apiKey: ApiKeySource;
  backend: Backend;
  env: NodeJS.ProcessEnv;
}

/** One written project: the folder to change to (from where the previous commands left off), its name, its keys and size. */
export interface ProjectSteps {
  cd: string;
  project: string;
  configKeys: readonly ConfigKey[];
  adopted: number;
}

const apiKeyLine = (source: ApiKeySource) =>
  "variable" in source
    ? `printf '%s' "$${source.variable}" | pulumi config set --secret gms:apiKey   # the API key discover read (${source.variable})`
    : `pulumi config set --secret gms:apiKey < ${shellWord(source.file)}   # the API key discover read (--api-key-file)`;

/** The commands of every project, in order, after the backend's. */
export function adoptionSteps(context: StepsContext, projects: readonly ProjectSteps[]): string[] {
  const note = stackInitNote(context.backend, context.env);
  return [
    ...backendLines(context.backend),
    ...projects.flatMap((project) => [
      `cd ${shellWord(project.cd)}`,
      ...SETUP[context.language](context.version, project.project),
      `pulumi stack init ${shellWord(context.stack)}${note ? `   # ${note}` : ""}`,
      `pulumi config set gms:baseUrl ${shellWord(context.baseUrl)}`,
      apiKeyLine(context.apiKey),
      ...project.configKeys.map((key) => explainedSetCommand(key, `pulumi config set --secret ${key.configKey}`)),
      `pulumi up   # shows the plan and asks first: it imports ${project.adopted === 1 ? "the object" : `the ${objects(project.adopted)}`} and changes none`,
      "pulumi preview --expect-no-changes",
    ]),
  ];
}
