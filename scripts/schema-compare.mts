/**
 * `npm run schema:compare [-- --against <schema.json>] [--json]`: lists every change of schema.json since the last
 * release's (the newest in the upgrade corpus, test/upgrade/<version>/schema.json, which `npm run upgrade:record`
 * keeps), by kind: resources, functions, types, properties, required, secret, replaceOnChanges, defaults and
 * deprecations (what breaks: scripts/schema-compare/compare.mts). It exits 1 when a change breaks what the release
 * promised and package.json's version does not allow it (a new major version, or before 1.0 a new minor one), 0
 * otherwise, and 2 on a usage error. `--json` prints the result as one JSON document. `npm test` runs it
 * (test/upgrade/schema-compare.test.ts), and so does the release workflow before anything is built.
 */
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { breakingAllowed, compareSchemas, type PackageSchema, renderChanges } from "./schema-compare/compare.mts";
import { ROOT, lastRecordedSchema } from "./upgrade/corpus.mts";

const USAGE =
  "usage: npm run schema:compare [-- --against <schema.json>] [--json]\n\n" +
  "  --against <file>   the released schema to compare with (default: the newest in test/upgrade/<version>/schema.json)\n" +
  "  --json             print the changes and the verdict as one JSON document";

function fail(message: string, code: number): never {
  console.error(`schema:compare: ${message}${code === 2 ? `\n\n${USAGE}` : ""}`);
  process.exit(code);
}

let values: { against?: string; json?: boolean; help?: boolean };
try {
  ({ values } = parseArgs({ options: { against: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean" } } }));
} catch (error) {
  fail((error as Error).message, 2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const read = (file: string): PackageSchema => {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as PackageSchema;
  } catch (error) {
    return fail(`cannot read ${file}: ${(error as Error).message}`, 1);
  }
};
const last = lastRecordedSchema();
const againstFile = values.against ? resolve(values.against) : last?.file;
if (!againstFile) fail("no released schema to compare with: test/upgrade/ holds no corpus (npm run upgrade:record records one)", 1);
const released = read(againstFile);
const releasedVersion = released.version ?? last?.version;
if (!releasedVersion) fail(`${againstFile} names no version`, 1);
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
const current = read(join(ROOT, "schema.json"));

const changes = compareSchemas(released, current);
const breaking = changes.filter((change) => change.breaking);
const verdict = breaking.length === 0 ? { allowed: true, reason: "nothing breaks" } : breakingAllowed(releasedVersion, version);

if (values.json) {
  console.log(JSON.stringify({ released: releasedVersion, version, changes, breaking: breaking.length, ...verdict }, null, 2));
} else {
  console.log(`schema:compare: schema.json (${version}) against release ${releasedVersion}'s (${relative(ROOT, againstFile)})`);
  for (const line of renderChanges(changes)) console.log(line);
  const counted = `${changes.length} change${changes.length === 1 ? "" : "s"}, ${breaking.length} breaking`;
  if (verdict.allowed) console.log(`schema:compare: ${counted}: ${verdict.reason}`);
  else console.error(`schema:compare: ${counted}, which ${version} may not make: ${verdict.reason}`);
}
process.exitCode = verdict.allowed ? 0 : 1;
