/**
 * GitOps for a gms workspace with the Pulumi Automation API: the three jobs a pipeline runs over the
 * quickstart program, each a function here and a command of this script.
 *
 *   node pipeline.ts preview    on a pull request: the plan, nothing changes. It reads the service first (a preview
 *                               with refresh) and writes plan.json and plan.md (plan.ts) into --report-dir, else
 *                               GMS_PLAN_REPORT_DIR, else the current folder: plan.md is the pull request's comment,
 *                               plan.json what the merge keeps to
 *   node pipeline.ts up         on merge to main: apply the program. With --plan-file plan.json (the reviewed plan)
 *                               it first makes a fresh plan the same way and compares: any difference (another step,
 *                               another field, a secret that is not the reviewed one) changes nothing, writes
 *                               plan-diff.md beside the plan file and exits 5; else it applies with the engine held
 *                               to the reviewed plan (Pulumi's update plans). Without it, it applies what the program
 *                               and the workspace say now, and says so
 *   node pipeline.ts refresh    on a schedule: read the service into the state, then report what `up`
 *                               would change back (drift); --fail-on-drift exits 3 when there is some. It
 *                               writes drift.json and drift.md (drift.ts) into --report-dir, else
 *                               GMS_DRIFT_REPORT_DIR, else the current folder
 *   node pipeline.ts destroy    tear the stack down (review environments, tests)
 *
 * The state lives where PULUMI_BACKEND_URL says: a bucket shared by every runner (s3://, gs://, azblob://), Pulumi
 * Cloud (https://api.pulumi.com, with PULUMI_ACCESS_TOKEN), or by default a local folder
 * (file://<this folder>/.pulumi-state). Secrets are encrypted with GMS_SECRETS_PROVIDER (awskms://..., gcpkms://...),
 * else on Pulumi Cloud by the service, else with the passphrase PULUMI_CONFIG_PASSPHRASE. Stack config comes from the
 * environment on every run, so the pipeline's secret store stays the source of truth:
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
 * Two runs on one stack at once (two runners, an `up` meeting a scheduled `refresh`): the backend's lock lets one
 * through; the other changes nothing and waits its turn, trying again every few seconds (with jitter, so that two
 * jobs refused by each other's locks do not meet again) for up to GMS_LOCK_WAIT_SECONDS (default 600), then exits 4,
 * naming the run that holds the lock and what to do. A lock whose every holder is a process of this machine that is
 * gone is a stopped run's, and recover releases it at once. A runner of another machine cannot be checked from here:
 * when the CI system runs one job of the stack at a time (the workflow's concurrency group), set
 * GMS_ONE_JOB_PER_STACK=true and any lock a job meets is a stopped run's, released by recover (`--release-lock`).
 *
 * Needs the `pulumi` CLI on PATH (the Automation API drives it) and Node.js 22.19 or later (it runs the
 * program's TypeScript by stripping the types). The last line a job prints is `result: {...}` (JSON) for
 * the pipeline to read: its stack outputs come from one read of the state, secret ones as "[secret]", and any value
 * holding one of the job's secrets is masked too. An option a job does not take is a usage error (exit 2).
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import type * as automation from "@pulumi/pulumi/automation/index.js";
import type { OpMap, Stack } from "@pulumi/pulumi/automation/index.js";
import { type DiscoverListing, driftFacts, masked, renderDriftJson, renderDriftMarkdown, type StepEvent } from "./drift.ts";
import {
  planCounts,
  planDifferences,
  planSteps,
  type ReviewedPlan,
  renderPlanDiffMarkdown,
  renderPlanMarkdown,
  secretDigests,
} from "./plan.ts";

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

/** The stack's secret config, each from the environment variable that holds it (see the top of this file). */
const SECRET_CONFIG = { "gms:apiKey": "GMS_API_KEY", openaiKey: "OPENAI_API_KEY" } as const;

/** The values no output of a job may show: the secret config and the state's passphrase. */
const jobSecrets = (env: NodeJS.ProcessEnv): string[] =>
  [...Object.values(SECRET_CONFIG).map((name) => env[name]), env.PULUMI_CONFIG_PASSPHRASE].filter((value): value is string => !!value);

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
  /** refresh: the drift report's files (drift.json, drift.md) and its counts (see drift.ts). */
  report?: { json: string; markdown: string; changedFields: number; deleted: number; unmanaged: number | null };
  /** preview: the plan's files (plan.json, plan.md); up: the reviewed plan it kept to, if it was given one. */
  plan?: { json?: string; markdown?: string; reviewed?: string };
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
  const secretsProvider = secretsProviderOf(backendUrl, env);
  const passed = (names: string[]) => Object.fromEntries(names.flatMap((name) => (env[name] ? [[name, env[name]]] : [])));
  const workspace = await LocalWorkspace.create({
    workDir,
    ...(secretsProvider ? { secretsProvider } : {}),
    envVars: {
      PULUMI_BACKEND_URL: backendUrl,
      PULUMI_SKIP_UPDATE_CHECK: "true",
      ...(secretsProvider === "passphrase" ? { PULUMI_CONFIG_PASSPHRASE: setting(env, "PULUMI_CONFIG_PASSPHRASE") } : {}),
      ...passed(["PULUMI_HOME", "PULUMI_ACCESS_TOKEN"]),
    },
  });
  // The entry is Pulumi.yaml's `main` (default index.ts), as the language host would take it.
  const entry = resolve(workDir, (await workspace.projectSettings()).main ?? "index.ts");
  workspace.program = () => runProgram(entry, sdk.runtime);
  const name = options.stack ?? env.GMS_STACK ?? "dev";
  // Two runners' first jobs may both find no stack and both create it. The second's creation fails (the name is taken,
  // or the other's lock went away while the CLI read it): a moment later it selects the stack the other made.
  const stack = await Stack.createOrSelect(name, workspace).catch(async (error: unknown) => {
    await sleep(pauseMs(1));
    return Stack.select(name, workspace).catch(() => Promise.reject(error));
  });
  await stack.setAllConfig({
    "gms:baseUrl": { value: setting(env, "GMS_BASE_URL") },
    ...Object.fromEntries(Object.entries(SECRET_CONFIG).map(([key, name]) => [key, { value: setting(env, name), secret: true }])),
  });
  if (env.GMS_APP_DESCRIPTION) await stack.setConfig("appDescription", { value: env.GMS_APP_DESCRIPTION });
  else await stack.removeConfig("appDescription").catch(() => undefined);
  return stack;
}

/**
 * How the stack's secrets are encrypted: GMS_SECRETS_PROVIDER (`awskms://...`, `passphrase`, ...), else the service's
 * own on Pulumi Cloud (undefined), else the passphrase (PULUMI_CONFIG_PASSPHRASE, required then).
 */
const secretsProviderOf = (backendUrl: string, env: NodeJS.ProcessEnv): string | undefined =>
  env.GMS_SECRETS_PROVIDER || (/^https?:\/\//.test(backendUrl) ? undefined : "passphrase");

/** A run holding the stack's lock, as `pulumi-gms/locks` reads it from the CLI's refusal. */
interface LockHolder {
  lock: string;
  username: string;
  hostname: string;
  pid: number;
  timestamp: string;
  /** `gone`: a process of this machine that is no more; `running`: one that still runs; `elsewhere`: another machine's. */
  status: "gone" | "running" | "elsewhere";
}

/** The holders a refusal of the CLI names, read by the program's own pulumi-gms (`pulumi-gms/locks`). */
function holdersIn(text: string, workDir: string): LockHolder[] {
  const locks = createRequire(join(workDir, "package.json"))("pulumi-gms/locks") as { holdersInRefusal(text: string): LockHolder[] };
  return locks.holdersInRefusal(text);
}

const describeHolder = (holder: LockHolder) => `${holder.username}@${holder.hostname} (pid ${holder.pid}) since ${holder.timestamp}`;

/**
 * The stack is locked by another run (or, on Pulumi Cloud, another update is in progress): the job changed nothing.
 * Its message names the holder and what to do; the command exits with `exitCode`.
 */
export class StackLockedError extends Error {
  override readonly name = "StackLockedError";
  readonly exitCode = 4;
  readonly stack: string;
  readonly holders: LockHolder[];
  constructor(stack: string, holders: LockHolder[], workDir: string, options?: { cause?: unknown }) {
    const by =
      holders.length > 0 ? holders.map((each) => `${describeHolder(each)} (${each.lock})`).join("; ") : "another update, in progress";
    super(
      `stack ${stack} is locked by another run: ${by}. This job changed nothing. Wait for that run to end, then run ` +
        "this job again. If that run is gone (its runner was stopped), run this job again with GMS_ONE_JOB_PER_STACK=true " +
        `when no other job of the stack can be running, or release its lock with \`pulumi cancel --stack ${stack} --yes\` ` +
        `in ${workDir} with this pipeline's PULUMI_BACKEND_URL, then run this job again: it settles what the run left.`,
      options,
    );
    this.stack = stack;
    this.holders = holders;
  }
}

/** What this pipeline reads of `pulumi-gms recover --json`'s report. */
interface RecoveryReport {
  lock: { release: boolean; holders: LockHolder[] };
  /** Another run holds the stack, or changed it while recover looked. */
  underway: boolean;
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
 * `pulumi-gms <args>` in the program's folder with the stack's backend and secrets, to its end: its exit code, its
 * standard output, and its standard error (also handed to `onError` as it comes, when given).
 */
async function pulumiGms(stack: Stack, options: PipelineOptions, args: string[], onError?: (text: string) => void) {
  const workDir = stack.workspace.workDir;
  const child = spawn(process.execPath, [pulumiGmsOf(workDir), ...args], {
    cwd: workDir,
    env: { ...(options.env ?? process.env), ...stack.workspace.envVars },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
    onError?.(chunk);
  });
  const code = await new Promise<number | null>((done) => child.on("close", done));
  return { code, out, err };
}

/**
 * `pulumi-gms recover --stack <stack> --yes --json [--release-lock]` in the program's folder, with the stack's backend
 * and secrets: it settles the pending creates and the lock a stopped run left (see its --help). Its progress lines go
 * to the job's output; what it settled comes back. When another run holds the stack or changed it while recover looked
 * (`underway`), that is a lock (StackLockedError): the job waits for it. When it leaves something to a person, the job
 * fails with its words.
 */
async function recover(stack: Stack, options: PipelineOptions, releaseLock: boolean): Promise<Record<string, number>> {
  const workDir = stack.workspace.workDir;
  const print = printer(options);
  print(
    `pipeline: stack ${stack.name} was left by a run that stopped midway: pulumi-gms recover settles it first` +
      (releaseLock ? " and releases its lock\n" : "\n"),
  );
  const args = ["recover", "--stack", stack.name, "--yes", "--json", ...(releaseLock ? ["--release-lock"] : [])];
  const { code, out: report } = await pulumiGms(stack, options, args, print);
  let parsed: RecoveryReport | undefined;
  try {
    parsed = JSON.parse(report) as RecoveryReport;
  } catch {
    // No report: recover failed before it had one, and said why on its standard error (above).
  }
  if (code !== 0 && parsed?.underway) throw new StackLockedError(stack.name, parsed.lock.holders, workDir);
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

/** The lock a failure is, if it is one: the CLI refused for another run's lock, or recover found a run under way. */
function lockIn(error: unknown, stack: string, workDir: string): StackLockedError | undefined {
  if (error instanceof StackLockedError) return error;
  const message = error instanceof Error ? error.message : "";
  const holders = holdersIn(message, workDir);
  if ((error as Error | undefined)?.name !== "ConcurrentUpdateError" && holders.length === 0) return undefined;
  return new StackLockedError(stack, holders, workDir, { cause: error });
}

/** GMS_LOCK_WAIT_SECONDS (default 600): how long a job waits for another run's lock before it gives up. */
function lockWaitMs(env: NodeJS.ProcessEnv): number {
  const text = env.GMS_LOCK_WAIT_SECONDS ?? "600";
  const seconds = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(seconds))
    throw new Error(`GMS_LOCK_WAIT_SECONDS must be a whole number of seconds (0 to refuse at once), not ${JSON.stringify(text)}`);
  return seconds * 1000;
}

/** The pause before the next try: growing from about 2 s to about 10 s, each a random 50-150% of that. */
const pauseMs = (attempt: number) => Math.round(Math.min(2 * attempt, 10) * 1000 * (0.5 + Math.random()));

/**
 * Runs `job` on the program's stack with the working directory set to the program's folder, where the program
 * expects to run (relative paths such as its FileAsset), and restores it afterwards. A job that `changes` the stack
 * first has recover settle what a stopped run left in the checkpoint (pending operations). When another run holds the
 * stack's lock, the job waits (see the top of this file); when that run is known to be gone (each holder a process of
 * this machine that is no more, or GMS_ONE_JOB_PER_STACK), recover releases its lock once and the job goes on. A job
 * whose program ran already cannot be tried again in this process: it is refused.
 */
async function withStack<T extends JobResult>(options: PipelineOptions, changes: boolean, job: (stack: Stack) => Promise<T>): Promise<T> {
  const env = options.env ?? process.env;
  const name = options.stack ?? env.GMS_STACK ?? "dev";
  const workDir = programFolder(options, env);
  const oneJobPerStack = env.GMS_ONE_JOB_PER_STACK === "true";
  const waitMs = lockWaitMs(env);
  /** When the job stops waiting: GMS_LOCK_WAIT_SECONDS after it first met a lock. */
  let deadline: number | undefined;
  const previous = process.cwd();
  let recovered: Record<string, number> | undefined;
  const add = (more: Record<string, number>) => {
    recovered ??= {};
    for (const [outcome, count] of Object.entries(more)) recovered[outcome] = (recovered[outcome] ?? 0) + count;
  };
  let released = false;
  try {
    for (let attempt = 1; ; attempt++) {
      let stack: Stack | undefined;
      try {
        stack = await openStack(options);
        process.chdir(stack.workspace.workDir);
        if (!changes) return await job(stack);
        if (await hasPendingOperations(stack)) add(await recover(stack, options, oneJobPerStack));
        return { ...(await job(stack)), ...(recovered ? { recovered } : {}) };
      } catch (error) {
        const locked = lockIn(error, name, workDir);
        if (!locked || programStarted) throw locked ?? error;
        const stale = oneJobPerStack || (locked.holders.length > 0 && locked.holders.every((holder) => holder.status === "gone"));
        if (stack && stale && !released) {
          released = true;
          try {
            add(await recover(stack, options, true));
            continue;
          } catch (again) {
            // A run took the stack meanwhile, one still going: waited for below, as any lock.
            if (!(again instanceof StackLockedError)) throw again;
          }
        }
        deadline ??= Date.now() + waitMs;
        const left = deadline - Date.now();
        if (left <= 0) throw locked;
        const pause = Math.min(pauseMs(attempt), left);
        const who = locked.holders.length > 0 ? locked.holders.map(describeHolder).join("; ") : "another run";
        printer(options)(
          `pipeline: stack ${name} is locked by ${who}: waiting ${(pause / 1000).toFixed(1)} s, then trying again ` +
            `(${Math.ceil(left / 1000)} s left of GMS_LOCK_WAIT_SECONDS)\n`,
        );
        await sleep(pause);
      }
    }
  } finally {
    process.chdir(previous);
  }
}

const printer = (options: PipelineOptions) => options.onOutput ?? ((text: string) => process.stdout.write(text));

export interface PreviewOptions extends PipelineOptions {
  /** Where plan.json and plan.md go. Default: GMS_PLAN_REPORT_DIR, else the working directory the job started in. */
  reportDir?: string;
}

/** The key of the secrets' digests in a plan (see plan.ts): GMS_PLAN_DIGEST_KEY, else the passphrase, else the API key. */
const digestKey = (env: NodeJS.ProcessEnv) => env.GMS_PLAN_DIGEST_KEY || env.PULUMI_CONFIG_PASSPHRASE || setting(env, "GMS_API_KEY");

/** The program's commit: GMS_COMMIT, else GITHUB_SHA, else its folder's git HEAD, else null. */
function commitOf(env: NodeJS.ProcessEnv, workDir: string): string | null {
  if (env.GMS_COMMIT || env.GITHUB_SHA) return (env.GMS_COMMIT || env.GITHUB_SHA)!;
  const head = spawnSync("git", ["rev-parse", "HEAD"], { cwd: workDir, encoding: "utf8" });
  return head.status === 0 ? head.stdout.trim() : null;
}

/** Runs `work` with a folder of its own in the temporary directory, removed afterwards whatever happens. */
async function withScratch<T>(prefix: string, work: (scratch: string) => Promise<T>): Promise<T> {
  const scratch = mkdtempSync(join(tmpdir(), prefix));
  try {
    return await work(scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * A plan of the stack as it is now: a preview that reads the service first (refresh), its steps from the engine's
 * events, the engine's own update plan, the secrets' digests and what it was made from.
 */
async function makePlan(stack: Stack, options: PipelineOptions): Promise<{ plan: ReviewedPlan; changes: OpMap }> {
  const env = options.env ?? process.env;
  return withScratch("gms-plan-", async (scratch) => {
    const events: StepEvent[] = [];
    const enginePlan = join(scratch, "engine-plan.json");
    const result = await stack.preview({
      onOutput: printer(options),
      diff: false,
      refresh: true,
      plan: enginePlan,
      onEvent: (event) => events.push(event),
    });
    const [last] = await stack.history(1).catch(() => []);
    const deployment = (await stack.exportStack()).deployment ?? {};
    const steps = planSteps(events, jobSecrets(env));
    const plan: ReviewedPlan = {
      format: 1,
      provenance: {
        stack: stack.name,
        commit: commitOf(env, stack.workspace.workDir),
        state: {
          version: last?.version ?? null,
          updatedAt: last?.endTime ? new Date(last.endTime).toISOString() : null,
          digest: `sha256:${createHash("sha256").update(JSON.stringify(deployment)).digest("hex").slice(0, 16)}`,
        },
        madeAt: new Date().toISOString(),
      },
      counts: planCounts(steps, result.changeSummary.same ?? 0),
      steps,
      secretDigests: secretDigests(
        Object.fromEntries(Object.entries(SECRET_CONFIG).map(([key, name]) => [key, env[name]])),
        digestKey(env),
      ),
      engine: JSON.parse(readFileSync(enginePlan, "utf8")),
    };
    return { plan, changes: result.changeSummary };
  });
}

/** Pull request: what merging would do, as plan.json and plan.md. Changes nothing. */
export function preview(options: PreviewOptions = {}): Promise<JobResult> {
  const env = options.env ?? process.env;
  const reportDir = resolve(options.reportDir ?? env.GMS_PLAN_REPORT_DIR ?? process.cwd());
  return withStack(options, false, async (stack) => {
    const { plan, changes } = await makePlan(stack, options);
    mkdirSync(reportDir, { recursive: true });
    const files = {
      json: writeReport(join(reportDir, "plan.json"), `${JSON.stringify(plan, null, 2)}\n`),
      markdown: writeReport(join(reportDir, "plan.md"), renderPlanMarkdown(plan)),
    };
    printer(options)(`pipeline: plan: ${files.markdown}, ${files.json}\n`);
    return { job: "preview", changes, plan: files };
  });
}

export interface UpOptions extends PipelineOptions {
  /** The reviewed plan (plan.json of the pull request's preview): the job applies exactly it, or nothing. */
  planFile?: string;
}

/** The merge's fresh plan differs from the reviewed one: nothing was changed; plan-diff.md says how and what to do. */
export class PlanMismatchError extends Error {
  override readonly name = "PlanMismatchError";
  readonly exitCode = 5;
  readonly differences: string[];
  readonly report: string;
  constructor(differences: string[], report: string) {
    super(
      `the stack differs from the reviewed plan, so this job changed nothing (${report}):\n${differences.map((line) => `  ${line}`).join("\n")}\n` +
        "Run the preview on the pull request again and review the new plan, then merge again.",
    );
    this.differences = differences;
    this.report = report;
  }
}

/**
 * A plan made now by this script's `preview` job in a process of its own: a process runs the program once (its module
 * cannot register its resources twice), and this one runs it for the `up` that follows.
 */
async function freshPlan(stack: Stack, options: PipelineOptions): Promise<ReviewedPlan> {
  const env = options.env ?? process.env;
  return withScratch("gms-plan-", async (scratch) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "preview", "--report-dir", scratch], {
      cwd: HERE,
      env: {
        ...env,
        GMS_PROGRAM_DIR: stack.workspace.workDir,
        GMS_STACK: stack.name,
        PULUMI_BACKEND_URL: stack.workspace.envVars.PULUMI_BACKEND_URL,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const print = printer(options);
    let said = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => print(chunk.replace(/^result: .*\n?/m, "")));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      said += chunk;
      print(chunk);
    });
    const code = await new Promise<number | null>((done) => child.on("close", done));
    if (code !== 0)
      throw new Error(
        `the fresh preview to check the reviewed plan against failed (exit ${code}): ${said.trim().split("\n").at(-1) ?? ""}`,
      );
    return JSON.parse(readFileSync(join(scratch, "plan.json"), "utf8")) as ReviewedPlan;
  });
}

/** The reviewed plan in `file`, checked to be one of this pipeline's plans for `stack`. */
function readReviewedPlan(file: string, stack: string): ReviewedPlan {
  let plan: ReviewedPlan;
  try {
    plan = JSON.parse(readFileSync(file, "utf8")) as ReviewedPlan;
  } catch (error) {
    throw new Error(
      `--plan-file ${file}: cannot read it as a plan (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`,
    );
  }
  if (plan?.format !== 1 || !Array.isArray(plan.steps) || plan.engine === undefined)
    throw new Error(`--plan-file ${file}: not a plan of \`node pipeline.ts preview\` (plan.json)`);
  if (plan.provenance?.stack !== stack)
    throw new Error(`--plan-file ${file}: a plan of stack ${plan.provenance?.stack}, not of stack ${stack} (GMS_STACK)`);
  return plan;
}

/**
 * Merge to main: apply the program. Given the reviewed plan, only if a fresh plan is the same, and then with the
 * engine held to the reviewed plan while it applies (see the top of this file).
 */
export function up(options: UpOptions = {}): Promise<JobResult> {
  const env = options.env ?? process.env;
  const print = printer(options);
  const planFile = options.planFile === undefined ? undefined : resolve(options.planFile);
  return withStack(options, true, async (stack) => {
    if (planFile === undefined) {
      print("pipeline: no reviewed plan (--plan-file): applying what the program and the workspace say now\n");
      const result = await stack.up({ onOutput: print });
      return { job: "up", changes: result.summary.resourceChanges ?? {}, outputs: await stackOutputs(stack, env) };
    }
    const reviewed = readReviewedPlan(planFile, stack.name);
    const fresh = await freshPlan(stack, options);
    const differences = planDifferences(reviewed, fresh);
    if (differences.length > 0) {
      const report = writeReport(join(dirname(planFile), "plan-diff.md"), renderPlanDiffMarkdown(reviewed, differences));
      throw new PlanMismatchError(differences, report);
    }
    print(`pipeline: the stack is as the reviewed plan (${planFile}) says: applying it, the engine held to it\n`);
    return withScratch("gms-plan-", async (scratch) => {
      const enginePlan = join(scratch, "engine-plan.json");
      writeFileSync(enginePlan, JSON.stringify(reviewed.engine));
      const result = await stack.up({ onOutput: print, refresh: true, plan: enginePlan });
      return {
        job: "up" as const,
        changes: result.summary.resourceChanges ?? {},
        outputs: await stackOutputs(stack, env),
        plan: { reviewed: planFile },
      };
    });
  });
}

export interface RefreshOptions extends PipelineOptions {
  /** Where drift.json and drift.md go. Default: GMS_DRIFT_REPORT_DIR, else the working directory the job started in. */
  reportDir?: string;
}

/**
 * Schedule: read every resource from the service into the state (what changed outside Pulumi shows
 * as `update` in the refresh), then preview: what `up` would change back is the drift. The engine events of
 * both, and `pulumi-gms discover`'s list of the objects the stack does not manage, make the drift report
 * (drift.ts), written as drift.json and drift.md.
 */
export function refresh(options: RefreshOptions = {}): Promise<JobResult> {
  const env = options.env ?? process.env;
  const reportDir = resolve(options.reportDir ?? env.GMS_DRIFT_REPORT_DIR ?? process.cwd());
  return withStack(options, true, async (stack) => {
    const checkedAt = new Date().toISOString();
    const refreshEvents: StepEvent[] = [];
    const previewEvents: StepEvent[] = [];
    const refreshed = await stack.refresh({ onOutput: printer(options), onEvent: (event) => refreshEvents.push(event) });
    const drift = await stack.preview({ onOutput: printer(options), diff: false, onEvent: (event) => previewEvents.push(event) });
    const facts = driftFacts({
      stack: stack.name,
      checkedAt,
      refreshEvents,
      previewEvents,
      discover: await unmanagedObjects(stack, options),
      secrets: [env.GMS_API_KEY, env.OPENAI_API_KEY, env.PULUMI_CONFIG_PASSPHRASE].filter((value): value is string => !!value),
    });
    mkdirSync(reportDir, { recursive: true });
    const report = {
      json: writeReport(join(reportDir, "drift.json"), renderDriftJson(facts)),
      markdown: writeReport(join(reportDir, "drift.md"), renderDriftMarkdown(facts)),
      changedFields: facts.changedFields.length,
      deleted: facts.deleted.length,
      unmanaged: facts.unmanaged?.length ?? null,
    };
    printer(options)(`pipeline: drift report: ${report.markdown}, ${report.json}\n`);
    return { job: "refresh", changes: refreshed.summary.resourceChanges ?? {}, drift: withoutSame(drift.changeSummary), report };
  });
}

/** Written whole or not at all (a rename), so that a reader never meets half a report. */
function writeReport(file: string, text: string): string {
  writeFileSync(`${file}.${process.pid}.tmp`, text);
  renameSync(`${file}.${process.pid}.tmp`, file);
  return file;
}

/**
 * `pulumi-gms discover --stack <stack> --json` in the program's folder: every object of the workspace that the stack
 * does not manage. Its import document goes to a temporary file, not into the program's folder. When it fails, the
 * report says why and the job goes on: the drift of the stack's own objects is known without it.
 */
async function unmanagedObjects(stack: Stack, options: PipelineOptions): Promise<DiscoverListing | { error: string }> {
  return withScratch("gms-drift-", async (scratch): Promise<DiscoverListing | { error: string }> => {
    try {
      const args = ["discover", "--stack", stack.name, "--json", "--out", join(scratch, "gms-import.json")];
      const { code, out: listing, err: said } = await pulumiGms(stack, options, args);
      if (code !== 0) return { error: `pulumi-gms discover failed (exit ${code}): ${said.trim().split("\n").at(-1) ?? ""}` };
      return JSON.parse(listing) as DiscoverListing;
    } catch (error) {
      return { error: `pulumi-gms discover failed: ${error instanceof Error ? error.message : String(error)}` };
    }
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

/**
 * The stack's outputs from one read of the state (`pulumi stack export`), so that which outputs are secret and their
 * values come from the same version of it: a secret one (encrypted in the state) as "[secret]", and any value holding
 * one of the job's secrets masked too.
 */
async function stackOutputs(stack: Stack, env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const resources = ((await stack.exportStack()).deployment?.resources ?? []) as { type: string; outputs?: Record<string, unknown> }[];
  const outputs = resources.find((resource) => resource.type === "pulumi:pulumi:Stack")?.outputs ?? {};
  return masked(outputs, jobSecrets(env)) as Record<string, unknown>;
}

const USAGE =
  "usage: node pipeline.ts preview [--report-dir DIR] | up [--plan-file FILE] | refresh [--fail-on-drift] [--report-dir DIR] | destroy\n" +
  "  preview writes plan.json and plan.md into --report-dir (default: GMS_PLAN_REPORT_DIR, else the current folder)\n" +
  "  up --plan-file applies the reviewed plan (plan.json) or nothing: exit 5, and plan-diff.md beside it, when the stack differs\n" +
  "  refresh writes drift.json and drift.md into --report-dir (default: GMS_DRIFT_REPORT_DIR, else the current folder)";

/** The options each job takes: a flag, or an option with a value. */
const JOB_OPTIONS: Record<string, Record<string, "flag" | "value">> = {
  preview: { "--report-dir": "value" },
  up: { "--plan-file": "value" },
  refresh: { "--report-dir": "value", "--fail-on-drift": "flag" },
  destroy: {},
};

class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The job's options, checked: one it does not take, or a value missing, is a usage error. */
function jobOptions(job: string, args: string[]): Record<string, string | true> {
  const known = JOB_OPTIONS[job]!;
  const options: Record<string, string | true> = {};
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    const kind = Object.hasOwn(known, arg) ? known[arg] : undefined;
    if (kind === undefined)
      throw new UsageError(
        `${job} does not take ${arg}${Object.keys(known).length > 0 ? ` (it takes ${Object.keys(known).join(", ")})` : ""}`,
      );
    if (kind === "flag") options[arg] = true;
    else {
      const value = args[++index];
      if (value === undefined || value.startsWith("--")) throw new UsageError(`${arg} needs a value`);
      options[arg] = value;
    }
  }
  return options;
}

async function runJob(job: string, options: Record<string, string | true>): Promise<JobResult> {
  const reportDir = options["--report-dir"] as string | undefined;
  if (job === "preview") return preview(reportDir ? { reportDir } : {});
  if (job === "up") return up(options["--plan-file"] ? { planFile: options["--plan-file"] as string } : {});
  if (job === "refresh") return refresh(reportDir ? { reportDir } : {});
  return destroy();
}

async function main(argv: string[]): Promise<number> {
  const [job, ...args] = argv;
  if (job === undefined || !Object.hasOwn(JOB_OPTIONS, job)) {
    process.stdout.write(`${USAGE}\n`);
    return job === "--help" || job === "-h" ? 0 : 2;
  }
  let options: Record<string, string | true>;
  try {
    options = jobOptions(job, args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`pipeline: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  const cli = pulumiCli();
  if (!cli.available) {
    process.stderr.write(`pipeline: ${cli.reason}. Install it: https://www.pulumi.com/docs/iac/download-install/\n`);
    return 1;
  }
  const result = await runJob(job, options);
  process.stdout.write(`result: ${JSON.stringify(result)}\n`);
  const drifted = Object.keys(result.drift ?? {}).length > 0;
  if (drifted)
    process.stdout.write(
      `pipeline: drift: up would ${Object.entries(result.drift!)
        .map(([op, count]) => `${op} ${count}`)
        .join(", ")}\n`,
    );
  return drifted && options["--fail-on-drift"] ? 3 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      process.stderr.write(`pipeline: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = error instanceof StackLockedError || error instanceof PlanMismatchError ? error.exitCode : 1;
    },
  );
}
