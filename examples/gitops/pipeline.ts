/**
 * GitOps for a gms workspace with the Pulumi Automation API: the three jobs a pipeline runs over the
 * quickstart program, each a function here and a command of this script.
 *
 *   node pipeline.ts preview    on a pull request: the plan, nothing changes
 *   node pipeline.ts up         on merge to main: apply the program
 *   node pipeline.ts refresh    on a schedule: read the service into the state, then report what `up`
 *                               would change back (drift); --fail-on-drift exits 3 when there is some
 *   node pipeline.ts destroy    tear the stack down (review environments, tests)
 *
 * The state lives in a local file backend (PULUMI_BACKEND_URL, default file://<this folder>/.pulumi-state),
 * encrypted with PULUMI_CONFIG_PASSPHRASE; in a real pipeline point PULUMI_BACKEND_URL at a bucket
 * (s3://, gs://, azblob://) the same way. Stack config comes from the environment on every run, so the
 * pipeline's secret store stays the source of truth:
 *   GMS_BASE_URL, GMS_API_KEY      the workspace (gms:baseUrl, secret gms:apiKey)
 *   OPENAI_API_KEY                 the provider key (secret openaiKey); rotating it replaces the connection
 *   GMS_APP_DESCRIPTION            optional appDescription
 *   GMS_STACK (default dev), GMS_PROGRAM_DIR (default ../quickstart, installed with `npm install --install-links`)
 *
 * The program runs as an Automation API inline program: this process imports the program's entry
 * (`main` of its Pulumi.yaml, else index.ts) and the CLI connects to the language server the SDK starts
 * here, so a pipeline needs only the `pulumi` CLI, not the `pulumi-language-nodejs` plugin a local program
 * would need. The workspace's folder is still the program's (its Pulumi.yaml names the project, and the
 * dynamic-provider host resolves pulumi-gms from its node_modules), the SDK is the program's own
 * `@pulumi/pulumi`, and while a job runs the working directory is the program's folder, as the language
 * host would make it (the program reads handbook.md relative to it).
 *
 * A run stopped mid-`up` (a runner killed, a timeout) leaves pending creates in the checkpoint and its lock.
 * Before a job that changes the stack (up, refresh, destroy), the pipeline settles them with
 * `pulumi-gms recover --yes` (the program's own pulumi-gms), so that the job makes no duplicate; when recover
 * leaves something to a person (two objects that match one create), the job fails, naming it, and changes nothing.
 *
 * Needs the `pulumi` CLI on PATH (the Automation API drives it) and Node.js 22.18 or later (it runs the
 * program's TypeScript by stripping the types). The last line a job prints is `result: {...}` (JSON) for
 * the pipeline to read.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type * as automation from "@pulumi/pulumi/automation/index.js";
import type { OpMap, OutputMap, Stack } from "@pulumi/pulumi/automation/index.js";

const HERE = dirname(fileURLToPath(import.meta.url));

export interface PipelineOptions {
  /** The Pulumi program (default: ../quickstart). */
  programDir?: string;
  stack?: string;
  /** Default: PULUMI_BACKEND_URL, else file://<this folder>/.pulumi-state. */
  backendUrl?: string;
  /** Default: the process environment (see above). */
  env?: NodeJS.ProcessEnv;
  /** Receives Pulumi's output as it comes (default: stdout). */
  onOutput?: (text: string) => void;
}

export interface JobResult {
  job: "preview" | "up" | "refresh" | "destroy";
  /** Steps by kind, as Pulumi counts them (`same`, `create`, `update`, `replace`, `delete`, ...). */
  changes: OpMap;
  /** up: the stack outputs, secret ones as "[secret]". */
  outputs?: Record<string, unknown>;
  /** refresh: what the next `up` would change to bring the service back to the program. */
  drift?: OpMap;
  /** What `pulumi-gms recover` settled before the job, when a stopped run had left something to settle. */
  recovered?: Record<string, number>;
}

/** Whether the `pulumi` CLI is on PATH; the reason when it is not. */
export function pulumiCli(
  env: NodeJS.ProcessEnv = process.env,
): { available: true; version: string } | { available: false; reason: string } {
  const probe = spawnSync("pulumi", ["version"], { encoding: "utf8", env });
  if (probe.error || probe.status !== 0) {
    return {
      available: false,
      reason: `the pulumi CLI is not on PATH (${probe.error?.message ?? probe.stderr.trim()}); the Automation API drives it`,
    };
  }
  return { available: true, version: probe.stdout.trim() };
}

function setting(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** The program's folder: `programDir`, else GMS_PROGRAM_DIR, else ../quickstart. */
const programFolder = (options: PipelineOptions, env: NodeJS.ProcessEnv) =>
  resolve(options.programDir ?? env.GMS_PROGRAM_DIR ?? join(HERE, "..", "quickstart"));

/**
 * The program's own SDK and its Automation API, so that the engine and the program share one `@pulumi/pulumi`.
 * Not installed, the program cannot run: say how to install it.
 */
function sdkOf(workDir: string): { automation: typeof automation; runtime: { waitForRPCs?: () => Promise<void> } } {
  const fromProgram = createRequire(join(workDir, "package.json"));
  try {
    return { automation: fromProgram("@pulumi/pulumi/automation"), runtime: fromProgram("@pulumi/pulumi").runtime };
  } catch (error) {
    throw new Error(
      `${workDir} has no @pulumi/pulumi installed (${error instanceof Error ? error.message.split("\n")[0] : String(error)}): ` +
        "run `npm install --install-links` there",
    );
  }
}

/** Whether this process has run the program: its module, once imported, cannot register its resources again. */
let programStarted = false;

/**
 * The program's module, run as the Node.js language host would (a default export function's result, else the
 * named exports), failing when anything it started failed. The Automation API's language server tells the
 * engine that an inline program finished once the SDK's requests drain, even when it caught an unhandled
 * rejection meanwhile (an input or a lookup that failed), and the engine then deletes every resource the
 * program did not get to register. So the program waits for those requests itself (the SDK's internal
 * `runtime.waitForRPCs`) and throws the first such failure: the engine sees a failed program and deletes
 * nothing, as with `pulumi-language-nodejs`.
 */
async function runProgram(entry: string, runtime: { waitForRPCs?: () => Promise<void> }): Promise<Record<string, unknown> | undefined> {
  programStarted = true;
  if (typeof runtime.waitForRPCs !== "function")
    throw new Error("This @pulumi/pulumi has no runtime.waitForRPCs, which the pipeline needs");
  const failures: unknown[] = [];
  const record = (error: unknown) => failures.push(error);
  process.on("unhandledRejection", record);
  process.on("uncaughtException", record);
  try {
    const { default: main, ...named } = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
    const outputs = typeof main === "function" ? ((await main()) as Record<string, unknown> | undefined) : named;
    await runtime.waitForRPCs();
    await new Promise((resolve) => setImmediate(resolve));
    if (failures.length > 0) throw failures[0];
    return outputs;
  } finally {
    process.off("unhandledRejection", record);
    process.off("uncaughtException", record);
  }
}

/**
 * Selects (or creates) the stack of the program, as an inline program, on the file backend and writes its
 * config from the environment.
 */
export async function openStack(options: PipelineOptions = {}): Promise<Stack> {
  const env = options.env ?? process.env;
  const backendUrl = options.backendUrl ?? env.PULUMI_BACKEND_URL ?? pathToFileURL(join(HERE, ".pulumi-state")).href;
  if (backendUrl.startsWith("file://")) mkdirSync(fileURLToPath(backendUrl), { recursive: true });
  const workDir = programFolder(options, env);
  if (!existsSync(join(workDir, "Pulumi.yaml")))
    throw new Error(`${workDir} has no Pulumi.yaml: GMS_PROGRAM_DIR must be a Pulumi program's folder`);
  const sdk = sdkOf(workDir);
  const { LocalWorkspace, Stack } = sdk.automation;
  const workspace = await LocalWorkspace.create({
    workDir,
    secretsProvider: "passphrase",
    envVars: {
      PULUMI_BACKEND_URL: backendUrl,
      PULUMI_CONFIG_PASSPHRASE: setting(env, "PULUMI_CONFIG_PASSPHRASE"),
      PULUMI_SKIP_UPDATE_CHECK: "true",
      ...(env.PULUMI_HOME ? { PULUMI_HOME: env.PULUMI_HOME } : {}),
    },
  });
  // The entry is Pulumi.yaml's `main` (default index.ts), as the language host would take it.
  const entry = resolve(workDir, (await workspace.projectSettings()).main ?? "index.ts");
  workspace.program = () => runProgram(entry, sdk.runtime);
  const stack = await Stack.createOrSelect(options.stack ?? env.GMS_STACK ?? "dev", workspace);
  await stack.setAllConfig({
    "gms:baseUrl": { value: setting(env, "GMS_BASE_URL") },
    "gms:apiKey": { value: setting(env, "GMS_API_KEY"), secret: true },
    openaiKey: { value: setting(env, "OPENAI_API_KEY"), secret: true },
  });
  if (env.GMS_APP_DESCRIPTION) await stack.setConfig("appDescription", { value: env.GMS_APP_DESCRIPTION });
  else await stack.removeConfig("appDescription").catch(() => undefined);
  return stack;
}

/** What this pipeline reads of `pulumi-gms recover --json`'s report. */
interface RecoveryReport {
  blockers: string[];
  pendingCreates: { urn: string; outcome: string; reason: string; candidates: { guid: string }[] }[];
}

/** The `pulumi-gms` command of the program's own pulumi-gms package. */
function pulumiGmsOf(workDir: string): string {
  const manifest = createRequire(join(workDir, "package.json")).resolve("pulumi-gms/package.json");
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: Record<string, string> };
  return join(dirname(manifest), bin["pulumi-gms"]!);
}

/**
 * `pulumi-gms recover --stack <stack> --yes --json` in the program's folder, with the stack's backend and
 * passphrase: it settles the pending creates and the lock a stopped run left (see its --help). Its progress
 * lines go to the job's output; what it settled comes back; when it leaves something to a person, the job
 * fails with its words.
 */
async function recover(stack: Stack, options: PipelineOptions): Promise<Record<string, number>> {
  const workDir = stack.workspace.workDir;
  const print = printer(options);
  print(`pipeline: stack ${stack.name} was left by a run that stopped midway: pulumi-gms recover settles it first\n`);
  const child = spawn(process.execPath, [pulumiGmsOf(workDir), "recover", "--stack", stack.name, "--yes", "--json"], {
    cwd: workDir,
    env: { ...(options.env ?? process.env), ...stack.workspace.envVars },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let report = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (report += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => print(chunk));
  const code = await new Promise<number | null>((done) => child.on("close", done));
  let parsed: RecoveryReport | undefined;
  try {
    parsed = JSON.parse(report) as RecoveryReport;
  } catch {
    // No report: recover failed before it had one, and said why on its standard error (above).
  }
  if (code !== 0 || !parsed) {
    const left = (parsed?.pendingCreates ?? [])
      .filter((plan) => plan.outcome === "ambiguous" || plan.outcome === "unsettled")
      .map((plan) => `\n  ${plan.urn}: ${plan.reason} (${plan.candidates.map((each) => each.guid).join(", ") || "no candidate"})`);
    const why = parsed?.blockers.map((blocker) => `\n  ${blocker}`).join("") ?? " (what it said is above)";
    throw new Error(
      `pulumi-gms recover could not settle stack ${stack.name} (exit ${code}):${why}${left.join("")}\n` +
        `Settle it with \`npx pulumi-gms recover --stack ${stack.name}\` in ${workDir} (it says how), then run this job again`,
    );
  }
  const counts: Record<string, number> = {};
  for (const { outcome } of parsed.pendingCreates) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
}

const hasPendingOperations = async (stack: Stack): Promise<boolean> =>
  ((await stack.exportStack()).deployment?.pending_operations ?? []).length > 0;

/**
 * Runs `job` on the program's stack with the working directory set to the program's folder, where the
 * program expects to run (relative paths such as its FileAsset), and restores it afterwards. A job that
 * `changes` the stack first has recover settle what a stopped run left: its pending operations, found in the
 * checkpoint; or its lock alone (a run stopped before its first step), which the CLI reports as a concurrent
 * update before the program runs, so the job is tried once more after recover released it.
 */
async function withStack<T extends JobResult>(options: PipelineOptions, changes: boolean, job: (stack: Stack) => Promise<T>): Promise<T> {
  const stack = await openStack(options);
  const previous = process.cwd();
  process.chdir(stack.workspace.workDir);
  try {
    if (!changes) return await job(stack);
    const recovered = (await hasPendingOperations(stack)) ? await recover(stack, options) : undefined;
    try {
      return { ...(await job(stack)), ...(recovered ? { recovered } : {}) };
    } catch (error) {
      if ((error as Error).name !== "ConcurrentUpdateError" || programStarted || recovered) throw error;
      const released = await recover(stack, options);
      return { ...(await job(stack)), recovered: released };
    }
  } finally {
    process.chdir(previous);
  }
}

const printer = (options: PipelineOptions) => options.onOutput ?? ((text: string) => process.stdout.write(text));

/** Pull request: what merging would do. Changes nothing. */
export function preview(options: PipelineOptions = {}): Promise<JobResult> {
  return withStack(options, false, async (stack) => {
    const result = await stack.preview({ onOutput: printer(options), diff: false });
    return { job: "preview", changes: result.changeSummary };
  });
}

/** Merge to main: apply the program. */
export function up(options: PipelineOptions = {}): Promise<JobResult> {
  return withStack(options, true, async (stack) => {
    const result = await stack.up({ onOutput: printer(options) });
    return { job: "up", changes: result.summary.resourceChanges ?? {}, outputs: plainOutputs(result.outputs) };
  });
}

/**
 * Schedule: read every resource from the service into the state (what changed outside Pulumi shows
 * as `update` in the refresh), then preview: what `up` would change back is the drift.
 */
export function refresh(options: PipelineOptions = {}): Promise<JobResult> {
  return withStack(options, true, async (stack) => {
    const refreshed = await stack.refresh({ onOutput: printer(options) });
    const drift = await stack.preview({ onOutput: printer(options), diff: false });
    return { job: "refresh", changes: refreshed.summary.resourceChanges ?? {}, drift: withoutSame(drift.changeSummary) };
  });
}

export function destroy(options: PipelineOptions = {}): Promise<JobResult> {
  return withStack(options, true, async (stack) => {
    const result = await stack.destroy({ onOutput: printer(options) });
    return { job: "destroy", changes: result.summary.resourceChanges ?? {} };
  });
}

const withoutSame = (changes: OpMap): OpMap =>
  Object.fromEntries(Object.entries(changes).filter(([op, count]) => op !== "same" && (count ?? 0) > 0));

const plainOutputs = (outputs: OutputMap) =>
  Object.fromEntries(Object.entries(outputs).map(([name, output]) => [name, output.secret ? "[secret]" : output.value]));

const JOBS = { preview, up, refresh, destroy };
const USAGE = "usage: node pipeline.ts preview | up | refresh [--fail-on-drift] | destroy";

async function main(argv: string[]): Promise<number> {
  const job = argv[0];
  if (job === undefined || !Object.hasOwn(JOBS, job)) {
    process.stdout.write(`${USAGE}\n`);
    return job === "--help" || job === "-h" ? 0 : 2;
  }
  const cli = pulumiCli();
  if (!cli.available) {
    process.stderr.write(`pipeline: ${cli.reason}. Install it: https://www.pulumi.com/docs/iac/download-install/\n`);
    return 1;
  }
  const result = await JOBS[job as keyof typeof JOBS]();
  process.stdout.write(`result: ${JSON.stringify(result)}\n`);
  const drifted = Object.keys(result.drift ?? {}).length > 0;
  if (drifted)
    process.stdout.write(
      `pipeline: drift: up would ${Object.entries(result.drift!)
        .map(([op, count]) => `${op} ${count}`)
        .join(", ")}\n`,
    );
  return drifted && argv.includes("--fail-on-drift") ? 3 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      process.stderr.write(`pipeline: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
