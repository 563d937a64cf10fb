/**
 * `npm run fuzz`: Schemathesis against the emulator, driven by the emulator's own OpenAPI document
 * (`GET /v1/openapi.json`, generated from the endpoint entries). It checks that no request is answered 5xx, that every
 * answer's status, content type and body conform to the document, and (scripts/fuzz/checks.py) that every 4xx says
 * what is wrong.
 *
 *   npm run fuzz [-- --ci]
 *
 * `--ci` is the bounded budget `.ci/run` uses; without it the budget is larger. Schemathesis is installed, pinned,
 * into the git-ignored virtual environment `.venv-fuzz/` (made with python3 when absent). The emulator runs in this
 * process on a loopback port with a workspace whose API key is generated here and reaches Schemathesis only through
 * its environment; every line Schemathesis prints passes a filter that masks it. Exit 0 when nothing failed, 1 when
 * a check failed, 2 when the run could not be made. Before it starts, scripts/fuzz/seed.mts makes an object of every
 * collection a route names and binds the generated requests' GUIDs to them, so that most requests reach a real object.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { startEmulator } from "../dist/emulator/index.js";
import { fuzzFixtures, type OpenApiDocument, SEEDED_KEY, seededConfig, seedObjects } from "./fuzz/seed.mts";

const SCHEMATHESIS = "schemathesis==4.32.5";
const root = resolve(import.meta.dirname, "..");
const venv = join(root, ".venv-fuzz");
const bin = (name: string) => join(venv, "bin", name);

/** Test cases per operation and seconds for the whole run: `.ci/run`'s step must end within 3 minutes, setup included. */
const BUDGETS = {
  ci: { maxExamples: 25, maxSeconds: 100 },
  full: { maxExamples: 300, maxSeconds: 900 },
};
/** How long past its budget Schemathesis may run (it reports after --max-time) before it is stopped. */
const OVERRUN_SECONDS = 30;
const CHECKS = [
  "not_a_server_error",
  "status_code_conformance",
  "content_type_conformance",
  "response_schema_conformance",
  "error_names_problem",
];

const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg !== "--ci");
if (unknown.length > 0) {
  process.stderr.write(`fuzz: unknown argument ${unknown[0]}; usage: npm run fuzz [-- --ci]\n`);
  process.exit(2);
}
const budgetName = args.includes("--ci") ? "ci" : "full";
const budget = BUDGETS[budgetName];
const started = Date.now();

/** Runs a setup command, its output shown; a failure stops the run. */
function setup(command: string, commandArgs: string[]): void {
  const result = spawnSync(command, commandArgs, { stdio: "inherit" });
  if (result.status !== 0) {
    process.stderr.write(`fuzz: ${command} ${commandArgs.join(" ")} failed (${result.error?.message ?? `exit ${result.status}`})\n`);
    process.exit(2);
  }
}

/** The pinned Schemathesis, installed into `.venv-fuzz/` unless it is there already. */
function ensureSchemathesis(): void {
  const wanted = SCHEMATHESIS.split("==")[1]!;
  const installed = existsSync(bin("schemathesis")) ? spawnSync(bin("schemathesis"), ["--version"], { encoding: "utf8" }).stdout : "";
  if (installed.includes(wanted)) return;
  if (!existsSync(bin("python"))) {
    process.stdout.write(`fuzz: making the virtual environment ${venv}\n`);
    setup("python3", ["-m", "venv", venv]);
  }
  process.stdout.write(`fuzz: installing ${SCHEMATHESIS}\n`);
  setup(bin("pip"), ["install", "--quiet", "--disable-pip-version-check", SCHEMATHESIS]);
}

/** The parts of Schemathesis's JSON run report (`--report json`) this script prints. */
interface RunReport {
  operations: { tested: number };
  test_cases: { generated: number; with_failures: number; unique_failures: number };
  errors: unknown[];
}

ensureSchemathesis();

const apiKey = `gms_fuzz_${randomBytes(18).toString("base64url")}`;
/** What the emulator answered the run: how many requests, and how many 404 (an invented GUID reaches no record). */
const answered = { requests: 0, notFound: 0 };
// A fresh database each run, with the fixtures and then the seeded objects the generated requests name (seed.mts).
const emulator = await startEmulator({
  fixtures: fuzzFixtures(apiKey),
  fineTuneSeconds: 0,
  onRequestComplete: (entry) => {
    answered.requests++;
    if (entry.status === 404) answered.notFound++;
  },
});

const seeded = await seedObjects(emulator.url, apiKey).catch(async (error: Error) => {
  process.stderr.write(`${error.message.replace(SEEDED_KEY, "[provider key]")}\n`);
  await emulator.close();
  process.exit(2);
});
// What Schemathesis's requests reached, the seeding's own left out.
Object.assign(answered, { requests: 0, notFound: 0 });
const document = (await (await fetch(`${emulator.url}/openapi.json`)).json()) as OpenApiDocument;

const work = mkdtempSync(join(tmpdir(), "gms-fuzz-"));
const reportFile = join(work, "report.json");
// The key travels as an environment variable the configuration names: never on a command line, never printed.
writeFileSync(
  join(work, "schemathesis.toml"),
  seededConfig(document, seeded, 'headers = { Authorization = "Bearer ${GMS_FUZZ_API_KEY}" }'),
);

/** Schemathesis's output, line by line, with the keys masked should any line carry one (a Model's create answers its key). */
const masked = (line: string) => line.split(apiKey).join("[API key]").replace(SEEDED_KEY, "[provider key]");
/**
 * Schemathesis closes with a pytest-like frame (`=== 3 warnings in 100.00s ===`), which a CI log reader may take for a
 * test runner's summary of a run that ran no test; that line is reworded. Every other line passes as it is.
 */
const reworded = (line: string) => line.replace(/^=+ (.+ in [\d.]+s) =+$/, "Schemathesis finished: $1");

let exitCode: number;
let report: RunReport | undefined;
try {
  const child = spawn(
    bin("schemathesis"),
    [
      "--config-file",
      join(work, "schemathesis.toml"),
      "run",
      `${emulator.url}/openapi.json`,
      "--checks",
      CHECKS.join(","),
      "--max-examples",
      String(budget.maxExamples),
      "--max-time",
      String(budget.maxSeconds),
      "--seed",
      "30",
      // Deleting the caller's own workspace (the stateful phase finds its GUID) revokes the key for the rest of the run.
      "--exclude-operation-id",
      "workspaces.delete",
      "--report",
      "json",
      "--report-json-path",
      reportFile,
      "--no-color",
    ],
    {
      cwd: root,
      env: { ...process.env, GMS_FUZZ_API_KEY: apiKey, SCHEMATHESIS_HOOKS: join(root, "scripts", "fuzz", "checks.py") },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  createInterface({ input: child.stdout }).on("line", (line) => process.stdout.write(`${reworded(masked(line))}\n`));
  createInterface({ input: child.stderr }).on("line", (line) => process.stderr.write(`${masked(line)}\n`));
  // Schemathesis keeps to --max-time; should it not (a request that hangs), the run is stopped past a margin.
  const overdue = setTimeout(() => child.kill("SIGTERM"), (budget.maxSeconds + OVERRUN_SECONDS) * 1000);
  exitCode = await new Promise<number>((settle) => child.on("close", (code) => settle(code ?? 2)));
  clearTimeout(overdue);
  if (existsSync(reportFile)) report = JSON.parse(readFileSync(reportFile, "utf8")) as RunReport;
} finally {
  await emulator.close();
  rmSync(work, { recursive: true, force: true });
}

const seconds = ((Date.now() - started) / 1000).toFixed(0);
const budgetText = `${budgetName} budget: at most ${budget.maxExamples} cases per operation, ${budget.maxSeconds} s`;
if (report) {
  const { generated, with_failures: failed, unique_failures: unique } = report.test_cases;
  process.stdout.write(
    `fuzz: ${generated} cases over ${report.operations.tested} operations, ${failed} failed (${unique} unique failures), ` +
      `${report.errors.length} errors (${budgetText}; ${seconds} s in all)\n`,
  );
  const reached = answered.requests === 0 ? 0 : (100 * (answered.requests - answered.notFound)) / answered.requests;
  process.stdout.write(`fuzz: ${answered.requests} requests, ${reached.toFixed(1)}% answered other than 404 (the rest named no record)\n`);
} else {
  process.stdout.write(`fuzz: Schemathesis wrote no report (exit ${exitCode}; ${budgetText}; ${seconds} s in all)\n`);
}
process.exit(exitCode === 0 ? 0 : exitCode === 1 ? 1 : 2);
