/**
 * examples/gitops/.github/workflows/gms.yml, the GitHub Actions workflow that calls the pipeline over the stacks of
 * gms-stacks.yaml. What can be checked without GitHub is: that it is the workflow it says (its triggers, one run at a
 * time changing stacks, never a running apply cancelled, a matrix job per level for previews and merges with the
 * levels the stacks job allows, an artifact per stack, a drift job per stack), that every setting it gives is one the
 * pipeline reads; and its pipeline steps, each run by bash as a runner runs it: in a fresh clone of a git repository
 * laid out as this one (actions/checkout with its history), with its install step done, a RUNNER_TEMP and a PULUMI_HOME
 * of its own, the workflow's env with its `${{ ... }}` filled in, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY; the test
 * moves the artifacts between jobs as upload-artifact and download-artifact (or `gh run download`) do. A matrix's jobs
 * run in parallel, two at a time: two runners.
 *
 * Against the emulator and, when `.venv-s3/` holds moto (required under CI=true), the state in an S3 bucket and the
 * secrets under a KMS key of moto's (else a file backend and a passphrase), the example's three stacks (shared, then
 * helpdesk and sales reading it by StackReference) go through four pull requests and a schedule: the first makes every
 * stack (the reviewed plans of new stacks apply in other jobs' checkouts); a change to one App's stack plans and applies that
 * stack only; a change to the shared stack plans it and both App stacks, whose plans hold what they read of it as
 * [known after up], and the merge applies all three, level by level; a drift in one stack fails that stack's drift job
 * alone. That part needs the real `pulumi` CLI: without it, it is skipped with the reason printed (required under CI).
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { callOverHttp } from "../emulator/harness";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { checkoutIn, GITOPS, QUICKSTART, startPipeline } from "./gitops-harness";
import { type S3Backend, s3BackendFor, startS3Backend } from "./s3-backend";

const ROOT = join(__dirname, "..", "..");
const WORKFLOW_FILE = join(GITOPS, ".github", "workflows", "gms.yml");

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  "working-directory"?: string;
  "continue-on-error"?: boolean;
  with?: Record<string, unknown>;
}
interface Job {
  needs?: string | string[];
  if?: string;
  outputs?: Record<string, string>;
  strategy?: { "fail-fast"?: boolean; matrix: { stack: string } };
  steps: Step[];
  "timeout-minutes"?: number;
}
interface Workflow {
  on: Record<string, unknown>;
  concurrency: { group: string; "cancel-in-progress": boolean };
  env: Record<string, string>;
  jobs: Record<string, Job>;
}

const text = readFileSync(WORKFLOW_FILE, "utf8");
const workflow = parse(text) as Workflow;
const { jobs } = workflow;
const stepOf = (job: string, id = "pipeline") => jobs[job]!.steps.find((step) => step.id === id)!;
const named = (job: string, name: string) => jobs[job]!.steps.find((step) => step.name === name)!;

/** What a `${{ ... }}` reads: the event's context, the matrix, the repository's variables and secrets, the env. */
interface Context {
  vars: Record<string, string>;
  secrets: Record<string, string>;
  env: Record<string, string>;
  github: { event_name: string; workspace: string; event: Record<string, unknown> };
  matrix?: { stack: string };
}

/**
 * A value of the workflow's YAML as the runner makes it: each `${{ a || b || 'default' }}` whose parts are paths into
 * the context (`github.event.pull_request.base.sha`, `matrix.stack`, `vars.X`, `secrets.X`, `env.X`). Any other
 * expression is an error, so that the test knows every one it fills in.
 */
function expand(value: string, context: Context): string {
  return value.replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_, expression: string) => {
    for (const part of expression.split("||").map((each) => each.trim())) {
      const literal = /^'([^']*)'$/.exec(part);
      if (literal) return literal[1]!;
      if (!/^[a-z_]+(\.[A-Za-z_][\w-]*)+$/.test(part)) throw new Error(`the test does not evaluate \${{ ${expression} }}`);
      let found: unknown = context;
      for (const key of part.split("."))
        found = found === undefined || found === null ? undefined : (found as Record<string, unknown>)[key];
      if (found !== undefined && found !== null && found !== "") return String(found);
    }
    return "";
  });
}

describe("examples/gitops/.github/workflows/gms.yml", () => {
  it("plans a pull request's stacks and applies a merge's level by level in matrix jobs, checks drift per stack; one run changes stacks at a time", () => {
    expect(Object.keys(workflow.on).sort()).toEqual(["pull_request", "push", "schedule", "workflow_dispatch"]);
    expect(workflow.on.push).toEqual({ branches: ["main"] });
    expect(Object.keys(jobs)).toEqual(["stacks", "preview-0", "preview-1", "comment", "apply-0", "apply-1", "drift"]);
    // The stacks job: which stacks, by level, as its outputs; as many levels as the workflow has jobs for.
    const stacks = stepOf("stacks").run!;
    expect([...stacks.matchAll(/node pipeline\.ts stacks (--[\w-]+)/g)].map(([, how]) => how)).toEqual([
      "--changed-since",
      "--reviewed-plans",
      "--changed-since",
      "--all",
    ]);
    for (const line of stacks.split("\n").filter((each) => each.includes("node pipeline.ts stacks")))
      expect(line).toContain("--max-levels 2 --github-output");
    expect(jobs.stacks!.outputs).toMatchObject({
      level0: "${{ steps.pipeline.outputs.level0 }}",
      level1: "${{ steps.pipeline.outputs.level1 }}",
    });
    expect(named("stacks", "Find the reviewed plans").run).toContain(
      'gh run download "$run" --pattern "gms-plan-${pr}-*" --dir "$reviewed"',
    );
    // A matrix job per level, each level after the one before it: previews on a pull request, applies on a merge.
    for (const [phase, event] of [
      ["preview", "pull_request"],
      ["apply", "push"],
    ] as const) {
      for (const level of [0, 1]) {
        const job = jobs[`${phase}-${level}`]!;
        expect(job.strategy).toEqual({ "fail-fast": false, matrix: { stack: `\${{ fromJSON(needs.stacks.outputs.level${level}) }}` } });
        expect(job.if).toContain(`github.event_name == '${event}' && needs.stacks.outputs.level${level} != '[]'`);
        if (level === 1) expect(job.needs).toEqual(["stacks", `${phase}-0`]);
      }
      expect(jobs[`${phase}-1`]!.steps).toEqual(jobs[`${phase}-0`]!.steps);
    }
    expect(jobs["apply-1"]!.if).toContain("(needs.apply-0.result == 'success' || needs.apply-0.result == 'skipped')");
    // An artifact per stack, named after the pull request and the stack, which the merge's apply job fetches by that name.
    expect(named("preview-0", "Keep the plan").with).toMatchObject({ name: "gms-plan-${{ github.event.number }}-${{ matrix.stack }}" });
    expect(named("preview-0", "The plans of the levels before").with).toMatchObject({ pattern: "gms-plan-${{ github.event.number }}-*" });
    expect(named("apply-0", "Fetch the reviewed plan").run).toBe(
      'gh run download "$RUN" --name "gms-plan-${PR}-${ENTRY}" --dir "${RUNNER_TEMP}/reviewed"',
    );
    expect(stepOf("preview-0").run).toContain('--reviewed-plans "${RUNNER_TEMP}/reviewed"');
    expect(stepOf("apply-0").run).toContain('node pipeline.ts up --entry "$ENTRY" --plan-file "$reviewed/plan.json"');
    // The comment: one, from every plan of the review, found by its first line and updated in place.
    expect(jobs.comment!.needs).toEqual(["stacks", "preview-0", "preview-1"]);
    expect(stepOf("comment").run).toContain('node pipeline.ts comment --plans "${RUNNER_TEMP}/plans"');
    expect(named("comment", "Comment the plan on the pull request").run).toContain("--method PATCH");
    // The drift check: every stack, a job each.
    expect(jobs.drift!.strategy!.matrix.stack).toBe("${{ fromJSON(needs.stacks.outputs.all) }}");
    expect(stepOf("drift").run).toContain('node pipeline.ts refresh --entry "$ENTRY" --fail-on-drift --report-dir "$report"');
    // One group for every run that changes stacks (the lock setting below depends on it), one per pull request for previews.
    expect(workflow.concurrency.group).toContain("format('gms-preview-{0}', github.event.number)");
    expect(workflow.concurrency.group).toContain("'gms-apply'");
    expect(workflow.concurrency["cancel-in-progress"]).toBe(false);
    expect(workflow.env.GMS_ONE_JOB_PER_STACK).toBe("true");
    for (const job of ["stacks", "preview-0", "comment", "apply-0", "drift"])
      expect(stepOf(job)["working-directory"]).toBe("${{ env.GITOPS_DIR }}");
  });

  it("gives only settings the pipeline reads, names folders that exist, and pins every action to a major version", () => {
    const pipeline = readFileSync(join(GITOPS, "pipeline.ts"), "utf8");
    const ours = Object.keys(workflow.env).filter((name) => /^(GMS_|OPENAI_)/.test(name));
    expect(ours.length).toBeGreaterThan(5);
    for (const name of ours) expect(pipeline, `the pipeline reads ${name}`).toContain(name);
    expect(readFileSync(join(ROOT, workflow.env.GITOPS_DIR!, "pipeline.ts"), "utf8")).toBe(pipeline);
    expect(existsSync(join(ROOT, workflow.env.GITOPS_DIR!, workflow.env.GMS_STACKS_FILE!))).toBe(true);
    for (const step of Object.values(jobs)
      .flatMap((job) => job.steps)
      .filter((each) => each.uses))
      expect(step.uses).toMatch(/^[\w-]+\/[\w-]+@v\d+$/);
  });
});

const cli = pulumiCliFor("test/examples/gitops-workflow.test.ts");
const moto = s3BackendFor("test/examples/gitops-workflow.test.ts");
const OPENAI_KEY = "sk-gitops-workflow-0001";
/** The folder of the stack list in the repository, as the workflow's GITOPS_DIR names it. */
const LIST_DIR = "examples/gitops";

describe.skipIf(cli === undefined)(
  `the workflow's pipeline steps, run as runners run them (${cliName(cli)}, ${moto ? "moto" : "a file backend"})`,
  () => {
    let work: string;
    let origin: string;
    let emulator: RunningEmulator;
    let s3: S3Backend | undefined;
    let vars: Record<string, string>;
    let secrets: Record<string, string>;
    /** What every job printed and wrote into its summary, to look for secrets in. */
    const seen: string[] = [];
    /** The artifacts runs uploaded, by name: a folder each. */
    const artifacts = (name = "") => join(work, "artifacts", name);
    let jobs = 0;

    const git = (...args: string[]) => {
      const run = spawnSync("git", args, { cwd: origin, encoding: "utf8" });
      if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
      return run.stdout.trim();
    };
    /** A commit on `branch`, made from main, of what `edit` changes in the origin. */
    const commit = (branch: string, message: string, edit: () => void) => {
      git("checkout", "-q", "-B", branch, "main");
      edit();
      git("add", "-A");
      git("commit", "-q", "-m", message);
      return git("rev-parse", "HEAD");
    };
    const edit = (path: string, change: (text: string) => string) => {
      const file = join(origin, LIST_DIR, path);
      writeFileSync(file, change(readFileSync(file, "utf8")));
    };

    interface StepRun {
      code: number | null;
      output: string;
      summary: string;
      outputs: Record<string, string>;
    }

    /**
     * The step `id: pipeline` of `job` for `event` at `commit`, by bash as a runner runs it: a fresh clone at the commit
     * with the stack's program installed, the workflow's and the step's env filled in, and RUNNER_TEMP `temp`, which the
     * caller fills with what the job downloads and takes what it uploads from.
     */
    const runStep = async (
      job: string,
      event: Record<string, unknown> & { name: string },
      at: string,
      temp: string,
      stack?: string,
    ): Promise<StepRun> => {
      const dir = join(work, "jobs", `${String(++jobs).padStart(2, "0")}-${job}${stack ? `-${stack}` : ""}`);
      mkdirSync(dir, { recursive: true });
      mkdirSync(temp, { recursive: true });
      const programs = stack ? [join("gitops", dirsOf(at)[stack]!)] : [];
      const checkout = checkoutIn(join(dir, "checkout"), { repo: origin, commit: at }, programs);
      const step = stepOf(job);
      const context: Context = {
        vars,
        secrets,
        env: {},
        github: { event_name: event.name, workspace: checkout.root, event },
        ...(stack ? { matrix: { stack } } : {}),
      };
      for (const [name, value] of Object.entries({ ...workflow.env, ...step.env })) context.env[name] = expand(value, context);
      const files = { summary: join(dir, "summary.md"), outputs: join(dir, "outputs") };
      writeFileSync(files.summary, "");
      writeFileSync(files.outputs, "");
      const child = spawn("bash", ["--noprofile", "--norc", "-e", "-o", "pipefail", "-c", step.run!], {
        cwd: join(checkout.root, expand(step["working-directory"]!, context)),
        env: {
          ...process.env,
          ...context.env,
          PATH: [cli!.dir, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter),
          PULUMI_HOME: join(dir, "pulumi-home"),
          RUNNER_TEMP: temp,
          GITHUB_STEP_SUMMARY: files.summary,
          GITHUB_OUTPUT: files.outputs,
          ...(s3 ? s3.env : {}),
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
      const code = await new Promise<number | null>((done) => child.on("close", done));
      const summary = readFileSync(files.summary, "utf8");
      seen.push(output, summary);
      const outputs = Object.fromEntries(
        readFileSync(files.outputs, "utf8")
          .split("\n")
          .filter((line) => line.includes("="))
          .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
      );
      return { code, output, summary, outputs };
    };

    /** Each entry's folder in the stack list at `at`, as the stacks job's `dirs` output says. */
    const dirsOf = (at: string): Record<string, string> => {
      const list = parse(spawnSync("git", ["show", `${at}:${LIST_DIR}/gms-stacks.yaml`], { cwd: origin, encoding: "utf8" }).stdout) as {
        stacks: Record<string, { dir: string }>;
      };
      return Object.fromEntries(Object.entries(list.stacks).map(([name, entry]) => [name, entry.dir]));
    };

    /** A matrix's jobs, two at a time: the two runners. */
    const onTwoRunners = async <T>(stacks: readonly string[], job: (stack: string) => Promise<T>): Promise<T[]> => {
      const results: T[] = [];
      for (let index = 0; index < stacks.length; index += 2) results.push(...(await Promise.all(stacks.slice(index, index + 2).map(job))));
      return results;
    };

    /** Copies every artifact named `prefix*` into `into`, each in a folder of its name (download-artifact with a pattern). */
    const download = (prefix: string, into: string) => {
      mkdirSync(into, { recursive: true });
      for (const name of readdirSync(artifacts()).filter((each) => each.startsWith(prefix)))
        cpSync(artifacts(name), join(into, name), { recursive: true });
    };

    interface Review {
      levels: string[][];
      reasons: string;
      comment: string;
      plans: Record<
        string,
        { steps: { resource: string; op: string; fields: { field: string; new: unknown }[] }[]; provenance: Record<string, unknown> }
      >;
    }

    /** A pull request from `base` to `head`: the stacks job, the previews level by level on two runners, the comment. */
    const pullRequest = async (number: number, base: string, head: string): Promise<Review> => {
      const event = { name: "pull_request", number, pull_request: { base: { sha: base } } };
      const stacks = await runStep("stacks", event, head, join(work, "temp", `pr${number}-stacks`));
      expect(stacks.code, stacks.output).toBe(0);
      const levels = [JSON.parse(stacks.outputs.level0!), JSON.parse(stacks.outputs.level1!)] as string[][];
      const plans: Review["plans"] = {};
      for (const [index, level] of levels.entries()) {
        const job = `preview-${index}`;
        await onTwoRunners(level, async (stack) => {
          const temp = join(work, "temp", `pr${number}-${job}-${stack}`);
          download(`gms-plan-${number}-`, join(temp, "reviewed"));
          const run = await runStep(job, event, head, temp, stack);
          expect(run.code, run.output).toBe(0);
          const name = expand(String(named(job, "Keep the plan").with!.name), {
            vars,
            secrets,
            env: {},
            github: { event_name: "pull_request", workspace: "", event },
            matrix: { stack },
          });
          cpSync(join(temp, "plan"), artifacts(name), { recursive: true });
          plans[stack] = JSON.parse(readFileSync(join(temp, "plan", "plan.json"), "utf8"));
        });
      }
      const temp = join(work, "temp", `pr${number}-comment`);
      download(`gms-plan-${number}-`, join(temp, "plans"));
      const comment = await runStep("comment", event, head, temp);
      expect(comment.code, comment.output).toBe(0);
      return {
        levels: levels.filter((level) => level.length > 0),
        reasons: stacks.output,
        comment: readFileSync(join(temp, "comment.md"), "utf8"),
        plans,
      };
    };

    /** The merge of pull request `number` (a fast-forward of main to `head`): the stacks job, then each level's applies. */
    const merge = async (number: number, before: string, head: string) => {
      git("checkout", "-q", "main");
      git("merge", "-q", "--ff-only", head);
      const event = { name: "push", before };
      const temp = join(work, "temp", `merge${number}-stacks`);
      download(`gms-plan-${number}-`, join(temp, "reviewed"));
      const stacks = await runStep("stacks", event, head, temp);
      expect(stacks.code, stacks.output).toBe(0);
      const levels = [JSON.parse(stacks.outputs.level0!), JSON.parse(stacks.outputs.level1!)] as string[][];
      const applied: Record<string, StepRun> = {};
      for (const [index, level] of levels.entries())
        await onTwoRunners(level, async (stack) => {
          const temp = join(work, "temp", `merge${number}-apply-${index}-${stack}`);
          cpSync(artifacts(`gms-plan-${number}-${stack}`), join(temp, "reviewed"), { recursive: true });
          applied[stack] = await runStep(`apply-${index}`, event, head, temp, stack);
        });
      return { levels: levels.filter((level) => level.length > 0), applied };
    };

    const result = (run: StepRun) =>
      JSON.parse(
        run.output
          .split("\n")
          .find((line) => line.startsWith("result: "))!
          .slice(8),
      );
    const list = async <T>(path: string) => {
      const { body } = await callOverHttp(emulator, "GET", path);
      return (Array.isArray(body) ? body : body.data) as T[];
    };
    /** A stack's checkpoint as the backend holds it (the bucket's object, or the file), to tell whether a job changed it. */
    const checkpoint = async (project: string) => {
      const key = `.pulumi/stacks/${project}/prod.json`;
      return s3 ? await s3.get(key) : existsSync(join(work, "backend", key)) ? readFileSync(join(work, "backend", key), "utf8") : undefined;
    };

    beforeAll(async () => {
      work = mkdtempSync(join(tmpdir(), "gms-gitops-workflow-"));
      mkdirSync(artifacts(), { recursive: true });
      emulator = await startEmulator({ port: 0, fixtures: join(QUICKSTART, "fixtures.yaml") });
      secrets = { GMS_API_KEY: emulator.apiKey, OPENAI_API_KEY: OPENAI_KEY };
      vars = { GMS_BASE_URL: emulator.url };
      if (moto) {
        s3 = await startS3Backend();
        Object.assign(vars, { PULUMI_BACKEND_URL: s3.url, GMS_SECRETS_PROVIDER: await s3.kmsKey() });
      } else {
        mkdirSync(join(work, "backend"));
        Object.assign(vars, { PULUMI_BACKEND_URL: pathToFileURL(join(work, "backend")).href });
        Object.assign(secrets, { PULUMI_CONFIG_PASSPHRASE: "gitops workflow passphrase" });
      }
      origin = join(work, "origin");
      mkdirSync(origin);
      git("init", "-q", "-b", "main");
      git("config", "user.email", "ci@example.com");
      git("config", "user.name", "ci");
      writeFileSync(join(origin, "README.md"), "# infra\n");
      git("add", "-A");
      git("commit", "-q", "-m", "an empty repository");
    }, 120_000);

    afterAll(async () => {
      for (const each of seen) for (const secret of [...Object.values(secrets), OPENAI_KEY]) expect(each).not.toContain(secret);
      await s3?.close();
      await emulator?.close();
      if (work) rmSync(work, { recursive: true, force: true });
    }, 120_000);

    it("a first pull request plans every stack, level by level; its merge applies each reviewed plan in a checkout of its own", async () => {
      const base = git("rev-parse", "HEAD");
      const head = commit("add-stacks", "the workspace's stacks", () =>
        cpSync(GITOPS, join(origin, LIST_DIR), {
          recursive: true,
          filter: (path) => !/(^|[\\/])(node_modules|\.pulumi-state)$/.test(path) && !/Pulumi\.[^\\/]+\.yaml$/.test(path),
        }),
      );
      const review = await pullRequest(1, base, head);
      expect(review.levels).toEqual([["shared"], ["helpdesk", "sales"]]);
      expect(review.reasons).toContain("pipeline: level 0: shared (stack prod): its entry in gms-stacks.yaml is new");
      // The App stacks read the shared stack, new in this review: what they read of it is [known after up].
      for (const app of ["helpdesk", "sales"]) {
        expect(review.plans[app]!.provenance.heldUnknown).toEqual(["shared"]);
        const model = review.plans[app]!.steps.find((step) => step.resource === `${app}-llm`)!;
        expect(model.fields).toContainEqual({ field: "provider", old: null, new: "[known after up]" });
      }
      expect(review.comment).toMatch(/^<!-- gms-plan -->\n# gms plan: 3 stacks, 10 steps\n/);
      for (const stack of ["shared", "helpdesk", "sales"]) expect(review.comment).toContain(`## Plan: \`${stack}\` (stack \`prod\`)`);

      const { levels, applied } = await merge(1, base, head);
      expect(levels).toEqual([["shared"], ["helpdesk", "sales"]]);
      for (const stack of ["shared", "helpdesk", "sales"]) {
        expect(applied[stack]!.code, applied[stack]!.output).toBe(0);
        // The merge's checkout has no settings file: the stack's secrets settings come from the backend.
        expect(applied[stack]!.output).toContain(`pipeline: ${stack} (stack prod): its secrets settings (`);
        expect(applied[stack]!.output).not.toContain("message authentication failed");
      }
      expect(result(applied.shared!).plan.heldTo).toBe("reviewed");
      // What the App stacks read of the shared stack is known now: the engine is held to the plan made now.
      expect(result(applied.helpdesk!).plan.heldTo).toBe("fresh");
      expect(applied.helpdesk!.output).toContain(
        "pipeline: known now: `helpdesk-llm` (Model): field `provider`: reviewed create with [known after up]",
      );
      // The shared connection, and every Model linked to it: the shared stack's, and each App stack's by the GUID it read.
      const [connection, ...more] = await list<{ guid: string }>("/providers");
      expect(more).toEqual([]);
      const models = await list<{ llm: string; provider_guid: string }>("/models");
      expect(models.map((model) => `${model.llm} ${model.provider_guid}`).sort()).toEqual(
        ["gpt-4o", "gpt-4o-mini", "gpt-4o-mini"].map((llm) => `${llm} ${connection!.guid}`),
      );
      expect((await list<{ name: string }>("/apps")).map((app) => app.name).sort()).toEqual(["Helpdesk", "Sales", "Support"]);
    }, 900_000);

    it("a change to one App's stack plans and applies that stack only", async () => {
      const base = git("rev-parse", "main");
      const head = commit("helpdesk-description", "Helpdesk answers in English", () =>
        edit("apps/helpdesk/index.ts", (program) =>
          program.replace('description: "Answers customer questions"', 'description: "Answers in English"'),
        ),
      );
      const untouched = { shared: await checkpoint("gms-shared"), sales: await checkpoint("gms-sales") };
      const review = await pullRequest(2, base, head);
      expect(review.levels).toEqual([["helpdesk"]]);
      expect(review.reasons).toContain(
        "pipeline: level 0: helpdesk (stack prod): `apps/helpdesk/index.ts` is in its folder (apps/helpdesk)",
      );
      expect(review.plans.helpdesk!.steps.map((step) => `${step.op} ${step.resource}`)).toEqual(["update helpdesk"]);
      expect(review.plans.helpdesk!.provenance.heldUnknown).toBeUndefined();
      expect(review.comment).toMatch(/^<!-- gms-plan -->\n# gms plan: 1 stack, 1 step\n/);

      const { levels, applied } = await merge(2, base, head);
      expect(levels).toEqual([["helpdesk"]]);
      expect(Object.keys(applied)).toEqual(["helpdesk"]);
      expect(applied.helpdesk!.code, applied.helpdesk!.output).toBe(0);
      expect(result(applied.helpdesk!).changes).toMatchObject({ update: 1 });
      expect({ shared: await checkpoint("gms-shared"), sales: await checkpoint("gms-sales") }).toEqual(untouched);
      const helpdesk = (await list<{ guid: string; name: string; description: string }>("/apps")).find((app) => app.name === "Helpdesk")!;
      expect(helpdesk.description).toBe("Answers in English");
    }, 600_000);

    it("a change to the shared stack plans it and its readers, which hold what they read as [known after up]; the merge applies the three", async () => {
      const base = git("rev-parse", "main");
      // Another URL replaces the connection: its GUID, which the App stacks read, is known only after up.
      const head = commit("connection-url", "OpenAI through its v1 URL", () =>
        edit("shared/index.ts", (program) =>
          program.replace('nickname: "OpenAI",', 'nickname: "OpenAI", url: "https://api.openai.com/v1",'),
        ),
      );
      const review = await pullRequest(3, base, head);
      expect(review.levels).toEqual([["shared"], ["helpdesk", "sales"]]);
      expect(review.reasons).toContain("pipeline: level 1: sales (stack prod): it depends on shared, which this change touches");
      expect(review.plans.shared!.steps.map((step) => `${step.op} ${step.resource}`).sort()).toEqual([
        "replace gpt-4o-mini",
        "replace openai",
      ]);
      for (const app of ["helpdesk", "sales"]) {
        expect(review.plans[app]!.provenance.heldUnknown).toEqual(["shared"]);
        expect(review.plans[app]!.steps.map((step) => `${step.op} ${step.resource}`)).toEqual([`replace ${app}-llm`]);
        expect(review.comment).toMatch(
          new RegExp(`- \\*\\*May replace\\*\\* \`${app}-llm\` \\(Model\\) \`[0-9a-f-]{36}\`: \`provider\` will be known only after`),
        );
      }
      const [before] = await list<{ guid: string }>("/providers");

      const { levels, applied } = await merge(3, base, head);
      expect(levels).toEqual([["shared"], ["helpdesk", "sales"]]);
      for (const stack of ["shared", "helpdesk", "sales"]) expect(applied[stack]!.code, applied[stack]!.output).toBe(0);
      const [after] = await list<{ guid: string }>("/providers");
      expect(after!.guid).not.toBe(before!.guid);
      for (const app of ["helpdesk", "sales"]) {
        expect(result(applied[app]!).changes).toMatchObject({ replace: 1 });
        expect(applied[app]!.output).toContain(`pipeline: known now: \`${app}-llm\` (Model): field \`provider\``);
      }
      // Every Model, the App stacks' included, is linked to the new connection.
      const models = await list<{ llm: string; provider_guid: string }>("/models");
      expect(models.map((model) => model.provider_guid)).toEqual([after!.guid, after!.guid, after!.guid]);
    }, 900_000);

    it("the drift check runs a job per stack; a drift in one stack fails that stack's job alone, its report naming the field", async () => {
      const main = git("rev-parse", "main");
      const helpdesk = (await list<{ guid: string; name: string }>("/apps")).find((app) => app.name === "Helpdesk")!;
      expect((await callOverHttp(emulator, "PUT", `/apps/${helpdesk.guid}`, { name: "Helpdesk (renamed)" })).status).toBe(200);
      const event = { name: "schedule" };
      const stacks = await runStep("stacks", event, main, join(work, "temp", "drift-stacks"));
      expect(stacks.code, stacks.output).toBe(0);
      const all = JSON.parse(stacks.outputs.all!) as string[];
      expect(all).toEqual(["shared", "helpdesk", "sales"]);
      const checks = await onTwoRunners(all, async (stack) => ({
        stack,
        run: await runStep("drift", event, main, join(work, "temp", `drift-${stack}`), stack),
      }));
      const by = Object.fromEntries(checks.map(({ stack, run }) => [stack, run]));
      expect(by.helpdesk!.code, by.helpdesk!.output).toBe(3);
      expect(by.helpdesk!.output).toContain("::error title=Drift (helpdesk)::");
      expect(by.helpdesk!.summary).toMatch(/^## Drift report: stack `helpdesk`\n\n\*\*1 field changed on 1 resource/);
      expect(by.helpdesk!.summary).toContain('| helpdesk | App | `name` | `"Helpdesk (renamed)"` | `"Helpdesk"` | yes |');
      for (const stack of ["shared", "sales"]) {
        expect(by[stack]!.code, by[stack]!.output).toBe(0);
        expect(by[stack]!.summary).toContain(
          `## Drift report: stack \`${stack}\`\n\n**0 fields changed on 0 resources · 0 objects deleted`,
        );
      }
      // No stack reports another's objects as unmanaged: the fixtures' Support App is the one object no stack manages.
      expect(by.sales!.summary).toMatch(/1 object of the workspace not managed by the stack/);

      // The stacks, torn down as review environments would be, the App stacks first: the workspace holds the fixtures' alone.
      for (const stack of ["helpdesk", "sales", "shared"]) {
        const dir = join(work, "jobs", `${String(++jobs).padStart(2, "0")}-destroy-${stack}`);
        const checkout = checkoutIn(join(dir, "checkout"), { repo: origin, commit: main }, [join("gitops", dirsOf(main)[stack]!)]);
        const context: Context = {
          vars,
          secrets,
          env: {},
          github: { event_name: "workflow_dispatch", workspace: checkout.root, event: {} },
        };
        const env = Object.fromEntries(Object.entries(workflow.env).map(([name, value]) => [name, expand(value, context)]));
        const run = await startPipeline(
          ["destroy", "--entry", stack],
          { ...env, ...s3?.env, PULUMI_HOME: join(dir, "pulumi-home") },
          cli,
          checkout.gitops,
        ).run;
        seen.push(run.output);
        expect(run.code, run.output).toBe(0);
      }
      expect((await list<{ name: string }>("/apps")).map((app) => app.name)).toEqual(["Support"]);
      expect(await list("/providers")).toEqual([]);
      expect(await list("/models")).toEqual([]);
    }, 900_000);
  },
);
