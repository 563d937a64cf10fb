/**
 * `pulumi-gms discover`: writes the `pulumi import --file` document of every object in a workspace, or the programs
 * that adopt them (src/discover). The workspace is the one GMS_API_KEY (or `--api-key-file`) selects at GMS_BASE_URL;
 * the key is never a flag, and never printed: everything the command prints goes through a filter that blanks it.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { DiscoverSettings } from "../discover/command";
import { isProgramLanguage, PROGRAM_LANGUAGES } from "../discover/languages";
import { type Command, type CommandIo, EXIT, parseFlags, runWith, UsageError } from "./command";

const DEFAULT_OUT = "gms-import.json";
const DEFAULT_PROGRAM_DIR = "gms-adopted";
const DEFAULT_NEW_STACK = "dev";

const USAGE = `usage: pulumi-gms discover [--language yaml|typescript|python|go] [--split-by app] [--out PATH] [--new-stack NAME]
                          [--kind KIND]... [--name GLOB]... [--exclude GLOB]... [--stack NAME] [--pulumi PATH]
                          [--api-key-file FILE] [--json]

Lists every object of every kind in the workspace that GMS_API_KEY selects at GMS_BASE_URL and writes the document
\`pulumi import --file\` reads: each object's type (gms:index:<Kind>), its GUID, and a resource name made from its
own name (lowercase, digits and underscores; twins of one name told apart by kind, then by their GUID's first digits).

  --language LANG      write instead the program that adopts it all, in yaml, typescript, python or go: each
                       resource declared with the \`import\` resource option and the inputs the service shows, each
                       key read from a secret config value; its first \`pulumi up\` imports every object and changes
                       nothing. It goes into a new folder (--out, default ${DEFAULT_PROGRAM_DIR}), with its Pulumi.yaml,
                       and runs on the language's host, as any Pulumi program does (the Pulumi CLI's distribution
                       includes them). Other languages than YAML are converted by pulumi-gms-convert (beside pulumi-gms
                       in the release's tarball; GMS_CONVERTER names another path), or with Go from the npm package's
                       copy of its source.
  --split-by app       write instead one program per App (the App and what belongs to it) and a shared one
                       (connections, Models, Skills, Context Sources, and what belongs to no App), each its own
                       stack, with the stack list gms-stacks.yaml that the GitOps pipeline reads; an App's program
                       reads the shared stack's outputs through a StackReference. --out must be a new or empty
                       folder; the language is YAML unless --language says otherwise (not go)
  --out PATH           where to write it (default ${DEFAULT_OUT}, or ${DEFAULT_PROGRAM_DIR} with --language or
                       --split-by), relative to the current folder
  --new-stack NAME     the stack the printed commands make for the written programs (default ${DEFAULT_NEW_STACK})
  --kind KIND          adopt only objects of these kinds (App, ProviderConnection, Model, ...; several: --kind
                       App,Workflow, or the flag again)
  --name GLOB          adopt only objects whose name matches one of these globs (* any text, ? one character;
                       case ignored; the flag again for another)
  --exclude GLOB       leave out objects whose name matches this glob (the flag again for another). A value that
                       names an object left out is written as its GUID, and the summary warns of each
  --stack NAME         leave out what stack NAME already manages (read with \`pulumi stack export\` in the current
                       folder, the project's) and the names it uses; the import's commands printed name the stack
  --pulumi PATH        the Pulumi CLI that reads the stack, and the current login the printed commands name
                       (default: pulumi on PATH)
  --api-key-file FILE  read the API key from FILE instead of GMS_API_KEY
  --json               print the result as one JSON document on stdout (the import document, what was left
                       out and why, the config keys with their lines, notes, the commands to run next; with
                       --language or --split-by, the programs written and the values written as GUIDs)

Configured Skills (which the public interface cannot create) are left out, saying why; Actions, Contexts, Data
records and Eval types are lookups, not resources, and never imported. The keys the service never returns
(ProviderConnection and Model keys) cannot be written by \`pulumi import\`: the summary names a config key for
each, with the \`pulumi config set --secret\` line to run and the line that reads it, in the project's language
(Pulumi.yaml's runtime in the current folder; YAML without one).
Environment: GMS_BASE_URL (required, ending in /v1), GMS_API_KEY, GMS_MAX_RETRIES (default 3), GMS_MAX_REQUESTS_PER_SECOND
(the rate the listing keeps to, for a service that limits it; default none).
Exit status: 0 done, 1 failed (the service unreachable, the key refused, the stack unreadable), 2 usage.`;

/** The settings as the flags give them, the selection's flags still as text. */
type FlagSettings = Omit<DiscoverSettings, "selection" | "maxRetries" | "maxRequestsPerSecond"> & {
  picks: { kind?: string[]; name?: string[]; exclude?: string[] };
};

/**
 * The flags and the environment, checked; the service's address and the selection are checked by the run (it loads
 * the URL rules and the kinds).
 */
function settingsFrom(argv: string[], io: CommandIo): FlagSettings | "help" {
  if (argv.some((arg) => /^--api-key(=|$)/.test(arg)))
    throw new UsageError(
      "the API key is never a flag (the process list and the shell's history would show it): set GMS_API_KEY, or give a file holding it with --api-key-file",
    );
  const { values, positionals } = parseFlags(argv, {
    language: { type: "string" },
    "split-by": { type: "string" },
    out: { type: "string" },
    "new-stack": { type: "string" },
    kind: { type: "string", multiple: true },
    name: { type: "string", multiple: true },
    exclude: { type: "string", multiple: true },
    stack: { type: "string" },
    pulumi: { type: "string" },
    "api-key-file": { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) return "help";
  if (positionals.length > 0) throw new UsageError(`discover takes no arguments, only flags (got ${positionals.join(" ")})`);
  for (const flag of ["language", "split-by", "out", "new-stack", "stack", "pulumi", "api-key-file"] as const)
    if (values[flag] === "") throw new UsageError(`--${flag} needs a value`);
  const language = values.language;
  if (language !== undefined && !isProgramLanguage(language))
    throw new UsageError(`--language ${language} is not one of ${Object.keys(PROGRAM_LANGUAGES).join(", ")}`);
  const splitBy = values["split-by"];
  if (splitBy !== undefined && splitBy !== "app")
    throw new UsageError(`--split-by ${splitBy} is not known: the one split is --split-by app`);
  const program = language !== undefined || splitBy !== undefined;
  if (values["new-stack"] !== undefined && !program)
    throw new UsageError("--new-stack names the stack of the programs --language or --split-by writes: give one of them too");
  const baseUrl = io.env.GMS_BASE_URL;
  if (!baseUrl) throw new UsageError("GMS_BASE_URL is not set: the service's address, for example https://gms.example.com/v1");
  let apiKey = io.env.GMS_API_KEY;
  const keyFile = values["api-key-file"];
  if (keyFile !== undefined) {
    try {
      apiKey = readFileSync(resolve(io.cwd, keyFile), "utf8").trim();
    } catch (error) {
      throw new UsageError(
        `--api-key-file ${keyFile}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
    if (apiKey === "") throw new UsageError(`--api-key-file ${keyFile} is empty`);
  }
  if (!apiKey) throw new UsageError("no API key: set GMS_API_KEY, or give a file holding it with --api-key-file");
  return {
    baseUrl,
    apiKey,
    apiKeyFrom: keyFile === undefined ? { variable: "GMS_API_KEY" } : { file: resolve(io.cwd, keyFile) },
    out: values.out ?? (program ? DEFAULT_PROGRAM_DIR : DEFAULT_OUT),
    language,
    splitBy,
    picks: { kind: values.kind, name: values.name, exclude: values.exclude },
    stack: values.stack,
    newStack: values["new-stack"] ?? DEFAULT_NEW_STACK,
    pulumi: values.pulumi ?? "pulumi",
    json: values.json ?? false,
  };
}

const run = (argv: string[], io: CommandIo): Promise<number> =>
  runWith(
    discoverCommand,
    io,
    async (): Promise<DiscoverSettings | "help"> => {
      const flags = settingsFrom(argv, io);
      if (flags === "help") return flags;
      // Loaded only to run: `pulumi-gms --help` stays cheap.
      const [{ ConfigurationError, SETTINGS, settingValue }, { selectionOf, SelectionError }] = await Promise.all([
        import("../settings.js"),
        import("../discover/select.js"),
      ]);
      if (SETTINGS.baseUrl.parse(flags.baseUrl) === undefined) throw new UsageError(`GMS_BASE_URL ${SETTINGS.baseUrl.form}`);
      // The environment's settings, read by their declarations (src/settings.ts), as the provider reads them.
      const fromEnv = (name: "maxRetries" | "maxRequestsPerSecond") =>
        settingValue(name, [{ label: SETTINGS[name].env, text: io.env[SETTINGS[name].env], shown: true }]);
      const { picks, ...settings } = flags;
      try {
        return {
          ...settings,
          maxRetries: fromEnv("maxRetries"),
          maxRequestsPerSecond: fromEnv("maxRequestsPerSecond"),
          selection: selectionOf(picks),
        };
      } catch (error) {
        throw error instanceof SelectionError || error instanceof ConfigurationError ? new UsageError(error.message) : error;
      }
    },
    async (settings) => {
      const { apiKey } = settings;
      const [{ redactSecrets }, { discoverWith }] = await Promise.all([import("../provider/errors.js"), import("../discover/command.js")]);
      const blanked = (print: (text: string) => void) => (text: string) => print(redactSecrets(text, [apiKey]));
      return EXIT[await discoverWith(settings, { ...io, out: blanked(io.out), err: blanked(io.err) })];
    },
  );

export const discoverCommand: Command = {
  name: "discover",
  summary: "write the `pulumi import --file` document of every object in a workspace, or the programs that adopt them",
  usage: USAGE,
  run,
};
