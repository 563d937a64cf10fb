/**
 * examples/gitops/.github/workflows/gms.yml, the GitHub Actions workflow that calls the pipeline. What can be checked
 * without GitHub is: that it is the workflow it says (its triggers, one run at a time on the stack, never a running
 * apply cancelled, the lock setting only where that holds), that every setting it gives is one the pipeline reads and
 * every folder it names exists; and its pipeline step, run by bash as the runner runs it (working directory, the
 * workflow's env with its `${{ vars.* }}`/`${{ secrets.* }}` filled in, GITHUB_STEP_SUMMARY, RUNNER_TEMP) against the
 * emulator: a merge applies, a pull request previews, the schedule checks drift, puts drift.md in the run's summary
 * and fails with an annotation when there is some. That part needs the real `pulumi` CLI: without it, it is skipped
 * with the reason printed (required under CI=true).
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { callOverHttp } from "../emulator/harness";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { DECLARED, GITOPS, QUICKSTART, quickstartIn } from "./gitops-harness";

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
  with?: Record<string, unknown>;
}
interface Workflow {
  on: Record<string, unknown>;
  concurrency: { group: string; "cancel-in-progress": boolean };
  env: Record<string, string>;
  jobs: Record<string, { steps: Step[]; "timeout-minutes"?: number }>;
}

const workflow = parse(readFileSync(WORKFLOW_FILE, "utf8")) as Workflow;
const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
const pipelineStep = steps.find((step) => step.id === "pipeline")!;

/**
 * A value of the workflow's YAML as the runner makes it: `${{ github.workspace }}`, `${{ github.event_name }}`,
 * `${{ env.X }}`, and `${{ vars.X }}`/`${{ secrets.X }}` with an optional `|| 'default'`. Any other expression is an
 * error, so that the test knows every one it fills in.
 */
function expand(
  value: string,
  context: { vars: Record<string, string>; secrets: Record<string, string>; event: string; env: Record<string, string> },
) {
  return value.replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_, expression: string) => {
    if (expression === "github.workspace") return ROOT;
    if (expression === "github.event_name") return context.event;
    const found = /^(vars|secrets|env)\.(\w+)(?:\s*\|\|\s*'([^']*)')?$/.exec(expression);
    if (!found) throw new Error(`the test does not evaluate \${{ ${expression} }}`);
    const [, scope, name, fallback] = found;
    return (scope === "env" ? context.env : context[scope as "vars" | "secrets"])[name!] || fallback || "";
  });
}

describe("examples/gitops/.github/workflows/gms.yml", () => {
  it("previews on a pull request, applies on a merge to main, checks drift on a schedule; one run at a time changes the stack", () => {
    expect(Object.keys(workflow.on).sort()).toEqual(["pull_request", "push", "schedule", "workflow_dispatch"]);
    expect(workflow.on.push).toEqual({ branches: ["main"] });
    const script = pipelineStep.run!;
    expect([...script.matchAll(/node pipeline\.ts (\w+)/g)].map(([, job]) => job)).toEqual(["preview", "up", "up", "refresh"]);
    expect(script).toContain("refresh --fail-on-drift --report-dir");
    expect(script).toContain('up --plan-file "$reviewed/plan.json"');
    // The plan is kept as the pull request's artifact, which the merge's run fetches by that name, and posted as its comment.
    const keep = steps.find((step) => step.name === "Keep the plan")!;
    expect(keep).toMatchObject({ if: "github.event_name == 'pull_request'", uses: "actions/upload-artifact@v4" });
    expect(keep.with?.name).toBe("gms-plan-${{ github.event.number }}");
    const fetch = steps.find((step) => step.name === "Fetch the reviewed plan")!;
    expect(fetch.if).toBe("github.event_name == 'push'");
    expect(fetch.run).toContain('--name "gms-plan-${pr}" --dir "$reviewed"');
    expect(steps.indexOf(fetch)).toBeLessThan(steps.indexOf(pipelineStep));
    const comment = steps.find((step) => step.name === "Comment the plan on the pull request")!;
    expect(comment.run).toContain("--method PATCH");
    expect(comment.run).toContain('cat "${RUNNER_TEMP}/report/plan.md"');
    // One group for every run that changes the stack (the lock setting below depends on it), one per pull request for previews.
    expect(workflow.concurrency.group).toContain("format('gms-preview-{0}', github.event.number)");
    expect(workflow.concurrency.group).toContain("format('gms-{0}', vars.GMS_STACK || 'prod')");
    expect(workflow.concurrency["cancel-in-progress"]).toBe(false);
    expect(workflow.env.GMS_ONE_JOB_PER_STACK).toBe("true");
    expect(pipelineStep["working-directory"]).toBe("${{ env.GITOPS_DIR }}");
  });

  it("gives only settings the pipeline reads, and names folders that exist", () => {
    const pipeline = readFileSync(join(GITOPS, "pipeline.ts"), "utf8");
    const ours = Object.keys(workflow.env).filter((name) => /^(GMS_|OPENAI_)/.test(name) && name !== "GMS_PROGRAM_DIR");
    expect(ours.length).toBeGreaterThan(4);
    for (const name of ours) expect(pipeline, `the pipeline reads ${name}`).toContain(name);
    const context = { vars: {}, secrets: {}, event: "push", env: {} };
    expect(readFileSync(join(ROOT, workflow.env.GITOPS_DIR!, "pipeline.ts"), "utf8")).toBe(pipeline);
    expect(readFileSync(join(expand(workflow.env.GMS_PROGRAM_DIR!, context), "Pulumi.yaml"), "utf8")).toMatch(/^name: /m);
    // Every action is pinned to a major version.
    for (const step of steps.filter((each) => each.uses)) expect(step.uses).toMatch(/^[\w-]+\/[\w-]+@v\d+$/);
  });
});

const cli = pulumiCliFor("test/examples/gitops-workflow.test.ts");

describe.skipIf(cli === undefined)(`the workflow's pipeline step, run as the runner runs it (${cliName(cli)})`, () => {
  let work: string;
  let emulator: RunningEmulator;
  let vars: Record<string, string>;
  let secrets: Record<string, string>;
  const OPENAI_KEY = "sk-gitops-workflow-0001";

  /** The pipeline step for `event`: its script by bash, in its working directory, with the workflow's env and the runner's files. */
  const runStep = async (event: string, runnerTemp = join(work, `runner-temp-${event}`)) => {
    const summary = join(work, `summary-${event}.md`);
    writeFileSync(summary, "");
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries({ ...workflow.env, ...pipelineStep.env }))
      env[name] = expand(value, { vars, secrets, event, env });
    // The program is a copy with the built package installed, as the install step makes it.
    env.GMS_PROGRAM_DIR = join(work, "quickstart");
    const child = spawn("bash", ["-e", "-c", pipelineStep.run!], {
      cwd: join(ROOT, expand(pipelineStep["working-directory"]!, { vars, secrets, event, env })),
      env: {
        ...process.env,
        ...env,
        PATH: [cli!.dir, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter),
        PULUMI_HOME: join(work, "pulumi-home"),
        RUNNER_TEMP: runnerTemp,
        GITHUB_STEP_SUMMARY: summary,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const code = await new Promise<number | null>((done) => child.on("close", done));
    for (const secret of Object.values(secrets)) expect(output).not.toContain(secret);
    return { code, output, summary: readFileSync(summary, "utf8") };
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "gms-gitops-workflow-"));
    emulator = await startEmulator({ port: 0, fixtures: join(QUICKSTART, "fixtures.yaml") });
    quickstartIn(work);
    vars = { PULUMI_BACKEND_URL: pathToFileURL(join(work, "backend")).href, GMS_BASE_URL: emulator.url, GMS_STACK: "workflow" };
    secrets = { PULUMI_CONFIG_PASSPHRASE: "gitops workflow passphrase", GMS_API_KEY: emulator.apiKey, OPENAI_API_KEY: OPENAI_KEY };
  });

  afterAll(async () => {
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("a merge applies, a pull request previews, the schedule puts the drift report in the summary and fails on drift", async () => {
    const merge = await runStep("push");
    expect(merge.code, merge.output).toBe(0);
    expect(merge.output).toContain(`result: {"job":"up","changes":{"create":${DECLARED + 1}}`);

    expect(merge.output).toContain("no reviewed plan (--plan-file): applying what the program and the workspace say now");

    // A pull request's plan in the run's summary and the runner's temp folder (the artifact), then a merge that keeps to it.
    const pull = await runStep("pull_request", join(work, "runner-temp-review"));
    expect(pull.code, pull.output).toBe(0);
    expect(pull.output).toContain(`result: {"job":"preview","changes":{"same":${DECLARED + 1}}`);
    expect(pull.summary).toMatch(/^## Plan: stack `workflow`\n\n\*\*No change\*\*/);
    mkdirSync(join(work, "runner-temp-merge", "reviewed"), { recursive: true });
    copyFileSync(join(work, "runner-temp-review", "report", "plan.json"), join(work, "runner-temp-merge", "reviewed", "plan.json"));
    const kept = await runStep("push", join(work, "runner-temp-merge"));
    expect(kept.code, kept.output).toBe(0);
    expect(kept.output).toContain("the stack is as the reviewed plan");

    const quiet = await runStep("schedule");
    expect(quiet.code, quiet.output).toBe(0);
    expect(quiet.summary).toMatch(/^## Drift report: stack `workflow`\n\n\*\*0 fields changed on 0 resources · 0 objects deleted/);

    const apps = (await callOverHttp(emulator, "GET", "/apps")).body as { data: { guid: string; name: string }[] };
    const helpdesk = apps.data.find((app) => app.name === "Helpdesk")!;
    expect((await callOverHttp(emulator, "PUT", `/apps/${helpdesk.guid}`, { name: "Helpdesk (renamed)" })).status).toBe(200);
    const drifted = await runStep("schedule");
    expect(drifted.code, drifted.output).toBe(3);
    expect(drifted.output).toContain("::error title=Drift::");
    expect(drifted.summary).toContain('| helpdesk | App | `name` | `"Helpdesk (renamed)"` | `"Helpdesk"` | yes |');

    // A merge with the plan reviewed before the rename: nothing changed, exit 5, plan-diff.md in the summary.
    const refused = await runStep("push", join(work, "runner-temp-merge"));
    expect(refused.code, refused.output).toBe(5);
    expect(refused.output).toContain("::error title=Plan changed::");
    expect(refused.summary).toContain("## The merge did not apply: stack `workflow` has changed since the review");
    expect(refused.summary).toContain("`helpdesk` (App): now it would update it, a step the reviewed plan does not have");
    rmSync(join(work, "runner-temp-merge"), { recursive: true, force: true });

    // The next merge puts it back; the stack is then torn down as a review environment would be.
    const again = await runStep("push");
    expect(again.code, again.output).toBe(0);
    expect(again.output).toMatch(/"update":1/);
    const destroy = spawn(process.execPath, [join(GITOPS, "pipeline.ts"), "destroy"], {
      cwd: GITOPS,
      env: {
        ...process.env,
        PATH: [cli!.dir, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter),
        PULUMI_HOME: join(work, "pulumi-home"),
        PULUMI_BACKEND_URL: vars.PULUMI_BACKEND_URL,
        PULUMI_CONFIG_PASSPHRASE: secrets.PULUMI_CONFIG_PASSPHRASE,
        GMS_BASE_URL: emulator.url,
        GMS_API_KEY: emulator.apiKey,
        OPENAI_API_KEY: OPENAI_KEY,
        GMS_STACK: "workflow",
        GMS_PROGRAM_DIR: join(work, "quickstart"),
      },
      stdio: "ignore",
    });
    expect(await new Promise((done) => destroy.on("close", done))).toBe(0);
  }, 300_000);
});
