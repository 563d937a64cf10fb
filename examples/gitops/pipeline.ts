/**
 * GitOps for a gms workspace with the Pulumi Automation API: the jobs a pipeline runs, each a function here and a
 * command of this script. A job acts on one stack: the stack list's entry `--entry NAME` (gms-stacks.yaml, given by
 * --stacks or GMS_STACKS_FILE; stacks.ts), else GMS_STACK of the program in GMS_PROGRAM_DIR (default ../quickstart).
 *
 *   node pipeline.ts stacks     which stacks a job covers, by level (the merge applies level 0, then level 1, ...):
 *                               --changed-since REF (a pull request: the stacks its files touch and their dependents),
 *                               --reviewed-plans DIR (a merge: the stacks the pull request planned), --all (the drift
 *                               check). --github-output writes them as the step's outputs (level0, level1, ...)
 *   node pipeline.ts preview    on a pull request: the plan, nothing changes. It reads the service first (a preview
 *                               with refresh) and writes plan.json and plan.md (plan.ts) into --report-dir, else
 *                               GMS_PLAN_REPORT_DIR, else the current folder. A stack that reads, by StackReference, a
 *                               stack whose plan in --reviewed-plans DIR changes its outputs holds what it reads of it as
 *                               unknown ([known after up]), as Pulumi's plans hold a value made during up
 *   node pipeline.ts comment    the pull request's one comment (comment.ts) from every plan.json under --plans DIR
 *   node pipeline.ts up         on merge to main: apply the program. With --plan-file plan.json (the reviewed plan)
 *                               it first makes a fresh plan the same way and compares: any difference (another step,
 *                               another field, a secret that is not the reviewed one) changes nothing, writes
 *                               plan-diff.md beside the plan file and exits 5; else it applies with the engine held to
 *                               the reviewed plan (Pulumi's update plans), or, where the reviewed plan read a stack the
 *                               review changed or held values as [known after up] that are known now, to the fresh plan
 *                               it has just checked against it. Without it, it applies what the
 *                               program and the workspace say now, and says so
 *   node pipeline.ts refresh    on a schedule: read the service into the state, then report what `up`
 *                               would change back (drift); --fail-on-drift exits 3 when there is some. It
 *                               writes drift.json and drift.md (drift.ts) into --report-dir, else
 *                               GMS_DRIFT_REPORT_DIR, else the current folder
 *   node pipeline.ts destroy    tear the stack down (review environments, tests)
 *
 * The state lives where PULUMI_BACKEND_URL says: a bucket shared by every runner (s3://, gs://, azblob://), Pulumi
 * Cloud (https://api.pulumi.com, with PULUMI_ACCESS_TOKEN), or by default a local folder
 * (file://<this folder>/.pulumi-state). Secrets are encrypted with GMS_SECRETS_PROVIDER (awskms://..., gcpkms://...),
 * else on Pulumi Cloud by the service, else with the passphrase PULUMI_CONFIG_PASSPHRASE. Every runner reads a stack's
 * secrets settings (its salt, or its key's URL and encrypted data key) from the stack's state in the backend when its
 * checkout holds none, so that a plan made on one runner reads on another. Stack config comes from the environment
 * on every run, so the pipeline's secret store stays the source of truth:
 *   GMS_BASE_URL, GMS_API_KEY      the workspace (gms:baseUrl, secret gms:apiKey)
 *   OPENAI_API_KEY                 the provider key (secret openaiKey); rotating it replaces the connection
 *   GMS_APP_DESCRIPTION            optional appDescription
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
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import type * as pulumiSdk from "@pulumi/pulumi";
import type * as automation from "@pulumi/pulumi/automation/index.js";
import type { OpMap, Stack, StackSettings } from "@pulumi/pulumi/automation/index.js";
import { parse as parseYaml } from "yaml";
import { renderComment } from "./comment.ts";
import { type DiscoverListing, driftFacts, masked, renderDriftJson, renderDriftMarkdown, type StepEvent } from "./drift.ts";
import {
  changesOutputs,
  comparePlans,
  differenceSentence,
  type PlanDifference,
  planCounts,
  planOutputs,
  planSteps,
  type ReviewedPlan,
  renderPlanDiffMarkdown,
  renderPlanMarkdown,
  secretDigests,
} from "./plan.ts";
import {
  changedFilesSince,
  entryOf,
  isNullCommit,
  levelsOf,
  readStackList,
  type StackEntry,
  type StackList,
  StackListError,
  touchedEntries,
} from "./stacks.ts";

const HERE = dirname(fileURLToPath(import.meta.url));

export interface PipelineOptions {
  /** The Pulumi program, without a stack list (default: GMS_PROGRAM_DIR, else ../quickstart). */
  programDir?: string;
  /** The stack, without a stack list (default: GMS_STACK, else dev). */
  stack?: string;
  /** The stack list (default: GMS_STACKS_FILE): the job acts on its entry `entry`. */
  stacksFile?: string;
  entry?: string;
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
  job: "preview" | "up" | "refresh" | "destroy" | "stacks" | "comment";
  /** The entry of the stack list the job acted on. */
  entry?: string;
  /** Steps by kind, as Pulumi counts them (`same`, `create`, `update`, `replace`, `delete`, ...). */
  changes?: OpMap;
  /** up: the stack outputs, secret ones as "[secret]". */
  outputs?: Record<string, unknown>;
  /** refresh: what the next `up` would change to bring the service back to the program. */
  drift?: OpMap;
  /** What `pulumi-gms recover` settled before the job, when a stopped run had left something to settle. */
  recovered?: Record<string, number>;
  /** refresh: the drift report's files (drift.json, drift.md) and its counts (see drift.ts). */
  report?: { json: string; markdown: string; changedFields: number; deleted: number; unmanaged: number | null };
  /** preview: the plan's files (plan.json, plan.md); up: the reviewed plan it kept to, if it was given one. */
  plan?: { json?: string; markdown?: string; reviewed?: string; heldTo?: "reviewed" | "fresh" };
  /** stacks: the entries the job covers, by level, and why each. */
  stacks?: { levels: string[][]; reasons: Record<string, string> };
  /** comment: the comment's file, its size, and the plans it holds. */
  comment?: { file: string; characters: number; plans: number };
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

/** The stack a job acts on: its program's folder and its name, and its entry of the stack list when there is one. */
interface Target {
  workDir: string;
  stack: string;
  list?: StackList;
  entry?: StackEntry;
}

/** The stack list of the options (or GMS_STACKS_FILE), or undefined without one. */
function stackListOf(options: PipelineOptions): StackList | undefined {
  const file = options.stacksFile ?? (options.env ?? process.env).GMS_STACKS_FILE;
  return file ? readStackList(file) : undefined;
}

/** The stack of the options: the stack list's entry, else the program's folder and stack name. */
function targetOf(options: PipelineOptions): Target {
  const env = options.env ?? process.env;
  const list = stackListOf(options);
  if (list) {
    if (options.entry === undefined)
      throw new StackListError(
        `a job on ${list.file} acts on one stack: name it with --entry (one of ${list.entries.map((each) => each.name).join(", ")})`,
      );
    const entry = entryOf(list, options.entry);
    return { workDir: resolve(list.root, entry.dir), stack: entry.stack, list, entry };
  }
  if (options.entry !== undefined)
    throw new StackListError("--entry names an entry of the stack list: give the list with --stacks (or GMS_STACKS_FILE)");
  return {
    workDir: resolve(options.programDir ?? env.GMS_PROGRAM_DIR ?? join(HERE, "..", "quickstart")),
    stack: options.stack ?? env.GMS_STACK ?? "dev",
  };
}

/** How a job names its stack in what it prints: the entry, else the stack. */
const named = (target: Target) => (target.entry ? `${target.entry.name} (stack ${target.stack})` : target.stack);

/** The program's own SDK and its Automation API, so that the engine and the program share one `@pulumi/pulumi`. */
interface ProgramSdk {
  automation: typeof automation;
  pulumi: typeof pulumiSdk;
}

/** The program's own SDK. Not installed, the program cannot run: say how to install it. */
function sdkOf(workDir: string): ProgramSdk {
  const fromProgram = createRequire(join(workDir, "package.json"));
  try {
    return { automation: fromProgram("@pulumi/pulumi/automation"), pulumi: fromProgram("@pulumi/pulumi") };
  } catch (error) {
    throw new Error(
      `${workDir} has no @pulumi/pulumi installed (${error instanceof Error ? error.message.split("\n")[0] : String(error)}): ` +
        "run `npm install --install-links` there",
    );
  }
}

/** The project a program's Pulumi.yaml names. */
function projectOf(workDir: string): string {
  const name = (parseYaml(readFileSync(join(workDir, "Pulumi.yaml"), "utf8")) as { name?: unknown } | null)?.name;
  if (typeof name !== "string" || name === "") throw new Error(`${join(workDir, "Pulumi.yaml")} names no project (name:)`);
  return name;
}

/** A stack this job's program reads by StackReference that the same review changes: what it reads of it is held unknown. */
interface HeldStack {
  entry: string;
  project: string;
  stack: string;
}

/**
 * Whether a StackReference's name (`stack`, `org/stack`, `org/project/stack`) names `held`, from a program of project
 * `project`.
 */
export function referenceNames(name: string, held: Omit<HeldStack, "entry">, project: string): boolean {
  const parts = name.split("/");
  if (parts.at(-1) !== held.stack.slice(held.stack.lastIndexOf("/") + 1)) return false;
  return (parts.length === 3 ? parts[1] : project) === held.project;
}

/** What the program holds unknown, and which of those stacks it did read. */
interface Holding {
  stacks: HeldStack[];
  project: string;
  read: Set<string>;
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
 *
 * A StackReference to a stack of `holding` is read with an unknown id (a stack transformation, the SDK's own hook):
 * the engine skips that read during a preview and every output of the reference is unknown, so each value the program
 * takes from it is one the plan holds as [known after up], as for an output of a resource yet to be made.
 */
async function runProgram(entry: string, sdk: ProgramSdk, holding: Holding): Promise<Record<string, unknown> | undefined> {
  programStarted = true;
  const runtime = sdk.pulumi.runtime as typeof sdk.pulumi.runtime & { waitForRPCs?: () => Promise<void> };
  if (typeof runtime.waitForRPCs !== "function")
    throw new Error("This @pulumi/pulumi has no runtime.waitForRPCs, which the pipeline needs");
  if (holding.stacks.length > 0)
    runtime.registerStackTransformation((args) => {
      const name = (args.props as { name?: unknown }).name;
      if (args.type !== "pulumi:pulumi:StackReference" || typeof name !== "string") return undefined;
      const held = holding.stacks.find((each) => referenceNames(name, each, holding.project));
      if (!held) return undefined;
      holding.read.add(held.entry);
      const unknownId = sdk.pulumi.output(sdk.pulumi.unknown) as unknown as pulumiSdk.Input<pulumiSdk.ID>;
      return { props: args.props, opts: { ...args.opts, id: unknownId } };
    });
  const failures: unknown[] = [];
  const record = (error: unknown) => failures.push(error);
  process.on("unhandledRejection", record);
  process.on("uncaughtException", record);
  try {
    const { default: main, ...exported } = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
    const outputs = typeof main === "function" ? ((await main()) as Record<string, unknown> | undefined) : exported;
    await runtime.waitForRPCs();
    await new Promise((resolve) => setImmediate(resolve));
    if (failures.length > 0) throw failures[0];
    return outputs;
  } finally {
    process.off("unhandledRejection", record);
    process.off("uncaughtException", record);
  }
}

/** The settings of a stack's settings file that say how it encrypts its secrets. */
type SecretsSettings = Pick<StackSettings, "secretsProvider" | "encryptedKey" | "encryptionSalt">;

/** The secrets settings a checkpoint's `secrets_providers` record says; none for Pulumi Cloud's own (`service`). */
export function secretsSettingsOfState(record: unknown): SecretsSettings | undefined {
  const { type, state } = (record ?? {}) as { type?: string; state?: { salt?: unknown; url?: unknown; encryptedkey?: unknown } };
  if (type === "passphrase" && typeof state?.salt === "string") return { encryptionSalt: state.salt };
  if (type === "cloud" && typeof state?.url === "string" && typeof state.encryptedkey === "string")
    return { secretsProvider: state.url, encryptedKey: state.encryptedkey };
  return undefined;
}

/** How the stack encrypts its secrets, with a digest of its settings: what a plan records (see plan.ts). */
export function describeSecretsSettings(settings: SecretsSettings): string {
  const kind = settings.secretsProvider?.split("?")[0] ?? (settings.encryptionSalt ? "passphrase" : "service");
  const material = settings.encryptedKey ?? settings.encryptionSalt;
  return material ? `${kind} (settings sha256:${createHash("sha256").update(material).digest("hex").slice(0, 12)})` : kind;
}

const settingsOf = (stack: Stack): Promise<StackSettings> => stack.workspace.stackSettings(stack.name).catch(() => ({}));

/**
 * A stack's secrets settings, in its checkout: the settings file's when it has them (committed), else those its state
 * in the backend records, written into the settings file before anything encrypts with them. Without this, each
 * runner's checkout would make its own salt (or data key), and what one runner encrypted (the reviewed engine plan)
 * another could not read.
 */
async function adoptSecretsSettings(stack: Stack, target: Target, print: (text: string) => void): Promise<void> {
  const settings = await settingsOf(stack);
  if (settings.secretsProvider || settings.encryptedKey || settings.encryptionSalt) return;
  const found = secretsSettingsOfState((await stack.exportStack()).deployment?.secrets_providers);
  if (!found) return;
  await stack.workspace.saveStackSettings(stack.name, { ...settings, ...found });
  print(`pipeline: ${named(target)}: its secrets settings (${describeSecretsSettings(found)}) read from its state in the backend\n`);
}

/**
 * Selects (or creates) the stack of the program, as an inline program, and writes its config from the environment.
 * `holding`: the stacks its StackReferences read as unknown (a review's dependent stack).
 */
export async function openStack(options: PipelineOptions = {}, holding: HeldStack[] = []): Promise<{ stack: Stack; read: Set<string> }> {
  const env = options.env ?? process.env;
  const target = targetOf(options);
  const backendUrl = options.backendUrl ?? env.PULUMI_BACKEND_URL ?? pathToFileURL(join(HERE, ".pulumi-state")).href;
  if (backendUrl.startsWith("file://")) mkdirSync(fileURLToPath(backendUrl), { recursive: true });
  const { workDir } = target;
  if (!existsSync(join(workDir, "Pulumi.yaml")))
    throw new Error(`${workDir} has no Pulumi.yaml: GMS_PROGRAM_DIR must be a Pulumi program's folder`);
  if (target.entry?.configGiven && target.list) {
    // The entry's settings file is elsewhere: the Automation API reads Pulumi.<stack>.yaml of the program's folder.
    const from = resolve(target.list.root, target.entry.config);
    const to = join(workDir, `Pulumi.${target.stack.slice(target.stack.lastIndexOf("/") + 1)}.yaml`);
    if (existsSync(from) && from !== to) copyFileSync(from, to);
  }
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
  const holdingNow: Holding = { stacks: holding, project: projectOf(workDir), read: new Set() };
  workspace.program = () => runProgram(entry, sdk, holdingNow);
  const name = target.stack;
  // Two runners' first jobs may both find no stack and both create it. The second's creation fails (the name is taken,
  // or the other's lock went away while the CLI read it): a moment later it selects the stack the other made.
  const stack = await Stack.select(name, workspace).catch(() =>
    Stack.create(name, workspace).catch(async (error: unknown) => {
      await sleep(pauseMs(1));
      return Stack.select(name, workspace).catch(() => Promise.reject(error));
    }),
  );
  await adoptSecretsSettings(stack, target, printer(options));
  await stack.setAllConfig({
    "gms:baseUrl": { value: setting(env, "GMS_BASE_URL") },
    ...Object.fromEntries(Object.entries(SECRET_CONFIG).map(([key, name]) => [key, { value: setting(env, name), secret: true }])),
  });
  if (env.GMS_APP_DESCRIPTION) await stack.setConfig("appDescription", { value: env.GMS_APP_DESCRIPTION });
  else await stack.removeConfig("appDescription").catch(() => undefined);
  return { stack, read: holdingNow.read };
}

/**
 * How a new stack's secrets are encrypted: GMS_SECRETS_PROVIDER (`awskms://...`, `passphrase`, ...), else the
 * service's own on Pulumi Cloud (undefined), else the passphrase (PULUMI_CONFIG_PASSPHRASE, required then).
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
  /** The locked stack's name (not `stack`, which is the error's trace). */
  readonly stackName: string;
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
    this.stackName = stack;
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

/** What a job's work gets: the stack, opened, and the held stacks its program did read. */
interface Opened {
  stack: Stack;
  target: Target;
  read: Set<string>;
}

/**
 * Runs `job` on the stack with the working directory set to the program's folder, where the program expects to run
 * (relative paths such as its FileAsset), and restores it afterwards. A job that `changes` the stack first has recover
 * settle what a stopped run left in the checkpoint (pending operations). When another run holds the stack's lock, the
 * job waits (see the top of this file); when that run is known to be gone (each holder a process of this machine that
 * is no more, or GMS_ONE_JOB_PER_STACK), recover releases its lock once and the job goes on. A job whose program ran
 * already cannot be tried again in this process: it is refused.
 */
async function withStack<T extends JobResult>(
  options: PipelineOptions,
  changes: boolean,
  job: (opened: Opened) => Promise<T>,
  holding: HeldStack[] = [],
): Promise<T> {
  const env = options.env ?? process.env;
  const target = targetOf(options);
  const { workDir, stack: name } = target;
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
  const withEntry = (result: T): T => ({ ...(target.entry ? { entry: target.entry.name } : {}), ...result });
  let released = false;
  try {
    for (let attempt = 1; ; attempt++) {
      let stack: Stack | undefined;
      try {
        const opened = await openStack(options, holding);
        stack = opened.stack;
        process.chdir(stack.workspace.workDir);
        if (!changes) return withEntry(await job({ stack, target, read: opened.read }));
        if (await hasPendingOperations(stack)) add(await recover(stack, options, oneJobPerStack));
        return withEntry({ ...(await job({ stack, target, read: opened.read })), ...(recovered ? { recovered } : {}) });
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
 * A plan of the stack as it is now: a preview that reads the service first (refresh), its steps and outputs from the
 * engine's events, the engine's own update plan, the secrets' digests and what it was made from.
 */
async function makePlan({ stack, target, read }: Opened, options: PipelineOptions): Promise<{ plan: ReviewedPlan; changes: OpMap }> {
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
    const outputs = planOutputs(events, jobSecrets(env));
    const plan: ReviewedPlan = {
      format: 1,
      provenance: {
        stack: stack.name,
        ...(target.entry ? { entry: target.entry.name } : {}),
        commit: commitOf(env, stack.workspace.workDir),
        state: {
          version: last?.version ?? null,
          updatedAt: last?.endTime ? new Date(last.endTime).toISOString() : null,
          digest: `sha256:${createHash("sha256").update(JSON.stringify(deployment)).digest("hex").slice(0, 16)}`,
        },
        madeAt: new Date().toISOString(),
        secretsProvider: describeSecretsSettings(await settingsOf(stack)),
        ...(read.size > 0 ? { heldUnknown: [...read].sort() } : {}),
      },
      counts: planCounts(steps, result.changeSummary.same ?? 0),
      steps,
      secretDigests: secretDigests(
        Object.fromEntries(Object.entries(SECRET_CONFIG).map(([key, name]) => [key, env[name]])),
        digestKey(env),
      ),
      ...(outputs ? { outputs } : {}),
      engine: JSON.parse(readFileSync(enginePlan, "utf8")),
    };
    return { plan, changes: result.changeSummary };
  });
}

/** Every plan.json under `dir` (the artifacts a job downloaded), each checked to be one of this pipeline's plans. */
export function plansIn(dir: string): ReviewedPlan[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((path) => path === "plan.json" || path.endsWith("/plan.json") || path.endsWith("\\plan.json"))
    .sort()
    .map((path) => readPlanFile(join(dir, path)));
}

/**
 * The stacks of a review whose values this stack's plan must hold unknown: its dependencies whose plan in
 * `reviewedPlans` (the plans this review made so far) changes their outputs.
 */
function heldBy(target: Target, reviewedPlans: string | undefined, print: (text: string) => void): HeldStack[] {
  if (!target.entry || !target.list || target.entry.dependsOn.length === 0 || reviewedPlans === undefined) return [];
  const plans = new Map(plansIn(reviewedPlans).map((plan) => [plan.provenance.entry, plan]));
  return target.entry.dependsOn.flatMap((name) => {
    const plan = plans.get(name);
    if (!plan || !changesOutputs(plan)) {
      print(
        `pipeline: ${target.entry!.name} reads ${name} as it stands: ${plan ? "this review leaves its outputs as they are" : "this review does not plan it"}\n`,
      );
      return [];
    }
    print(`pipeline: ${target.entry!.name} reads ${name}, whose outputs this review changes: what it reads of them is [known after up]\n`);
    const dependency = entryOf(target.list!, name);
    return [{ entry: name, project: projectOf(resolve(target.list!.root, dependency.dir)), stack: dependency.stack }];
  });
}

export interface PreviewOptions extends PipelineOptions {
  /** Where plan.json and plan.md go. Default: GMS_PLAN_REPORT_DIR, else the working directory the job started in. */
  reportDir?: string;
  /** The plans this review has made so far (the earlier levels'): a dependency changed there is read as unknown. */
  reviewedPlans?: string;
}

/** Pull request: what merging would do, as plan.json and plan.md. Changes nothing. */
export function preview(options: PreviewOptions = {}): Promise<JobResult> {
  const env = options.env ?? process.env;
  const reportDir = resolve(options.reportDir ?? env.GMS_PLAN_REPORT_DIR ?? process.cwd());
  const holding = heldBy(targetOf(options), options.reviewedPlans && resolve(options.reviewedPlans), printer(options));
  return withStack(
    options,
    false,
    async (opened) => {
      const { plan, changes } = await makePlan(opened, options);
      mkdirSync(reportDir, { recursive: true });
      const files = {
        json: writeReport(join(reportDir, "plan.json"), `${JSON.stringify(plan, null, 2)}\n`),
        markdown: writeReport(join(reportDir, "plan.md"), renderPlanMarkdown(plan)),
      };
      printer(options)(`pipeline: plan: ${files.markdown}, ${files.json}\n`);
      return { job: "preview", changes, plan: files };
    },
    holding,
  );
}

export interface UpOptions extends PipelineOptions {
  /** The reviewed plan (plan.json of the pull request's preview): the job applies exactly it, or nothing. */
  planFile?: string;
}

/** The merge's fresh plan differs from the reviewed one: nothing was changed; plan-diff.md says how and what to do. */
export class PlanMismatchError extends Error {
  override readonly name = "PlanMismatchError";
  readonly exitCode = 5;
  readonly differences: PlanDifference[];
  readonly report: string;
  constructor(differences: PlanDifference[], report: string) {
    super(
      `the stack differs from the reviewed plan, so this job changed nothing (${report}):\n` +
        `${differences.map((difference) => `  ${differenceSentence(difference)}`).join("\n")}\n` +
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
async function freshPlan({ stack, target }: Opened, options: PipelineOptions): Promise<ReviewedPlan> {
  const env = options.env ?? process.env;
  return withScratch("gms-plan-", async (scratch) => {
    const which = target.list && target.entry ? ["--stacks", target.list.file, "--entry", target.entry.name] : [];
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "preview", "--report-dir", scratch, ...which], {
      cwd: HERE,
      env: {
        ...env,
        ...(target.list ? {} : { GMS_PROGRAM_DIR: target.workDir, GMS_STACK: target.stack }),
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
    return readPlanFile(join(scratch, "plan.json"));
  });
}

/** The plan in `file`, checked to be one of this pipeline's plans. */
function readPlanFile(file: string): ReviewedPlan {
  let plan: ReviewedPlan;
  try {
    plan = JSON.parse(readFileSync(file, "utf8")) as ReviewedPlan;
  } catch (error) {
    throw new Error(`${file}: cannot read it as a plan (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`);
  }
  if (plan?.format !== 1 || !Array.isArray(plan.steps) || plan.engine === undefined)
    throw new Error(`${file}: not a plan of \`node pipeline.ts preview\` (plan.json)`);
  return plan;
}

/** The reviewed plan in `file`, checked to be one of this pipeline's plans for the target's stack. */
function readReviewedPlan(file: string, target: Target): ReviewedPlan {
  let plan: ReviewedPlan;
  try {
    plan = readPlanFile(file);
  } catch (error) {
    throw new Error(`--plan-file ${(error as Error).message}`);
  }
  const { stack, entry } = plan.provenance ?? {};
  if (stack !== target.stack || entry !== target.entry?.name)
    throw new Error(
      `--plan-file ${file}: a plan of ${entry ? `${entry} (stack ${stack})` : `stack ${stack}`}, ` +
        `not of ${target.entry ? named(target) : `stack ${target.stack} (GMS_STACK)`}`,
    );
  return plan;
}

/**
 * Merge to main: apply the program. Given the reviewed plan, only if a fresh plan is the same (a value it held as
 * [known after up] may have any value), and then with the engine held to the reviewed plan while it applies, or to the
 * fresh plan when such a value has turned out (see the top of this file).
 */
export function up(options: UpOptions = {}): Promise<JobResult> {
  const env = options.env ?? process.env;
  const print = printer(options);
  const planFile = options.planFile === undefined ? undefined : resolve(options.planFile);
  return withStack(options, true, async (opened) => {
    const { stack, target } = opened;
    if (planFile === undefined) {
      print("pipeline: no reviewed plan (--plan-file): applying what the program and the workspace say now\n");
      const result = await stack.up({ onOutput: print });
      return { job: "up", changes: result.summary.resourceChanges ?? {}, outputs: await stackOutputs(stack, env) };
    }
    const reviewed = readReviewedPlan(planFile, target);
    const fresh = await freshPlan(opened, options);
    const { differences, allowed } = comparePlans(reviewed, fresh);
    if (differences.length > 0) {
      const report = writeReport(join(dirname(planFile), "plan-diff.md"), renderPlanDiffMarkdown(reviewed, differences));
      throw new PlanMismatchError(differences, report);
    }
    for (const difference of allowed) print(`pipeline: known now: ${differenceSentence(difference)}\n`);
    // The engine's reviewed plan read the stacks this review changed as unknown, and expects every step a value held
    // unknown may have made unneeded (a replacement by the old value): the engine is then held to the fresh plan, which
    // was just checked against the reviewed one. Else to the reviewed plan itself.
    const toFresh = allowed.length > 0 || (reviewed.provenance.heldUnknown ?? []).length > 0;
    const heldTo = toFresh ? fresh : reviewed;
    print(
      toFresh
        ? `pipeline: the stack is within the reviewed plan (${planFile}), its [known after up] values now known: ` +
            "applying the plan made now, the engine held to it\n"
        : `pipeline: the stack is as the reviewed plan (${planFile}) says: applying it, the engine held to it\n`,
    );
    return withScratch("gms-plan-", async (scratch) => {
      const enginePlan = join(scratch, "engine-plan.json");
      writeFileSync(enginePlan, JSON.stringify(heldTo.engine));
      const result = await stack.up({ onOutput: print, refresh: true, plan: enginePlan });
      return {
        job: "up" as const,
        changes: result.summary.resourceChanges ?? {},
        outputs: await stackOutputs(stack, env),
        plan: { reviewed: planFile, heldTo: toFresh ? ("fresh" as const) : ("reviewed" as const) },
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
 * (drift.ts), written as drift.json and drift.md. With a stack list, the objects the list's other stacks manage are
 * not the workspace's unmanaged ones.
 */
export function refresh(options: RefreshOptions = {}): Promise<JobResult> {
  const env = options.env ?? process.env;
  const reportDir = resolve(options.reportDir ?? env.GMS_DRIFT_REPORT_DIR ?? process.cwd());
  return withStack(options, true, async ({ stack, target }) => {
    const checkedAt = new Date().toISOString();
    const refreshEvents: StepEvent[] = [];
    const previewEvents: StepEvent[] = [];
    const refreshed = await stack.refresh({ onOutput: printer(options), onEvent: (event) => refreshEvents.push(event) });
    const drift = await stack.preview({ onOutput: printer(options), diff: false, onEvent: (event) => previewEvents.push(event) });
    const facts = driftFacts({
      stack: target.entry?.name ?? stack.name,
      checkedAt,
      refreshEvents,
      previewEvents,
      discover: await unmanagedObjects(stack, target, options),
      secrets: jobSecrets(env),
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

/** The GUIDs of the gms objects the other stacks of the list manage, each read from its state (`pulumi stack export`). */
async function managedByOthers(stack: Stack, target: Target): Promise<Set<string>> {
  const guids = new Set<string>();
  if (!target.list || !target.entry) return guids;
  const { LocalWorkspace } = sdkOf(target.workDir).automation;
  for (const other of target.list.entries.filter((entry) => entry.name !== target.entry!.name)) {
    const workspace = await LocalWorkspace.create({ workDir: resolve(target.list.root, other.dir), envVars: stack.workspace.envVars });
    // A stack not made yet manages nothing.
    const exported = await workspace.exportStack(other.stack).catch(() => undefined);
    for (const resource of (exported?.deployment?.resources ?? []) as { type: string; id?: string }[])
      if (resource.id && /^(gms:index:|pulumi-nodejs:dynamic\/gms:)/.test(resource.type)) guids.add(resource.id);
  }
  return guids;
}

/**
 * `pulumi-gms discover --stack <stack> --json` in the program's folder: every object of the workspace that the stack
 * does not manage, less those the list's other stacks manage. Its import document goes to a temporary file, not into
 * the program's folder. When it fails, the report says why and the job goes on: the drift of the stack's own objects is
 * known without it.
 */
async function unmanagedObjects(stack: Stack, target: Target, options: PipelineOptions): Promise<DiscoverListing | { error: string }> {
  return withScratch("gms-drift-", async (scratch): Promise<DiscoverListing | { error: string }> => {
    try {
      const args = ["discover", "--stack", stack.name, "--json", "--out", join(scratch, "gms-import.json")];
      const { code, out: listing, err: said } = await pulumiGms(stack, options, args);
      if (code !== 0) return { error: `pulumi-gms discover failed (exit ${code}): ${said.trim().split("\n").at(-1) ?? ""}` };
      const found = JSON.parse(listing) as DiscoverListing;
      const elsewhere = await managedByOthers(stack, target);
      return { ...found, document: { ...found.document, resources: found.document.resources.filter((each) => !elsewhere.has(each.id)) } };
    } catch (error) {
      return { error: `pulumi-gms discover failed: ${error instanceof Error ? error.message : String(error)}` };
    }
  });
}

export function destroy(options: PipelineOptions = {}): Promise<JobResult> {
  return withStack(options, true, async ({ stack }) => {
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

export interface StacksOptions extends PipelineOptions {
  /** A pull request's or a push's base: the stacks the files changed since it touch, and those that depend on them. */
  changedSince?: string;
  /** The plans of a review: the stacks they are of (a merge applies those). */
  reviewedPlans?: string;
  /** Every stack (the drift check). */
  all?: boolean;
  /** The levels the workflow has jobs for: a graph deeper than that is refused, naming the fix. */
  maxLevels?: number;
  /**
   * Also write them as the step's outputs, to the file GITHUB_OUTPUT names: `levels`, `level0`... (up to --max-levels,
   * `[]` for a level without stacks), `all` (every stack, in level order), `any`, and `dirs` (each entry's folder).
   */
  githubOutput?: boolean;
}

/** Which stacks a job covers, by level, and why each. Runs no stack. */
export async function stacks(options: StacksOptions): Promise<JobResult> {
  const env = options.env ?? process.env;
  const print = printer(options);
  const list = stackListOf(options);
  if (!list) throw new StackListError("the stacks job reads the stack list: give it with --stacks gms-stacks.yaml (or GMS_STACKS_FILE)");
  let reasons: Map<string, string>;
  if (options.all) reasons = new Map(list.entries.map((entry) => [entry.name, "every stack"]));
  else if (options.reviewedPlans !== undefined) {
    reasons = new Map();
    for (const plan of plansIn(resolve(options.reviewedPlans))) {
      const name = plan.provenance.entry;
      if (name === undefined)
        throw new StackListError(`a plan in ${options.reviewedPlans} (stack ${plan.provenance.stack}) is of no entry of ${list.file}`);
      reasons.set(entryOf(list, name).name, `reviewed on commit ${plan.provenance.commit ?? "unknown"}`);
    }
  } else if (options.changedSince !== undefined) {
    if (isNullCommit(options.changedSince))
      reasons = new Map(list.entries.map((entry) => [entry.name, `no commit before to compare with`]));
    else {
      const { changed, before } = changedFilesSince(list, options.changedSince);
      print(`pipeline: ${changed.length} files changed since ${options.changedSince}\n`);
      reasons = touchedEntries(list, changed, before);
    }
  } else throw new StackListError("the stacks job needs one of --changed-since REF, --reviewed-plans DIR or --all");
  const levels = levelsOf(list, reasons.keys());
  if (options.maxLevels !== undefined && levels.length > options.maxLevels)
    throw new StackListError(
      `the stacks form ${levels.length} levels (${levels.map((level) => level.join(", ")).join(" → ")}) but the workflow applies ${options.maxLevels}: ` +
        `add a job for level ${options.maxLevels} (a copy of the last level's job that needs it and reads level${options.maxLevels}) ` +
        `and pass --max-levels ${levels.length}`,
    );
  for (const [index, level] of levels.entries())
    for (const name of level) print(`pipeline: level ${index}: ${name} (stack ${entryOf(list, name).stack}): ${reasons.get(name)}\n`);
  if (levels.length === 0) print("pipeline: no stack\n");
  if (options.githubOutput) {
    const file = setting(env, "GITHUB_OUTPUT");
    const count = Math.max(levels.length, options.maxLevels ?? 0);
    const lines = [
      `levels=${JSON.stringify(levels)}`,
      `any=${levels.length > 0}`,
      `all=${JSON.stringify(levels.flat())}`,
      ...Array.from({ length: count }, (_, index) => `level${index}=${JSON.stringify(levels[index] ?? [])}`),
      // Each entry's program folder, relative to the list's: what a matrix job installs.
      `dirs=${JSON.stringify(Object.fromEntries(list.entries.map((entry) => [entry.name, entry.dir])))}`,
    ];
    appendFileSync(file, `${lines.join("\n")}\n`);
  }
  return { job: "stacks", stacks: { levels, reasons: Object.fromEntries(reasons) } };
}

export interface CommentJobOptions extends PipelineOptions {
  /** Where the plans are: every plan.json under it (the review's artifacts). */
  plansDir: string;
  /** The comment's file. Default: comment.md in GMS_PLAN_REPORT_DIR, else in the working directory. */
  out?: string;
  /** Where the full plans are, for the comment's link. Default: the GitHub run's page, from GITHUB_* variables. */
  artifactUrl?: string;
}

/** The pull request's one comment (comment.ts), from the plans a review made, in the stack list's order. */
export async function comment(options: CommentJobOptions): Promise<JobResult> {
  const env = options.env ?? process.env;
  const list = stackListOf(options);
  const order = (plan: ReviewedPlan) => {
    const at = list?.entries.findIndex((entry) => entry.name === plan.provenance.entry) ?? -1;
    return at === -1 ? Number.MAX_SAFE_INTEGER : at;
  };
  const plans = plansIn(resolve(options.plansDir)).sort((a, b) => order(a) - order(b));
  const run =
    env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID
      ? `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`
      : undefined;
  const artifactUrl = options.artifactUrl ?? run;
  const text = renderComment(plans, {
    ...(artifactUrl ? { artifactUrl } : {}),
    empty: "This change touches no stack of the stack list: nothing to plan.",
  });
  const file = resolve(options.out ?? join(env.GMS_PLAN_REPORT_DIR ?? process.cwd(), "comment.md"));
  mkdirSync(dirname(file), { recursive: true });
  writeReport(file, text);
  printer(options)(`pipeline: comment: ${file} (${text.length} characters, ${plans.length} plans)\n`);
  return { job: "comment", comment: { file, characters: text.length, plans: plans.length } };
}

const USAGE = [
  "usage: node pipeline.ts <job> [options]",
  "  stacks  --stacks FILE (--changed-since REF | --reviewed-plans DIR | --all) [--max-levels N] [--github-output]",
  "  preview [--stacks FILE --entry NAME] [--report-dir DIR] [--reviewed-plans DIR]",
  "  comment --plans DIR [--out FILE] [--artifact-url URL] [--stacks FILE]",
  "  up      [--stacks FILE --entry NAME] [--plan-file FILE]",
  "  refresh [--stacks FILE --entry NAME] [--fail-on-drift] [--report-dir DIR]",
  "  destroy [--stacks FILE --entry NAME]",
  "preview writes plan.json and plan.md into --report-dir (default: GMS_PLAN_REPORT_DIR, else the current folder)",
  "up --plan-file applies the reviewed plan (plan.json) or nothing: exit 5, and plan-diff.md beside it, when the stack differs",
  "refresh writes drift.json and drift.md into --report-dir (default: GMS_DRIFT_REPORT_DIR, else the current folder)",
  "Without --stacks (or GMS_STACKS_FILE) a job acts on stack GMS_STACK of the program in GMS_PROGRAM_DIR.",
].join("\n");

const ON_A_STACK = { stacks: { type: "string" }, entry: { type: "string" } } as const;

/** The options each job takes. */
const JOBS = {
  stacks: {
    stacks: { type: "string" },
    "changed-since": { type: "string" },
    "reviewed-plans": { type: "string" },
    all: { type: "boolean" },
    "max-levels": { type: "string" },
    "github-output": { type: "boolean" },
  },
  preview: { "report-dir": { type: "string" }, "reviewed-plans": { type: "string" }, ...ON_A_STACK },
  comment: { plans: { type: "string" }, out: { type: "string" }, "artifact-url": { type: "string" }, stacks: { type: "string" } },
  up: { "plan-file": { type: "string" }, ...ON_A_STACK },
  refresh: { "report-dir": { type: "string" }, "fail-on-drift": { type: "boolean" }, ...ON_A_STACK },
  destroy: { ...ON_A_STACK },
} as const satisfies Record<string, ParseArgsOptionsConfig>;

type Job = keyof typeof JOBS;

class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The job's options, checked by node:util's parseArgs: one it does not take, or a value missing, is a usage error. */
function jobOptions(job: Job, args: string[]): Record<string, string | boolean | undefined> {
  const known = Object.keys(JOBS[job]).map((name) => `--${name}`);
  try {
    const options: ParseArgsOptionsConfig = JOBS[job];
    // No option of a job is `multiple`: each value is a string or a flag.
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const option = /'(--?[^' ]+)/.exec(message)?.[1] ?? "";
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION")
      throw new UsageError(`${job} does not take ${option}${known.length > 0 ? ` (it takes ${known.join(", ")})` : ""}`);
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") throw new UsageError(`${option} needs a value`);
    if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL")
      throw new UsageError(`${job} takes no argument ${/'([^']*)'/.exec(message)?.[1] ?? ""}`);
    throw error;
  }
}

/** A whole number an option gives, or a usage error naming it. */
function count(value: string | boolean | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^[1-9]\d*$/.test(value))
    throw new UsageError(`${option} must be a whole number of at least 1, not ${JSON.stringify(value)}`);
  return Number(value);
}

async function runJob(job: Job, values: Record<string, string | boolean | undefined>): Promise<JobResult> {
  const text = (name: string) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
  const onStack = { ...(text("stacks") ? { stacksFile: text("stacks")! } : {}), ...(text("entry") ? { entry: text("entry")! } : {}) };
  const reportDir = text("report-dir") ? { reportDir: text("report-dir")! } : {};
  switch (job) {
    case "stacks": {
      const chosen = ["changed-since", "reviewed-plans", "all"].filter((name) => values[name] !== undefined);
      if (chosen.length !== 1) throw new UsageError("stacks takes one of --changed-since REF, --reviewed-plans DIR and --all");
      const maxLevels = count(values["max-levels"], "--max-levels");
      return stacks({
        ...onStack,
        ...(text("changed-since") ? { changedSince: text("changed-since")! } : {}),
        ...(text("reviewed-plans") ? { reviewedPlans: text("reviewed-plans")! } : {}),
        ...(values.all ? { all: true } : {}),
        ...(maxLevels ? { maxLevels } : {}),
        ...(values["github-output"] ? { githubOutput: true } : {}),
      });
    }
    case "preview":
      return preview({ ...onStack, ...reportDir, ...(text("reviewed-plans") ? { reviewedPlans: text("reviewed-plans")! } : {}) });
    case "comment": {
      if (!text("plans")) throw new UsageError("comment needs --plans DIR: the folder of the review's plans (plan.json)");
      return comment({
        ...onStack,
        plansDir: text("plans")!,
        ...(text("out") ? { out: text("out")! } : {}),
        ...(text("artifact-url") ? { artifactUrl: text("artifact-url")! } : {}),
      });
    }
    case "up":
      return up({ ...onStack, ...(text("plan-file") ? { planFile: text("plan-file")! } : {}) });
    case "refresh":
      return refresh({ ...onStack, ...reportDir });
    case "destroy":
      return destroy(onStack);
  }
}

/** The jobs that run the CLI (stacks and comment read files only). */
const NEEDS_CLI: Job[] = ["preview", "up", "refresh", "destroy"];

async function main(argv: string[]): Promise<number> {
  const [job, ...args] = argv;
  if (job === undefined || !Object.hasOwn(JOBS, job)) {
    process.stdout.write(`${USAGE}\n`);
    return job === "--help" || job === "-h" ? 0 : 2;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    values = jobOptions(job as Job, args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`pipeline: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  if (NEEDS_CLI.includes(job as Job)) {
    const cli = pulumiCli();
    if (!cli.available) {
      process.stderr.write(`pipeline: ${cli.reason}. Install it: https://www.pulumi.com/docs/iac/download-install/\n`);
      return 1;
    }
  }
  let result: JobResult;
  try {
    result = await runJob(job as Job, values);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`pipeline: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  process.stdout.write(`result: ${JSON.stringify(result)}\n`);
  const drifted = Object.keys(result.drift ?? {}).length > 0;
  if (drifted)
    process.stdout.write(
      `pipeline: drift: up would ${Object.entries(result.drift!)
        .map(([op, count]) => `${op} ${count}`)
        .join(", ")}\n`,
    );
  return drifted && values["fail-on-drift"] ? 3 : 0;
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
