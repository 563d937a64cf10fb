/**
 * `pulumi-gms migrate`: reads a `pulumi stack export` (a file, or standard input) and writes what moves the stack's
 * dynamic gms resources to the native ones without recreating an object (the plan itself: src/migrate/plan.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { dynamicToken, nativeToken } from "../provider/tokens";
import { type Command, type CommandIo, EXIT, parseFlags, UsageError } from "./command";

const USAGE = `usage: pulumi-gms migrate [EXPORT | -] [--import-file FILE] [--delete-script FILE] [--stack NAME]
                          [--plugin-version VERSION] [--with-outputs] [--json]

Reads a stack export (\`pulumi stack export --file stack.json\`; standard input when EXPORT is - or left out)
and writes, for its dynamic gms resources (${dynamicToken("<Kind>")}):
  --import-file FILE     the bulk import file of the native resources (${nativeToken("<Kind>")}, same names and parents)
                         for \`pulumi import --file\` (default gms-import.json); each id is the object's GUID
  --delete-script FILE   a shell script of \`pulumi state delete '<urn>' --yes\` lines removing the dynamic
                         resources, dependents first (default gms-state-delete.sh)
  --stack NAME           add --stack NAME to the commands (default: the CLI's current stack)
  --plugin-version V     the gms provider plugin version each import entry asks for
  --with-outputs         every entry carries its recorded outputs: the import reads nothing from the service
  --json                 print the plan as one JSON document instead of the summary: {"importFile", "deleteScript",
                         "stack", "migrated": [{"kind", "urn", "nativeUrn", "importId", "protect", "outputsSupplied"}],
                         "deleteOrder": [urn], "deferred": [{"kind", "urn", "reason"}], "notes"}
Resources the engine has not settled (placeholders, partially created, pending) stay dynamic, with what they
depend on; the command says why. Secrets stay encrypted as the export has them; an export made with
--show-secrets is refused. Then: \`pulumi import --file FILE --protect=false --generate-code=false --yes\`,
\`sh gms-state-delete.sh\`, and the program's native classes in place of the dynamic ones.`;

export const migrateCommand: Command = {
  name: "migrate",
  summary: "move a stack's dynamic gms resources to the provider plugin's: a `pulumi import` file and state deletes",
  usage: USAGE,
  run: runMigrate,
};

async function runMigrate(argv: string[], io: CommandIo): Promise<number> {
  const parsed = parseFlags(argv, {
    "import-file": { type: "string" },
    "delete-script": { type: "string" },
    stack: { type: "string" },
    "plugin-version": { type: "string" },
    "with-outputs": { type: "boolean" },
    json: { type: "boolean" },
  });
  const { values, positionals } = parsed;
  if (positionals.length > 1) throw new UsageError(`one stack export at a time (got ${positionals.length})`);
  const input = positionals[0] ?? "-";
  const importFile = values["import-file"] ?? "gms-import.json";
  const deleteScript = values["delete-script"] ?? "gms-state-delete.sh";
  const stack = values.stack ? { stack: values.stack } : {};
  // Loaded here, not at the top: `pulumi-gms --help` and the other commands do not need the planner.
  const { planMigration } = await import("../migrate/plan.js");
  const { renderDeleteScript, renderImportFile, renderSummary } = await import("../migrate/render.js");
  const { parseStackExport } = await import("../migrate/stack-export.js");
  try {
    const source = input === "-" ? "standard input" : input;
    const text = input === "-" ? io.readStdin() : readFileSync(resolve(io.cwd, input), "utf8");
    const plan = planMigration(parseStackExport(text, source), {
      source,
      ...(values["plugin-version"] ? { pluginVersion: values["plugin-version"] } : {}),
      ...(values["with-outputs"] ? { withOutputs: true } : {}),
    });
    writeFileSync(resolve(io.cwd, importFile), renderImportFile(plan));
    writeFileSync(resolve(io.cwd, deleteScript), renderDeleteScript(plan, { importFile, ...stack }), { mode: 0o755 });
    if (values.json) {
      const { migrated, deleteOrder, deferred, notes } = plan;
      const result = { importFile, deleteScript, stack: values.stack || null, migrated, deleteOrder, deferred, notes };
      io.out(`${JSON.stringify(result, null, 2)}\n`);
    } else io.out(renderSummary(plan, { importFile, deleteScript, ...stack }));
    return EXIT.done;
  } catch (error) {
    // A MigrationError says what is wrong with the export; a file that cannot be read or written, which and why.
    io.err(`pulumi-gms migrate: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.failed;
  }
}
