/**
 * Writes `schema.json` at the package root from the declarations (`npm run schema`), or with `--check`
 * exits 1 when the committed file differs from what would be written.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderPackageSchema } from "./package-schema";

const target = join(__dirname, "..", "..", "schema.json");

/** The first few differing lines, enough to say what changed without printing the whole file. */
function diffSummary(committed: string, generated: string, limit = 10): string {
  const before = committed.split("\n");
  const after = generated.split("\n");
  const lines: string[] = [];
  let differing = 0;
  for (let index = 0; index < Math.max(before.length, after.length); index++) {
    if (before[index] === after[index]) continue;
    differing++;
    if (lines.length < limit)
      lines.push(
        `  line ${index + 1}:\n    committed: ${before[index] ?? "(end of file)"}\n    generated: ${after[index] ?? "(end of file)"}`,
      );
  }
  return `${differing} line(s) differ${differing > limit ? `; the first ${limit}` : ""}:\n${lines.join("\n")}`;
}

function main(args: string[]): number {
  const generated = renderPackageSchema();
  if (args.includes("--check")) {
    if (!existsSync(target)) {
      process.stderr.write(`${target} does not exist: run \`npm run schema\` to write it.\n`);
      return 1;
    }
    const committed = readFileSync(target, "utf8");
    if (committed === generated) {
      process.stdout.write(`${target} is up to date.\n`);
      return 0;
    }
    process.stderr.write(
      `${target} differs from what the declarations generate: run \`npm run schema\`.\n${diffSummary(committed, generated)}\n`,
    );
    return 1;
  }
  writeFileSync(target, generated);
  process.stdout.write(`Wrote ${target}.\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
