/**
 * What the examples/gitops suites share: the pipeline script run as a pipeline runs it, `node pipeline.ts <job>`,
 * with the CLI's folder first on its PATH (the pipeline runs `pulumi` from PATH; the dynamic-provider launcher is
 * beside it), then this `node` (22.18+ strips types), which the launcher runs the provider host with; and a copy
 * of the quickstart with the built package installed, as the pipeline's program.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { installPackageCopy, type PulumiCli } from "../../src/testing";

const ROOT = join(__dirname, "..", "..");
export const GITOPS = join(ROOT, "examples", "gitops");
export const QUICKSTART = join(ROOT, "examples", "quickstart");

export interface Run {
  code: number | null;
  output: string;
  result?: {
    job: string;
    changes: Record<string, number>;
    outputs?: Record<string, unknown>;
    drift?: Record<string, number>;
    recovered?: Record<string, number>;
  };
}

/**
 * Starts `node pipeline.ts <args>` in a process group of its own (`detached`), so that a test can stop it as a
 * runner is stopped; `run` settles when it has exited.
 */
export function startPipeline(
  args: string[],
  env: NodeJS.ProcessEnv,
  cli: PulumiCli | undefined,
): { child: ChildProcess; run: Promise<Run> } {
  const child = spawn(process.execPath, [join(GITOPS, "pipeline.ts"), ...args], {
    cwd: GITOPS,
    env: { ...process.env, PATH: [...(cli ? [cli.dir] : []), dirname(process.execPath), process.env.PATH ?? ""].join(delimiter), ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const run = new Promise<Run>((done) =>
    child.on("close", (code) => {
      const line = output.split("\n").find((text) => text.startsWith("result: "));
      done({ code, output, ...(line ? { result: JSON.parse(line.slice("result: ".length)) } : {}) });
    }),
  );
  return { child, run };
}

/** `node pipeline.ts <args>` to its end. */
export const runPipeline = (args: string[], env: NodeJS.ProcessEnv, cli: PulumiCli | undefined): Promise<Run> =>
  startPipeline(args, env, cli).run;

/** A copy of the quickstart in `work`/quickstart, with the built package installed as a user installs it. */
export function quickstartIn(work: string): string {
  const programDir = join(work, "quickstart");
  cpSync(QUICKSTART, programDir, { recursive: true, filter: (source) => !source.startsWith(join(QUICKSTART, "node_modules")) });
  installPackageCopy(programDir);
  return programDir;
}
