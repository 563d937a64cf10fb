/**
 * `npm run bench`: runs every benchmark of page.mts one after another (each prints its figures as on its own), times
 * the build and the demo (examples/demo.mts, on LocalEngine and on the real CLI when there is one), then writes
 * docs/benchmarks.md whole from the sections they wrote (section.mts): every figure, with the date, the machine, the
 * command and when each program started. A program that fails stops the run, and the page is left as it was. It takes
 * no arguments: it never runs one benchmark alone, so it never patches one section into an older page (run a program
 * on its own to see its figures; they reach the page with the next whole run).
 *   npm run bench   (builds first; or, after `npm run build`: node test/bench/report.mts)
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { arch, cpus, loadavg, platform, release, tmpdir, totalmem } from "node:os";
import { join, relative } from "node:path";
import { findPulumiCli } from "../../dist/testing/index.js";
import type * as PageModule from "./page.mts";
import type * as SectionModule from "./section.mts";

if (process.argv.length > 2) {
  console.error(
    `test/bench/report.mts takes no arguments (got ${process.argv.slice(2).join(" ")}): it runs every benchmark and writes ` +
      "docs/benchmarks.md whole, one sitting. To see one benchmark's figures, run it alone: node test/bench/<name>.mts",
  );
  process.exit(2);
}

const sectionModule = "./section.mts";
const pageModule = "./page.mts";
const { SECTION_ENV } = (await import(sectionModule)) as typeof SectionModule;
const { BUILD_AND_DEMO, PROGRAMS, composePage, fuzzingSection, programSection, sittingProblems } = (await import(
  pageModule
)) as typeof PageModule;

const root = join(import.meta.dirname, "..", "..");
const PAGE = join(root, "docs", "benchmarks.md");

/** Runs a command in the project's folder, printing and returning its output and wall time; stops the run if it fails. */
function timedRun(command: string, args: string[]): { seconds: number; output: string } {
  console.log(`> ${command}`);
  const begun = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", maxBuffer: 64 << 20 });
  const seconds = Number(process.hrtime.bigint() - begun) / 1e9;
  process.stdout.write(run.stdout ?? "");
  if (run.status !== 0) {
    console.error(`${command} failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`}): docs/benchmarks.md not written`);
    process.exit(1);
  }
  return { seconds, output: run.stdout };
}

/** The build's wall time, and `npm run demo`'s on each engine there is (its steps' times as it prints them). */
function buildAndDemo(): string {
  const build = timedRun("npm run build (tsc -p src)", [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "src"]);
  const lines = [
    `## ${BUILD_AND_DEMO}`,
    "",
    "`npm run build` (`tsc -p src`) and `node examples/demo.mts` (what `npm run demo` runs after the build), on the offline engine " +
      "and, when there is one, on the real Pulumi CLI. Each step's time is what the demo prints for it (`<== step: time`).",
    "",
    `| figure | wall time |`,
    "|---|---|",
    `| \`npm run build\` | ${build.seconds.toFixed(1)} s |`,
  ];
  const engines = findPulumiCli().found ? (["local", "cli"] as const) : (["local"] as const);
  for (const engine of engines) {
    const demo = timedRun(`node examples/demo.mts --engine ${engine}`, [join(root, "examples", "demo.mts"), "--engine", engine]);
    const name = engine === "local" ? "demo on LocalEngine" : "demo on the real CLI";
    lines.push(`| ${name}, \`node examples/demo.mts --engine ${engine}\` | ${demo.seconds.toFixed(1)} s |`);
    for (const [, step, seconds, rest] of demo.output.matchAll(/^<== (.+?): ([\d.]+) s(.*)$/gm))
      lines.push(`| ${name}: ${step!.replace(/\|/g, "\\|")} | ${seconds} s${rest} |`);
    const complete = /^Demo complete: (.*)$/m.exec(demo.output);
    if (complete) lines.push(`| ${name}: the quickstart's up | ${complete[1]!.replace(/\.$/, "")} |`);
  }
  if (engines.length === 1) lines.push("", "No Pulumi CLI was found: the demo ran on the offline engine only.");
  return lines.join("\n");
}

const started = new Date();
const load = loadavg();
const dir = mkdtempSync(join(tmpdir(), "gms-bench-report-"));
const sections: string[] = [];
try {
  for (const program of PROGRAMS) {
    const file = join(dir, `${program.id}.md`);
    const programStarted = new Date();
    const begun = process.hrtime.bigint();
    const run = spawnSync(process.execPath, [join(root, program.file)], {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, [SECTION_ENV]: file },
    });
    const wall = Number(process.hrtime.bigint() - begun) / 1e9;
    if (run.status !== 0) {
      console.error(`${program.file} failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`}): docs/benchmarks.md not written`);
      process.exit(1);
    }
    const body = existsSync(file) ? readFileSync(file, "utf8").trim() : `No figures: \`${program.file}\` wrote no section.`;
    sections.push(programSection(program, programStarted, wall, body));
  }
  sections.push(buildAndDemo());
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const finished = new Date();
const processors = cpus();
const models = [...new Set(processors.map((cpu) => cpu.model.trim()))].join(", ");
const lookup = findPulumiCli();
const pulumi = lookup.found
  ? `${lookup.cli.version} (\`${relative(root, lookup.cli.bin).startsWith("..") ? lookup.cli.bin : relative(root, lookup.cli.bin)}\`)`
  : `none (${lookup.reason}); its section is skipped`;
// The fuzzing figures come from `npm run fuzz`, run by hand (scripts/fuzz.mts): kept as the page had them.
const page = composePage({
  started,
  finished,
  machine: [
    `| CPU | ${processors.length} x ${models} |`,
    `| memory | ${(totalmem() / 1024 ** 3).toFixed(1)} GiB |`,
    `| OS | ${platform()} ${release()} ${arch()} |`,
    `| load average at the start (1, 5, 15 min) | ${load.map((value) => value.toFixed(2)).join(", ")} |`,
    `| Node.js | ${process.version} |`,
    `| Pulumi CLI | ${pulumi} |`,
  ],
  sections,
  fuzzing: fuzzingSection(existsSync(PAGE) ? readFileSync(PAGE, "utf8") : ""),
});
const problems = sittingProblems(page);
if (problems.length > 0) {
  console.error(`docs/benchmarks.md not written: the page would not be one sitting:\n${problems.join("\n")}`);
  process.exit(1);
}
writeFileSync(PAGE, page);
console.log(`wrote ${relative(root, PAGE)}`);
