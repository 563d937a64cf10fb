/**
 * The commands `pulumi-gms discover` prints (its `next`), run as written, the way a user pastes them into a shell:
 * each line by bash, in the folder the `cd` lines before it lead to (relative to where discover ran), with the
 * user's environment. What a user types is given the same way: each key the CLI asks for on the command's standard
 * input, and `pulumi up`'s "Do you want to perform this update?" answered yes (PULUMI_SKIP_CONFIRMATIONS, the CLI's
 * own setting for that answer). Lines after one that fails do not run.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { expect } from "vitest";

/** The commands of one folder: those before the first `cd` (the backend's), then those after each `cd`. */
export interface PrintedBlock {
  /** The folder the lines run in. */
  cwd: string;
  lines: string[];
}

const CD = /^cd (\S+)$/;

/** The printed lines cut at each `cd`, each block's folder resolved as bash would from where the previous left off. */
export function printedBlocks(next: readonly string[], start: string): PrintedBlock[] {
  const blocks: PrintedBlock[] = [{ cwd: start, lines: [] }];
  for (const line of next) {
    const cd = CD.exec(line);
    if (cd) blocks.push({ cwd: resolve(blocks.at(-1)!.cwd, cd[1]!), lines: [] });
    else blocks.at(-1)!.lines.push(line);
  }
  return blocks;
}

/** What the user gives a line on its standard input (a key the CLI asks for), or undefined for nothing. */
export type Answers = (line: string) => string | undefined;

/** Runs one line with bash; resolves with what it printed, rejects (saying which line) when it exits other than 0. */
function runLine(line: string, cwd: string, env: NodeJS.ProcessEnv, stdin: string | undefined): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn("bash", ["-c", line], { cwd, env: { ...env, PULUMI_SKIP_CONFIRMATIONS: "true" } });
    let output = "";
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    // A line that reads nothing may close its input before this is written.
    child.stdin.on("error", () => {});
    child.stdin.end(stdin ?? "");
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? done(output) : fail(new Error(`\`${line}\` in ${cwd} exited ${code}:\n${output}`))));
  });
}

/** The block's lines, one after another in its folder: what each printed, in order. */
export async function runBlock(block: PrintedBlock, env: NodeJS.ProcessEnv, answers: Answers): Promise<string[]> {
  expect(existsSync(block.cwd), `the folder ${block.cwd} a cd line names`).toBe(true);
  const outputs: string[] = [];
  for (const line of block.lines) outputs.push(await runLine(line, block.cwd, env, answers(line)));
  return outputs;
}

/**
 * The counts of the closing "Resources:" summary of an `up` or a preview, by step (`{ created: 1, imported: 12 }`,
 * `{ unchanged: 13 }`), without the total of changes the CLI adds when there are several kinds.
 */
export function resourceCounts(output: string): Record<string, number> {
  const summary = output.slice(output.lastIndexOf("Resources:")).split("\n\n")[0]!;
  const counts: Record<string, number> = {};
  for (const [, count, step] of summary.matchAll(/(\d+) (?:to )?([a-z]+)/g)) if (!/^changes?$/.test(step!)) counts[step!] = Number(count);
  return counts;
}
