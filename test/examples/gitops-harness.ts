/**
 * What the examples/gitops suites share: the pipeline script run as a pipeline runs it, `node pipeline.ts <job>`,
 * with the CLI's folder first on its PATH (the pipeline runs `pulumi` from PATH; the dynamic-provider launcher is
 * beside it), then this `node` (22.18+ strips types), which the launcher runs the provider host with. Each job runs as
 * a CI runner runs it (`runner`): in a checkout of its own (a copy of the repository's examples, or a clone of a test's
 * git repository, as actions/checkout gives it), with the install step done, and a PULUMI_HOME of its own, sharing
 * nothing with other jobs but the backend and the folders a test hands it as artifacts. Also: what the service holds of
 * the kinds the quickstart makes, and a runner stopped midway.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { installPackageCopy, type PulumiCli } from "../../src/testing";
import { type AnswerGate, answerGate, api, type Deployment, descendants, gmsPendingCreates, gmsResources } from "../recover/harness";

const ROOT = join(__dirname, "..", "..");
export const GITOPS = join(ROOT, "examples", "gitops");
export const QUICKSTART = join(ROOT, "examples", "quickstart");

export interface Run {
  code: number | null;
  output: string;
  /** The report folder the run was given where the test gave none (GMS_PLAN_REPORT_DIR), removed when it ended. */
  reports?: string;
  result?: {
    job: string;
    entry?: string;
    changes: Record<string, number>;
    outputs?: Record<string, unknown>;
    drift?: Record<string, number>;
    recovered?: Record<string, number>;
    plan?: { json?: string; markdown?: string; reviewed?: string; heldTo?: string };
    stacks?: { levels: string[][]; reasons: Record<string, string> };
  };
}

/**
 * Starts `node <gitops>/pipeline.ts <args>` (the repository's own, unless a checkout's) in a process group of its own
 * (`detached`), so that a test can stop it as a runner is stopped; `run` settles when it has exited.
 */
export function startPipeline(
  args: string[],
  env: NodeJS.ProcessEnv,
  cli: PulumiCli | undefined,
  gitops = GITOPS,
): { child: ChildProcess; run: Promise<Run> } {
  // A preview's plan.json and plan.md, where a test does not say: not the example's own folder, and removed at the end.
  const reports = env.GMS_PLAN_REPORT_DIR === undefined ? mkdtempSync(join(tmpdir(), "gms-gitops-plans-")) : undefined;
  const child = spawn(process.execPath, [join(gitops, "pipeline.ts"), ...args], {
    cwd: gitops,
    env: {
      ...process.env,
      PATH: [...(cli ? [cli.dir] : []), dirname(process.execPath), process.env.PATH ?? ""].join(delimiter),
      ...(reports ? { GMS_PLAN_REPORT_DIR: reports } : {}),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const run = new Promise<Run>((done) =>
    child.on("close", (code) => {
      if (reports) rmSync(reports, { recursive: true, force: true });
      const line = output.split("\n").find((text) => text.startsWith("result: "));
      done({ code, output, reports, ...(line ? { result: JSON.parse(line.slice("result: ".length)) } : {}) });
    }),
  );
  return { child, run };
}

/** `node pipeline.ts <args>` of the repository's examples/gitops, to its end: for what needs no checkout (usage, checks). */
export const runPipeline = (args: string[], env: NodeJS.ProcessEnv, cli: PulumiCli | undefined): Promise<Run> =>
  startPipeline(args, env, cli).run;

/** A job's checkout: the repository's examples as actions/checkout gives them, with the install step done. */
export interface Checkout {
  /** The checkout's root. */
  root: string;
  /** Its examples/gitops: the pipeline, the stack list and its programs. */
  gitops: string;
  /** Its examples/quickstart. */
  quickstart: string;
}

/** Where a runner's checkouts come from: the repository's own examples, or a clone of a git repository at a commit. */
export type Source = { repo: string; commit: string } | undefined;

/** What a copy of the repository's examples leaves out: installs, and what a job writes into the folder. */
const NOT_CHECKED_IN = /(^|[\\/])(node_modules|\.pulumi-state|Pulumi\.[^\\/]+\.yaml|(plan|drift|plan-diff|comment)\.(json|md))$/;

/**
 * Lays out a job's checkout in `dir` from `source`, then its install step: each program of `programs` (relative to the
 * checkout's examples/) gets the built package installed as a copy, as `npm install --install-links` leaves it, and the
 * pipeline's folder its dependencies (linked from this repository's node_modules, which no job writes).
 */
export function checkoutIn(dir: string, source: Source, programs: readonly string[]): Checkout {
  const examples = join(dir, "examples");
  if (source) {
    const clone = spawnSync("git", ["clone", "--quiet", "--no-hardlinks", source.repo, dir], { encoding: "utf8" });
    const at = clone.status === 0 ? spawnSync("git", ["-C", dir, "checkout", "--quiet", source.commit], { encoding: "utf8" }) : clone;
    if (clone.status !== 0 || at.status !== 0)
      throw new Error(`git clone of ${source.repo} at ${source.commit}: ${clone.stderr}${at.stderr}`);
  } else
    for (const name of ["gitops", "quickstart"])
      cpSync(join(ROOT, "examples", name), join(examples, name), { recursive: true, filter: (path) => !NOT_CHECKED_IN.test(path) });
  for (const program of programs) installPackageCopy(join(examples, program));
  symlinkSync(join(ROOT, "node_modules"), join(examples, "gitops", "node_modules"), "dir");
  return { root: dir, gitops: join(examples, "gitops"), quickstart: join(examples, "quickstart") };
}

/** A job's run: the pipeline's process, its end, and the checkout it ran in. */
export interface Job {
  child: ChildProcess;
  run: Promise<Run>;
  checkout: Checkout;
}

/**
 * A CI runner, as GitHub gives one: each job on it starts from a fresh checkout and a fresh PULUMI_HOME of its own, and
 * shares nothing with the runner's other jobs but what the test hands it (the backend, an artifact folder).
 */
export interface Runner {
  name: string;
  /** `node pipeline.ts <args>` as a job of this runner, to its end (`env` on top of the runner's). */
  job(args: string[], env?: NodeJS.ProcessEnv, prepare?: (checkout: Checkout) => void): Promise<Run>;
  /** The same, started: for a job to be stopped midway. */
  start(args: string[], env?: NodeJS.ProcessEnv, prepare?: (checkout: Checkout) => void): Job;
}

export interface RunnerOptions {
  /** What each job's environment holds (the backend, the service, the secrets), before what the job adds. */
  env: NodeJS.ProcessEnv;
  cli: PulumiCli | undefined;
  /** Where its checkouts come from (default: the repository's examples). */
  source?: () => Source;
  /** The programs the install step installs, relative to the checkout's examples/ (default: the quickstart). */
  programs?: readonly string[];
  /** What every checkout of this runner gets after its install (a program's native form, say). */
  prepare?: (checkout: Checkout) => void;
  /** Called with every job's end, for a test to look for secrets in its output. */
  onRun?: (run: Run) => void;
}

/**
 * A runner named `name` whose jobs live under `root`/`name`. A job's GMS_PROGRAM_DIR is its checkout's quickstart unless
 * the runner's or the job's environment names another (a stack list names its programs itself).
 */
export function runner(name: string, root: string, options: RunnerOptions): Runner {
  let jobs = 0;
  const start = (args: string[], env: NodeJS.ProcessEnv = {}, prepare?: (checkout: Checkout) => void): Job => {
    const dir = join(root, name, `${String(++jobs).padStart(2, "0")}-${args[0] ?? "job"}`);
    mkdirSync(dir, { recursive: true });
    const checkout = checkoutIn(join(dir, "checkout"), options.source?.(), options.programs ?? ["quickstart"]);
    options.prepare?.(checkout);
    prepare?.(checkout);
    const started = startPipeline(
      args,
      { GMS_PROGRAM_DIR: checkout.quickstart, ...options.env, PULUMI_HOME: join(dir, "pulumi-home"), ...env },
      options.cli,
      checkout.gitops,
    );
    const run = started.run.then((done) => {
      options.onRun?.(done);
      return done;
    });
    return { child: started.child, run, checkout };
  };
  return { name, start, job: (args, env, prepare) => start(args, env, prepare).run };
}

/** The quickstart's resources: nine gms objects (the stack is the tenth resource a plan counts). */
export const DECLARED = 9;

/** The list routes of the kinds the quickstart creates (a Context Source's is under its Context: read separately). */
const LISTS = ["/apps", "/providers", "/models", "/datasets", "/evals", "/experiments", "/skills"];

type Service = { url: string; apiKey: string };
const dataOf = <T>(body: T[] | { data: T[] }): T[] => (Array.isArray(body) ? body : body.data);

/**
 * Every object of the kinds the quickstart makes, Workflows and the Handbook's sources included, counted through the
 * service's API: `<list route> <its guid or name>`, sorted.
 */
export async function quickstartObjects(service: Service, by: "guid" | "name"): Promise<string[]> {
  type Listed = { guid: string; name: string };
  const list = async (path: string) => dataOf(await api<Listed[] | { data: Listed[] }>(service, path));
  const listed = (route: string, objects: Listed[]) => objects.map((object) => `${route} ${object[by]}`);
  const lists = await Promise.all(LISTS.map(async (path) => listed(path, await list(`${path}?limit=100`))));
  const apps = await list("/apps?limit=100");
  const workflows = await Promise.all(apps.map(async (app) => listed("workflows", await list(`/apps/${app.guid}/workflows?limit=100`))));
  const workspace = await api<Listed>(service, "/workspaces/current");
  const contexts = await list(`/workspaces/${workspace.guid}/context`);
  const sources = await Promise.all(
    contexts.map(async (context) => listed("context sources", await list(`/contexts/${context.guid}/context_sources`))),
  );
  return [...lists, ...workflows, ...sources].flat().sort();
}

/** What `after` holds beyond `before`, each as many times as it is there beyond them. */
export function beyond(after: readonly string[], before: readonly string[]): string[] {
  const extra = [...after];
  for (const object of before) {
    const at = extra.indexOf(object);
    if (at !== -1) extra.splice(at, 1);
  }
  return extra;
}

/**
 * A gate (test/recover's `answerGate`) between a quickstart run to be killed and the service at `url`: the answers to
 * the first `recorded` creates pass and later ones are held, so that the kill lands at a moment the test holds. A
 * Context Source's create, and the upload before it, always pass: a pending create of a source made from a file is
 * one recover rightly leaves to a person, since only its upload tells it apart from older sources.
 */
export const quickstartGate = (url: string, recorded: number): Promise<AnswerGate> =>
  answerGate(url, recorded, { passes: (path) => /\/context_sources|\/files\/upload/.test(path) });

/**
 * The moment to kill a run behind `gate`: `recorded` gms resources recorded, a create's answer held, and no Context
 * Source's create under way (its answers pass, so it ends, and the moment then holds until the kill).
 */
export const heldMidway =
  (gate: AnswerGate, recorded: number) =>
  (deployment: Deployment): boolean => {
    const pending = gmsPendingCreates(deployment);
    return (
      gmsResources(deployment).length >= recorded &&
      pending.length > 0 &&
      !pending.some((operation) => operation.resource.type.endsWith(":ContextSource")) &&
      gate.held() > 0
    );
  };

/**
 * Starts `up` as a job of `on` and, once `midway` holds of the checkpoint `read` gives, stops it as a runner is stopped:
 * SIGKILL to the job and everything it started, at once. `killed` is 0 when the run ended before the moment came.
 */
export async function killedMidway(
  on: Runner,
  env: NodeJS.ProcessEnv,
  read: () => Deployment | Promise<Deployment>,
  midway: (deployment: Deployment) => boolean,
): Promise<{ killed: number; stopped: Run }> {
  const { child, run } = on.start(["up"], env);
  let killed = 0;
  let settled = false;
  void run.then(() => (settled = true));
  while (!settled && killed === 0) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (!midway(await read())) continue;
    const tree = [child.pid!, ...descendants(child.pid!).map((found) => found.pid)];
    for (const pid of tree) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Exited already.
      }
    }
    killed = tree.length;
  }
  return { killed, stopped: await run };
}
