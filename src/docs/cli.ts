/**
 * Writes the generated reference pages under docs/ from the declarations (`npm run docs`), or with `--check`
 * exits 1 when a committed page differs from what would be written. Loading the module does nothing: the
 * work runs only when it is the program (`node dist/docs/cli.js`).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DOCS_COMMAND, generatedDocs } from "./render";

const root = join(__dirname, "..", "..");

/** The first few differing lines, enough to say what changed without printing the whole page. */
export function diffSummary(committed: string, generated: string, limit = 10): string {
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

/** The pages that are missing or differ from what the declarations generate, each with why. */
export function stalePages(): { path: string; problem: string }[] {
  const stale: { path: string; problem: string }[] = [];
  for (const { path, text } of generatedDocs()) {
    const target = join(root, path);
    if (!existsSync(target)) stale.push({ path, problem: "does not exist" });
    else {
      const committed = readFileSync(target, "utf8");
      if (committed !== text) stale.push({ path, problem: `differs from what the declarations generate. ${diffSummary(committed, text)}` });
    }
  }
  return stale;
}

function main(args: string[]): number {
  if (args.includes("--check")) {
    const stale = stalePages();
    if (stale.length === 0) {
      process.stdout.write(
        `${generatedDocs()
          .map(({ path }) => path)
          .join(", ")}: up to date.\n`,
      );
      return 0;
    }
    for (const { path, problem } of stale) process.stderr.write(`${path} ${problem}\n`);
    process.stderr.write(`Run \`${DOCS_COMMAND}\` and commit the result.\n`);
    return 1;
  }
  for (const { path, text } of generatedDocs()) {
    const target = join(root, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    process.stdout.write(`Wrote ${path}.\n`);
  }
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
