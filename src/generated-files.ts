/**
 * The command behind each generated file of the repository (`npm run schema`: schema.json; `npm run docs`: the
 * reference pages): write the files from the declarations, or with `--check` exit 1 naming each file that is
 * missing or differs from what would be written, with its first differing lines.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** A generated file: its path from the package root, and its text. */
export interface GeneratedFile {
  path: string;
  text: string;
}

const root = join(__dirname, "..");

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

/** Writes `files`, or with `--check` reports the stale ones; the exit code. */
export function writeOrCheck(files: GeneratedFile[], command: string, args: string[]): number {
  if (args.includes("--check")) {
    const stale: string[] = [];
    for (const { path, text } of files) {
      const target = join(root, path);
      if (!existsSync(target)) stale.push(`${path} does not exist`);
      else {
        const committed = readFileSync(target, "utf8");
        if (committed !== text) stale.push(`${path} differs from what the declarations generate. ${diffSummary(committed, text)}`);
      }
    }
    if (stale.length === 0) {
      process.stdout.write(`${files.map(({ path }) => path).join(", ")}: up to date.\n`);
      return 0;
    }
    for (const problem of stale) process.stderr.write(`${problem}\n`);
    process.stderr.write(`Run \`${command}\` and commit the result.\n`);
    return 1;
  }
  for (const { path, text } of files) {
    const target = join(root, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    process.stdout.write(`Wrote ${path}.\n`);
  }
  return 0;
}
