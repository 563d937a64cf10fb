/**
 * A stack under a service's rate limit, from one run: `up`, `refresh` and `destroy` of N Apps (100 by default)
 * against the emulator limiting its key to R requests a second (`--faults rate=R/s`, 5 by default), on LocalEngine
 * and on the real Pulumi CLI (when there is one), each with the provider held to the same rate
 * (`gms:maxRequestsPerSecond` = R) and with no limit of its own (its retries after the service's `Retry-After` only).
 * For each operation: its wall time, what it did (or how it failed), the requests the emulator saw and how many it
 * refused with 429, counted from its request log (`--log`). The floor at the limit is N / R seconds per operation.
 * An operation that fails is reported, not fatal; the Apps it left are destroyed (unmeasured) before the next run.
 * The emulator runs in its own process (the CLI, SQLite file). Prints figures only: timings are never pass/fail.
 *   npm run bench   (or, after `npm run build`: node test/bench/rate-limit.mts [N] [R])
 * Under `npm run bench` (test/bench/report.mts) it also writes its section of docs/benchmarks.md (section.mts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as delay } from "node:timers/promises";
import { LocalEngine, PulumiCliEngine, findPulumiCli, installPackageCopy } from "../../dist/testing/index.js";
import type * as SectionModule from "./section.mts";

// section.mts by a path TypeScript does not resolve (Node strips the types at run time; see cli.mts).
const sectionModule = "./section.mts";
const { Section, tableMs } = (await import(sectionModule)) as typeof SectionModule;

const N = Number(process.argv[2] ?? 100);
const RATE = Number(process.argv[3] ?? 5);
const KEY = "gms_bench_rate_key";
const root = join(import.meta.dirname, "..", "..");

/** What the emulator's request log has shown since the last `reset()`. */
interface Log {
  requests: number;
  refused: number;
  /** When the first and the last line arrived (performance.now()): the span of an operation's requests. */
  firstLineAt: number;
  lastLineAt: number;
}

/** The emulator in its own process with the rate limit, its `--log` lines counted as they arrive. */
async function startEmulator(dir: string): Promise<{ url: string; child: ChildProcess; log: Log }> {
  const fixtures = join(dir, "fixtures.json");
  writeFileSync(fixtures, JSON.stringify({ workspaces: [{ name: "Bench", slug: "bench", apiKey: KEY, limits: { apps: 1_000_000 } }] }));
  const child = spawn(
    process.execPath,
    [
      join(root, "dist/cli/main.js"),
      "emulator",
      ...["--port", "0", "--db", join(dir, "emulator.db"), "--fixtures", fixtures, "--faults", `rate=${RATE}/s`, "--log"],
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const log: Log = { requests: 0, refused: 0, firstLineAt: 0, lastLineAt: 0 };
  const lines = createInterface({ input: child.stdout! });
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the emulator exited (${code}) before listening`)));
    lines.on("line", (line) => {
      const request = /^[A-Z]+ \S+ (\d{3}) /.exec(line);
      if (request) {
        if (log.requests === 0) log.firstLineAt = performance.now();
        log.requests++;
        if (request[1] === "429") log.refused++;
        log.lastLineAt = performance.now();
        return;
      }
      const listening = /listening on (\S+)/.exec(line);
      if (listening) resolve({ url: listening[1]!, child, log });
    });
  });
}

/** Waits until the log has been quiet for a while: its lines travel through a pipe and may trail the answers. */
async function logSettled(log: Log): Promise<void> {
  while (performance.now() - log.lastLineAt < 300) await delay(100);
}

type EngineName = "LocalEngine" | "real CLI";
type OperationName = "up" | "refresh" | "destroy";

interface Measured {
  engine: EngineName;
  providerRate: number | undefined;
  operation: OperationName;
  seconds: number;
  /** From the first request the emulator logged to the last. */
  spanSeconds: number;
  outcome: string;
  requests: number;
  refused: number;
}

/** What an operation did, from its counts (its result, or a failure's partial result). */
function didWhat(operation: OperationName, counts: Record<string, number> | undefined, steps: number | undefined): string {
  if (operation === "up") return `${counts?.create ?? 0} created`;
  if (operation === "destroy") return `${counts?.delete ?? 0} deleted`;
  return `${steps ?? 0} read`;
}

/** A failure, short: how many steps failed and the first one's reason (never a key: the provider's errors carry none). */
const briefly = (error: unknown) => {
  const line = (error instanceof Error ? error.message : String(error))
    .split("\n")
    .map((part) => part.trim())
    .filter(Boolean)
    .slice(0, 2)
    .join(" ");
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
};

/** Either engine, as far as this program uses it. */
type Engine = Record<OperationName, () => Promise<{ counts: Record<string, number>; steps: unknown[] }>>;

async function measureRuns(engineName: EngineName, url: string, log: Log, providerRate: number | undefined): Promise<Measured[]> {
  const dir = mkdtempSync(join(tmpdir(), "gms-bench-rate-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "bench-rate-program", private: true, type: "module" }));
  installPackageCopy(dir);
  writeFileSync(
    join(dir, "index.ts"),
    `import * as gms from "pulumi-gms";
for (let i = 0; i < ${N}; i++) new gms.App(\`app-\${i}\`, { name: \`rate bench \${i}\`, description: "bench" });
`,
  );
  const config = {
    "gms:baseUrl": url,
    "gms:apiKey": { secret: KEY },
    ...(providerRate === undefined ? {} : { "gms:maxRequestsPerSecond": String(providerRate) }),
  };
  const common = { programDir: dir, project: "bench", stack: "dev", config, secretsPassphrase: "bench", log: () => undefined };
  let engine: Engine;
  if (engineName === "LocalEngine") engine = new LocalEngine({ ...common, stateFile: join(dir, "state.json") });
  else {
    const lookup = findPulumiCli();
    if (!lookup.found) throw new Error(lookup.reason);
    engine = new PulumiCliEngine({ ...common, cli: lookup.cli, stateDir: join(dir, "state") });
  }
  const measured: Measured[] = [];
  try {
    for (const operation of ["up", "refresh", "destroy"] as const) {
      // A full budget at the start of each operation, as after any pause between runs.
      await delay(1500);
      await logSettled(log);
      log.requests = 0;
      log.refused = 0;
      const started = performance.now();
      let outcome: string;
      try {
        const result = await engine[operation]();
        outcome = didWhat(operation, result.counts, result.steps.length);
      } catch (error) {
        const partial = (error as { result?: { counts: Record<string, number>; steps: unknown[] } }).result;
        outcome = `FAILED after ${didWhat(operation, partial?.counts, partial?.steps.length)}: ${briefly(error)}`;
      }
      const seconds = (performance.now() - started) / 1000;
      await logSettled(log);
      measured.push({
        engine: engineName,
        providerRate,
        operation,
        seconds,
        spanSeconds: (log.lastLineAt - log.firstLineAt) / 1000,
        outcome,
        requests: log.requests,
        refused: log.refused,
      });
    }
    // What a failed destroy left: gone before the next run (not measured), so that each run starts from nothing.
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        await engine.destroy();
        break;
      } catch {
        await delay(2000);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return measured;
}

const lookup = findPulumiCli();
const engines: EngineName[] = lookup.found ? ["LocalEngine", "real CLI"] : ["LocalEngine"];
const section = new Section();
const dir = mkdtempSync(join(tmpdir(), "gms-bench-rate-"));
const { url, child, log } = await startEmulator(dir);
try {
  section.print(
    `${N} Apps against the emulator limiting its key to ${RATE} requests/s (its own process, --faults rate=${RATE}/s); ` +
      `engines at their default parallelism; the floor at the limit is ${(N / RATE).toFixed(0)} s per operation` +
      (lookup.found ? ` (real CLI ${lookup.cli.version})` : `; real CLI skipped: ${lookup.reason}`),
  );
  const rows: Measured[] = [];
  for (const engine of engines) {
    for (const providerRate of [RATE, undefined]) {
      const runs = await measureRuns(engine, url, log, providerRate);
      rows.push(...runs);
      const setting = providerRate === undefined ? "no setting (adaptive)" : `gms:maxRequestsPerSecond=${providerRate}`;
      for (const run of runs) {
        section.print(
          `  ${engine.padEnd(11)} ${setting.padEnd(26)} ${run.operation.padEnd(7)} ${run.seconds.toFixed(1).padStart(6)} s  ` +
            `requests over ${run.spanSeconds.toFixed(1).padStart(5)} s (${(run.spanSeconds / (N / RATE)).toFixed(2)}x the floor)  ` +
            `${String(run.requests).padStart(4)} requests, ${String(run.refused).padStart(4)} answered 429  ${run.outcome}`,
        );
      }
    }
  }
  section.text(
    `\`up\`, \`refresh\` and \`destroy\` of ${N} Apps against the emulator limiting its key to ${RATE} requests a second ` +
      `(\`--faults rate=${RATE}/s\`: a budget of ${Math.max(1, Math.ceil(RATE))} refilling at ${RATE}/s, 429 with a true \`Retry-After\` past it), on ` +
      `LocalEngine${lookup.found ? " and the real Pulumi CLI" : ""} at their default parallelism, with the provider held to the same rate ` +
      `(\`gms:maxRequestsPerSecond\`) and with no setting, where the provider's adaptive pacing (src/client/pacer.ts) learns ` +
      `the rate from the refusals and spreads the requests that waited out a \`Retry-After\`. Requests and 429s are counted from ` +
      `the emulator's request log, and the span of an operation's requests is its first logged request to its last. The floor at ` +
      `the limit is ${(N / RATE).toFixed(0)} s per operation; the goal without a setting is a span within 1.25x of it and at most ` +
      `25 refusals.`,
  );
  section.table(
    ["engine", "provider's rate", "operation", "wall time", "requests' span", "span / floor", "requests", "answered 429", "outcome"],
    rows.map((row) => [
      row.engine,
      row.providerRate === undefined ? "none (adaptive)" : `${row.providerRate}/s`,
      row.operation,
      tableMs(row.seconds),
      tableMs(row.spanSeconds),
      `${(row.spanSeconds / (N / RATE)).toFixed(2)}x`,
      String(row.requests),
      String(row.refused),
      row.outcome,
    ]),
  );
  section.write();
} finally {
  child.kill();
  rmSync(dir, { recursive: true, force: true });
}
