/**
 * The GitOps pipeline's lock, from one run: what two runners' `up` of one commit at the same moment cost against the
 * floor, the same two jobs one after the other (the first creates the quickstart's nine objects, the second finds
 * nothing to do). At the same moment, one job meets the other's lock, changes nothing, and waits its turn
 * (examples/gitops/pipeline.ts: pauses of about 2, 4, 6 ... s with jitter); the figure is what that waiting adds. Each
 * round is `node pipeline.ts up` from two working copies (each its own PULUMI_HOME) against the emulator seeded with
 * the quickstart's fixtures, on a file backend (a bucket's lock behaves the same: test/examples/gitops-s3.test.ts), and
 * the stack is emptied (destroyed, unmeasured) before the two start together. Each job is a whole process, so starting
 * both at once also overlaps their start-up (the CLI, the program's import): the figure is what the waiting costs net
 * of that. Needs the real Pulumi CLI; without it, says why and prints
 * nothing else. Prints figures only: timings are never pass/fail.
 *   npm run bench   (or, after `npm run build`: node test/bench/gitops.mts [ROUNDS])
 * Under `npm run bench` (test/bench/report.mts) it also writes its section of docs/benchmarks.md (section.mts).
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { startEmulator } from "../../dist/emulator/index.js";
import { findPulumiCli, installPackageCopy } from "../../dist/testing/index.js";
import type * as EngineBench from "./engine.mts";
import type * as SectionModule from "./section.mts";

// Modules by a path TypeScript does not resolve (Node strips the types at run time; see cli.mts).
const sectionModule = "./section.mts";
const { Section } = (await import(sectionModule)) as typeof SectionModule;
const engineBench = "./engine.mts";
const { median, ms, ratio, seconds } = (await import(engineBench)) as typeof EngineBench;

const ROUNDS = Number(process.argv[2] ?? 3);
const root = join(import.meta.dirname, "..", "..");
const GITOPS = join(root, "examples", "gitops");
const QUICKSTART = join(root, "examples", "quickstart");

interface Job {
  seconds: number;
  code: number | null;
  /** The job's `result:` line's changes. */
  changes: Record<string, number>;
  /** How many times it met the other's lock and waited. */
  waits: number;
}

/** `node pipeline.ts <args>` to its end, timed. */
function pipeline(args: string[], env: NodeJS.ProcessEnv): Promise<Job> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [join(GITOPS, "pipeline.ts"), ...args], { cwd: GITOPS, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  return new Promise((resolve) =>
    child.on("close", (code) => {
      const result = output.split("\n").find((line) => line.startsWith("result: "));
      resolve({
        seconds: seconds(started),
        code,
        changes: result ? (JSON.parse(result.slice("result: ".length)) as { changes: Record<string, number> }).changes : {},
        waits: output.split("\n").filter((line) => /is locked by .*: waiting/.test(line)).length,
      });
    }),
  );
}

const section = new Section();
const lookup = findPulumiCli();
if (!lookup.found) {
  section.print(`GitOps lock figures skipped: ${lookup.reason}`);
  section.text(`Skipped: no Pulumi CLI was found (${lookup.reason}). \`npm run pulumi:install\` builds one.`);
  section.write();
} else {
  const { cli } = lookup;
  const work = mkdtempSync(join(tmpdir(), "gms-bench-gitops-"));
  const emulator = await startEmulator({ port: 0, fixtures: join(QUICKSTART, "fixtures.yaml") });
  try {
    /** A runner: its own copy of the program (the built package installed) and its own PULUMI_HOME; one backend. */
    const runner = (name: string): NodeJS.ProcessEnv => {
      const program = join(work, name, "quickstart");
      cpSync(QUICKSTART, program, { recursive: true, filter: (source) => !source.startsWith(join(QUICKSTART, "node_modules")) });
      installPackageCopy(program);
      return {
        ...process.env,
        PATH: [cli.dir, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter),
        GMS_BASE_URL: emulator.url,
        GMS_API_KEY: emulator.apiKey,
        OPENAI_API_KEY: "sk-bench-gitops",
        PULUMI_CONFIG_PASSPHRASE: "bench gitops",
        PULUMI_BACKEND_URL: pathToFileURL(join(work, "backend")).href,
        PULUMI_HOME: join(work, name, "pulumi-home"),
        GMS_PROGRAM_DIR: program,
      };
    };
    const [a, b] = [runner("a"), runner("b")];
    const rounds: { sequential: { seconds: number }; together: { seconds: number }; first: { seconds: number } }[] = [];
    section.print(`GitOps lock: ${ROUNDS} rounds of two runners' up of the quickstart, ${cli.version}, file backend`);
    for (let round = 1; round <= ROUNDS; round++) {
      const stack = { GMS_STACK: `bench-${round}` };
      // The floor: one job, then the other.
      const first = await pipeline(["up"], { ...a, ...stack });
      const second = await pipeline(["up"], { ...b, ...stack });
      await pipeline(["destroy"], { ...a, ...stack });
      // Both at the same moment, on the same stack (emptied, as a team's stack exists before its jobs run).
      const started = process.hrtime.bigint();
      const jobs = await Promise.all([pipeline(["up"], { ...a, ...stack }), pipeline(["up"], { ...b, ...stack })]);
      const both = seconds(started);
      await pipeline(["destroy"], { ...a, ...stack });
      const ok = [first, second, ...jobs].every((job) => job.code === 0);
      rounds.push({
        sequential: { seconds: first.seconds + second.seconds },
        together: { seconds: both },
        first: { seconds: first.seconds },
      });
      section.print(
        `round ${round}: one after the other ${ms(first.seconds + second.seconds)} (${ms(first.seconds)} + ${ms(second.seconds)}), ` +
          `at once ${ms(both)} (${jobs.map((job) => `${JSON.stringify(job.changes)} after ${job.waits} wait(s)`).join(", ")})` +
          (ok ? "" : ` FAILED: exits ${[first, second, ...jobs].map((job) => job.code).join(", ")}`),
      );
    }
    const mid = median(rounds);
    section.print(
      `median: at once ${ms(mid.together.seconds)}, one after the other ${ms(mid.sequential.seconds)}: ` +
        `${ratio(mid.together.seconds, mid.sequential.seconds)} the floor`,
    );
    section.table(
      ["", "median wall", "against one after the other"],
      [
        ["two `up` jobs one after the other (the floor)", ms(mid.sequential.seconds).trim(), "1.00x"],
        [
          "the same two at the same moment (one waits for the lock)",
          ms(mid.together.seconds).trim(),
          ratio(mid.together.seconds, mid.sequential.seconds).trim(),
        ],
        [
          "the first job alone (creates the nine objects)",
          ms(mid.first.seconds).trim(),
          ratio(mid.first.seconds, mid.sequential.seconds).trim(),
        ],
      ],
    );
    section.write();
  } finally {
    await emulator.close();
    rmSync(work, { recursive: true, force: true });
  }
}
