/**
 * What the examples/gitops suites share: the pipeline script run as a pipeline runs it, `node pipeline.ts <job>`,
 * with the CLI's folder first on its PATH (the pipeline runs `pulumi` from PATH; the dynamic-provider launcher is
 * beside it), then this `node` (22.18+ strips types), which the launcher runs the provider host with; a copy of the
 * quickstart with the built package installed, as the pipeline's program; what the service holds of the kinds the
 * quickstart makes; and a runner stopped midway.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync } from "node:fs";
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
    env: {
      ...process.env,
      PATH: [...(cli ? [cli.dir] : []), dirname(process.execPath), process.env.PATH ?? ""].join(delimiter),
      // A preview's plan.json and plan.md, where a test does not say: not the example's own folder.
      GMS_PLAN_REPORT_DIR: join(tmpdir(), `gms-gitops-plans-${process.pid}`),
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
 * Starts `node pipeline.ts up` and, once `midway` holds of the checkpoint `read` gives, stops it as a runner is stopped:
 * SIGKILL to the job and everything it started, at once. `killed` is 0 when the run ended before the moment came.
 */
export async function killedMidway(
  env: NodeJS.ProcessEnv,
  cli: PulumiCli | undefined,
  read: () => Deployment | Promise<Deployment>,
  midway: (deployment: Deployment) => boolean,
): Promise<{ killed: number; stopped: Run }> {
  const { child, run } = startPipeline(["up"], env, cli);
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
