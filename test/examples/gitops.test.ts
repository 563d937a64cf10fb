/**
 * examples/gitops: the pipeline script (Automation API over a local file backend, the quickstart as an
 * inline program) run as a pipeline runs it, `node pipeline.ts <job>`, each job in a checkout and a PULUMI_HOME of its
 * own (gitops-harness.ts's runner), against the emulator seeded with the quickstart's fixtures: preview on a pull
 * request, up on merge, refresh on a schedule (clean, then after an out-of-band change), destroy. The Automation API
 * drives the real `pulumi` CLI (the project's `.pulumi-cli/bin`, else `pulumi` on PATH; test/pulumi-cli/harness.ts),
 * whose folder goes first on the PATH the pipeline gets: without a CLI those tests are skipped and the reason is
 * printed (under CI=true they are required). The script's own checks (types, usage, the missing-CLI message) run
 * either way.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { callOverHttp } from "../emulator/harness";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { checkoutIn, GITOPS, QUICKSTART, type Runner, runner, runPipeline as runPipelineWith } from "./gitops-harness";
import { typeCheckProgram } from "./type-check";

/** The stack list's programs, in a checkout's examples/. */
const PROGRAMS = ["gitops/shared", "gitops/apps/helpdesk", "gitops/apps/sales"];

const cli = pulumiCliFor("test/examples/gitops.test.ts");
const runPipeline = (args: string[], env: NodeJS.ProcessEnv) => runPipelineWith(args, env, cli);

describe("examples/gitops/pipeline.ts, with or without the CLI", () => {
  it("type-checks with its own tsconfig.json", () => {
    const tsc = spawnSync(
      process.execPath,
      [join(GITOPS, "..", "..", "node_modules", "typescript", "bin", "tsc"), "-p", join(GITOPS, "tsconfig.json")],
      {
        encoding: "utf8",
      },
    );
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.status).toBe(0);
  }, 60_000);

  it("the stack list's programs type-check with their own tsconfig.json against the installed package", () => {
    const dir = mkdtempSync(join(tmpdir(), "gms-gitops-types-"));
    try {
      const checkout = checkoutIn(join(dir, "checkout"), undefined, PROGRAMS);
      for (const program of PROGRAMS) {
        const checked = typeCheckProgram(join(checkout.root, "examples", program));
        expect(checked.output, program).toBe("");
        expect(checked.status, program).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("prints its usage; an unknown job exits 2", async () => {
    const help = await runPipeline(["--help"], {});
    expect(help).toMatchObject({
      code: 0,
      output: expect.stringContaining("usage: node pipeline.ts <job> [options]\n  stacks  --stacks FILE (--changed-since REF"),
    });
    expect((await runPipeline(["deploy"], {})).code).toBe(2);
    // The report folder the harness gave the run is gone with it: a test run leaves no temporary folder behind.
    expect(help.reports).toBeDefined();
    expect(existsSync(help.reports!)).toBe(false);
  });

  it("refuses an option its job does not take, or one without its value, before anything runs: 2", async () => {
    for (const [args, said] of [
      [["up", "--plan"], "up does not take --plan (it takes --plan-file, --stacks, --entry)"],
      [["up", "--plan-file"], "--plan-file needs a value"],
      [["up", "--plan-file", "--entry", "x"], "--plan-file needs a value"],
      [
        ["preview", "--fail-on-drift"],
        "preview does not take --fail-on-drift (it takes --report-dir, --reviewed-plans, --stacks, --entry)",
      ],
      [["destroy", "--yes"], "destroy does not take --yes (it takes --stacks, --entry)"],
      [["destroy", "now"], "destroy takes no argument now"],
      [["stacks", "--stacks", "gms-stacks.yaml"], "stacks takes one of --changed-since REF, --reviewed-plans DIR and --all"],
      [
        ["stacks", "--stacks", "gms-stacks.yaml", "--all", "--max-levels", "0"],
        '--max-levels must be a whole number of at least 1, not "0"',
      ],
      [["comment"], "comment needs --plans DIR: the folder of the review's plans (plan.json)"],
    ] as const) {
      const run = await runPipeline([...args], { PATH: dirname(process.execPath) });
      expect(run.code, run.output).toBe(2);
      expect(run.output).toContain(`pipeline: ${said}`);
      expect(run.result).toBeUndefined();
    }
  });

  it("without the CLI on PATH, a job fails at once and says why", async () => {
    // A PATH of this `node` alone: no `pulumi` on it, whether or not this machine has one.
    const run = await runPipeline(["preview"], { PATH: dirname(process.execPath) });
    expect(run.code).toBe(1);
    expect(run.output).toContain("pipeline: the pulumi CLI is not on PATH");
    expect(run.result).toBeUndefined();
  });
});

describe.skipIf(cli === undefined)(`examples/gitops against the emulator with the Pulumi CLI (${cliName(cli)})`, () => {
  let work: string;
  let emulator: RunningEmulator;
  let env: NodeJS.ProcessEnv;
  let ci: Runner;
  const requests: RequestLogEntry[] = [];
  const writes = () => requests.filter((entry) => entry.method !== "GET");
  /** The answer, with a list route's items whether it is a bare array or the `{data, ...}` envelope. */
  const api = async (method: string, path: string, body?: unknown) => {
    const answer = await callOverHttp(emulator, method, path, body);
    return { ...answer, items: (Array.isArray(answer.body) ? answer.body : answer.body?.data) as { guid: string; name: string }[] };
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "gms-gitops-"));
    emulator = await startEmulator({
      port: 0,
      fixtures: join(QUICKSTART, "fixtures.yaml"),
      onRequestComplete: (entry) => requests.push(entry),
    });
    env = {
      GMS_BASE_URL: emulator.url,
      GMS_API_KEY: emulator.apiKey,
      OPENAI_API_KEY: "sk-gitops-test-0001",
      PULUMI_CONFIG_PASSPHRASE: "gitops test passphrase",
      PULUMI_BACKEND_URL: pathToFileURL(join(work, "backend")).href,
      GMS_STACK: "ci",
    };
    ci = runner("ci", work, { env, cli });
  });

  afterAll(async () => {
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("pull request: preview plans all nine creates and writes nothing", async () => {
    requests.length = 0;
    const run = await ci.job(["preview"]);
    expect(run.code, run.output).toBe(0);
    // Pulumi also counts the stack itself: nine resources and the stack.
    expect(run.result?.changes, run.output).toEqual({ create: 10 });
    expect(run.output).toContain("pulumi-nodejs:dynamic/gms:ContextSource handbook create");
    expect(writes()).toEqual([]);
  }, 180_000);

  it("merge: up creates the workspace's objects and reports the outputs, secrets masked", async () => {
    const run = await ci.job(["up"]);
    expect(run.code, run.output).toBe(0);
    expect(run.result?.changes, run.output).toEqual({ create: 10 });
    expect(run.result?.outputs).toMatchObject({
      appSlug: "helpdesk",
      handbookStatus: "indexed",
      providerKey: "[secret]",
      experimentStatus: "active",
    });
    expect(run.output.includes("sk-gitops-test-0001")).toBe(false);
    expect(run.output.includes(emulator.apiKey)).toBe(false);
    expect((await api("GET", "/apps")).items.map((app) => app.name).sort()).toEqual(["Helpdesk", "Support"]);
    expect((await api("GET", "/providers")).items).toHaveLength(1);
  }, 180_000);

  it("schedule: refresh finds no drift, then reports an out-of-band rename (exit 3 with --fail-on-drift)", async () => {
    const clean = await ci.job(["refresh", "--fail-on-drift"]);
    expect(clean.code, clean.output).toBe(0);
    expect(clean.result?.changes, clean.output).toEqual({ same: 10 });
    expect(clean.result?.drift).toEqual({});

    const helpdesk = (await api("GET", "/apps")).items.find((app) => app.name === "Helpdesk")!;
    const [triage] = (await api("GET", `/apps/${helpdesk.guid}/workflows`)).items;
    expect((await api("PUT", `/workflows/${triage!.guid}`, { name: "Triage (renamed in the console)" })).status).toBe(200);
    const drifted = await ci.job(["refresh", "--fail-on-drift"]);
    expect(drifted.code, drifted.output).toBe(3);
    expect(drifted.result?.changes, drifted.output).toEqual({ same: 9, update: 1 });
    expect(drifted.result?.drift).toEqual({ update: 1 });
    expect(drifted.output).toContain("pipeline: drift: up would update 1");
  }, 180_000);

  it("asks for the passphrase only where it encrypts with it, and refuses a lock wait that is not whole seconds", async () => {
    const withoutPassphrase = { PULUMI_CONFIG_PASSPHRASE: "" };
    const onFiles = await ci.job(["preview"], withoutPassphrase);
    expect(onFiles.code, onFiles.output).toBe(1);
    expect(onFiles.output).toContain("pipeline: PULUMI_CONFIG_PASSPHRASE is not set");
    // Pulumi Cloud encrypts the secrets itself: what stops this job (no token, no network here) is the login, not the passphrase.
    const onCloud = await ci.job(["preview"], { ...withoutPassphrase, PULUMI_BACKEND_URL: "https://api.pulumi.invalid" });
    expect(onCloud.code, onCloud.output).toBe(1);
    expect(onCloud.output).not.toContain("PULUMI_CONFIG_PASSPHRASE");
    expect(onCloud.output).toMatch(/PULUMI_ACCESS_TOKEN|api\.pulumi\.invalid/);
    const wait = await ci.job(["up"], { GMS_LOCK_WAIT_SECONDS: "ten" });
    expect(wait.code).toBe(1);
    expect(wait.output).toContain('pipeline: GMS_LOCK_WAIT_SECONDS must be a whole number of seconds (0 to refuse at once), not "ten"');
  }, 120_000);

  it("destroy empties the workspace of the program's objects (checked through the API)", async () => {
    const run = await ci.job(["destroy"]);
    expect(run.code, run.output).toBe(0);
    expect(run.result?.changes, run.output).toEqual({ delete: 10 });
    expect((await api("GET", "/apps")).items.map((app) => app.name)).toEqual(["Support"]);
    for (const path of ["/providers", "/models", "/datasets", "/evals", "/experiments"])
      expect((await api("GET", path)).items, path).toEqual([]);
    expect((await api("GET", "/skills")).items.map((skill) => skill.name)).toEqual(["web-search"]);
    const workspace = (await api("GET", "/workspaces/current")).body as { guid: string };
    const contexts = (await api("GET", `/workspaces/${workspace.guid}/context`)).items;
    expect(contexts.map((context) => context.name)).toEqual(["Handbook"]);
    expect((await api("GET", `/contexts/${contexts[0]!.guid}/context_sources`)).items).toEqual([]);
  }, 180_000);
});
