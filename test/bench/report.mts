/**
 * `npm run bench`: runs the six benchmarks one after another (each prints its figures as on its own), times the
 * build and the demo (examples/demo.mts, on LocalEngine and on the real CLI when there is one), then writes
 * docs/benchmarks.md from the sections they wrote (section.mts): every figure, with the date, the machine and the command.
 * A program that fails stops the run, and the page is left as it was.
 *   npm run bench   (builds first; or, after `npm run build`: node test/bench/report.mts)
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { arch, cpus, loadavg, platform, release, tmpdir, totalmem } from "node:os";
import { join, relative } from "node:path";
import { findPulumiCli } from "../../dist/testing/index.js";
import type * as SectionModule from "./section.mts";

const sectionModule = "./section.mts";
const { SECTION_ENV } = (await import(sectionModule)) as typeof SectionModule;

const root = join(import.meta.dirname, "..", "..");
const PAGE = join(root, "docs", "benchmarks.md");

const programs = [
  { id: "emulator", title: "Emulator throughput", file: "test/bench/emulator.mts" },
  { id: "engine", title: "LocalEngine against its floor", file: "test/bench/engine.mts" },
  { id: "cli", title: "The real Pulumi CLI against LocalEngine and the floor", file: "test/bench/cli.mts" },
  { id: "plugin", title: "The release's provider plugin: cold start and `pulumi up` of 100 Apps", file: "test/bench/plugin.mts" },
  { id: "rate-limit", title: "100 Apps under a service's rate limit of 5 requests a second", file: "test/bench/rate-limit.mts" },
  { id: "pacer", title: "The adaptive pacer alone, on a simulated clock", file: "test/bench/pacer.mts" },
  {
    id: "gitops",
    title: "The GitOps pipeline: two runners' `up` at the same moment against one after the other",
    file: "test/bench/gitops.mts",
  },
  { id: "scaling", title: "The cost of one stack by its size, on a file backend and in S3", file: "test/bench/scaling.mts" },
];

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
    "## Build and demo",
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
  for (const program of programs) {
    const file = join(dir, `${program.id}.md`);
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
    sections.push(`## ${program.title}\n\n\`node ${program.file}\` (defaults; ${wall.toFixed(0)} s wall time)\n\n${body}`);
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
const previous = existsSync(PAGE) ? readFileSync(PAGE, "utf8") : "";
const fuzzAt = previous.indexOf("\n## Fuzzing the emulator");
const fuzzing = fuzzAt === -1 ? "" : previous.slice(fuzzAt);
const files = programs.map((program) => `\`${program.file}\``);
const programList = `${files.slice(0, -1).join(", ")} and ${files.at(-1)}`;
const page = `_Generated by \`npm run bench\` (test/bench/report.mts). Do not edit by hand: run it again._

# Benchmarks

([Back to the docs index](README.md).)

Every figure below comes from one run of \`npm run bench\` (\`npm run build && node test/bench/report.mts\`, which runs
${programList} with their defaults in turn, then times
the build and \`examples/demo.mts\`). Ratios are of figures measured in the same run. Timings depend on the machine and on what else it runs: they are never
pass/fail, and the ratios move less than the times.

| | |
|---|---|
| date | ${started.toISOString()} to ${finished.toISOString()} (${((finished.getTime() - started.getTime()) / 1000).toFixed(0)} s) |
| CPU | ${processors.length} x ${models} |
| memory | ${(totalmem() / 1024 ** 3).toFixed(1)} GiB |
| OS | ${platform()} ${release()} ${arch()} |
| load average at the start (1, 5, 15 min) | ${load.map((value) => value.toFixed(2)).join(", ")} |
| Node.js | ${process.version} |
| Pulumi CLI | ${pulumi} |

${sections.join("\n\n")}
${fuzzing}`;
writeFileSync(PAGE, page);
console.log(`wrote ${relative(root, PAGE)}`);
