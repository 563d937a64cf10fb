#!/usr/bin/env node
/**
 * gms-migrate [EXPORT | -] [--import-file FILE] [--delete-script FILE] [--stack NAME] [--plugin-version V]
 *             [--with-outputs]
 * Reads a `pulumi stack export` (a file, or standard input) and writes what moves the stack's dynamic gms
 * resources to the native ones without recreating an object: see ./plan.ts.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { dynamicToken, nativeToken } from "../provider/tokens";
import { MigrationError } from "./errors";
import { planMigration } from "./plan";
import { renderDeleteScript, renderImportFile, renderSummary } from "./render";
import { parseStackExport } from "./stack-export";

export const USAGE = `usage: gms-migrate [EXPORT | -] [--import-file FILE] [--delete-script FILE] [--stack NAME]
                   [--plugin-version VERSION] [--with-outputs]

Reads a stack export (\`pulumi stack export --file stack.json\`; standard input when EXPORT is - or left out)
and writes, for its dynamic gms resources (${dynamicToken("<Kind>")}):
  --import-file FILE     the bulk import file of the native resources (${nativeToken("<Kind>")}, same names and parents)
                         for \`pulumi import --file\` (default gms-import.json); each id is the object's GUID
  --delete-script FILE   a shell script of \`pulumi state delete '<urn>' --yes\` lines removing the dynamic
                         resources, dependents first (default gms-state-delete.sh)
  --stack NAME           add --stack NAME to the commands (default: the CLI's current stack)
  --plugin-version V     the gms provider plugin version each import entry asks for
  --with-outputs         every entry carries its recorded outputs: the import reads nothing from the service
Resources the engine has not settled (placeholders, partially created, pending) stay dynamic, with what they
depend on; the command says why. Secrets stay encrypted as the export has them; an export made with
--show-secrets is refused. Then: \`pulumi import --file FILE --protect=false --generate-code=false --yes\`,
\`sh gms-state-delete.sh\`, and the program's native classes in place of the dynamic ones.`;

export interface CliIo {
  readStdin(): string;
  out(text: string): void;
  err(text: string): void;
}

/** Runs the command; returns its exit code (0 done, 1 a migration error, 2 a usage error). */
export function main(argv: string[], io: CliIo): number {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.err(`gms-migrate: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length > 1) {
    io.err(`gms-migrate: one stack export at a time (got ${positionals.length})\n${USAGE}\n`);
    return 2;
  }
  const input = positionals[0] ?? "-";
  const importFile = values["import-file"] ?? "gms-import.json";
  const deleteScript = values["delete-script"] ?? "gms-state-delete.sh";
  try {
    const source = input === "-" ? "standard input" : input;
    const text = input === "-" ? io.readStdin() : readFileSync(input, "utf8");
    const plan = planMigration(parseStackExport(text, source), {
      source,
      ...(values["plugin-version"] ? { pluginVersion: values["plugin-version"] } : {}),
      ...(values["with-outputs"] ? { withOutputs: true } : {}),
    });
    writeFileSync(importFile, renderImportFile(plan));
    writeFileSync(deleteScript, renderDeleteScript(plan, { importFile, ...(values.stack ? { stack: values.stack } : {}) }), {
      mode: 0o755,
    });
    io.out(renderSummary(plan, { importFile, deleteScript, ...(values.stack ? { stack: values.stack } : {}) }));
    return 0;
  } catch (error) {
    const message = error instanceof MigrationError ? error.message : `${(error as Error).message ?? error}`;
    io.err(`gms-migrate: ${message}\n`);
    return 1;
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "import-file": { type: "string" },
      "delete-script": { type: "string" },
      stack: { type: "string" },
      "plugin-version": { type: "string" },
      "with-outputs": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

// Only as a command: loading the module (as the module-loading test does) starts nothing.
if (require.main === module) {
  process.exitCode = main(process.argv.slice(2), {
    readStdin: () => readFileSync(0, "utf8"),
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  });
}
