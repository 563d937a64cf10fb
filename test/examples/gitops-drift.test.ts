/**
 * examples/gitops's drift report (drift.ts, written by `node pipeline.ts refresh`): the rendering from facts, and
 * the two files a scheduled refresh writes against the emulator seeded with the quickstart's fixtures, after an
 * out-of-band rename, an out-of-band delete and an App made outside the program, each job in a checkout and a PULUMI_HOME
 * of its own (gitops-harness.ts's runner). The runs need the real `pulumi`
 * CLI (test/pulumi-cli/harness.ts): without it they are skipped and the reason is printed (under CI=true they are
 * required). The rendering tests run either way.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DriftFacts,
  driftFacts,
  hasDrift,
  renderDriftJson,
  renderDriftMarkdown,
  type StepEvent,
  type StepMetadata,
  valueAt,
} from "../../examples/gitops/drift.ts";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { callOverHttp } from "../emulator/harness";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import { QUICKSTART, type Runner, runner } from "./gitops-harness";

const STACK_URN = "urn:pulumi:ci::quickstart::pulumi:pulumi:Stack::quickstart-ci";
const urn = (kind: string, name: string) => `urn:pulumi:ci::quickstart::pulumi-nodejs:dynamic/gms:${kind}::${name}`;
const state = (kind: string, name: string, id: string, values: Record<string, unknown>) => ({
  type: `pulumi-nodejs:dynamic/gms:${kind}`,
  urn: urn(kind, name),
  id,
  inputs: values,
  outputs: { ...values, guid: id },
});
const pre = (metadata: StepMetadata): StepEvent => ({ resourcePreEvent: { metadata } });

describe("examples/gitops/drift.ts: the report from the facts", () => {
  const refreshEvents: StepEvent[] = [
    pre({ op: "refresh", urn: STACK_URN, type: "pulumi:pulumi:Stack" }),
    pre({
      op: "refresh",
      urn: urn("Workflow", "triage"),
      type: "pulumi-nodejs:dynamic/gms:Workflow",
      old: state("Workflow", "triage", "wf-1", { name: "Triage" }),
    }),
    pre({
      op: "refresh",
      urn: urn("Experiment", "concise-replies"),
      type: "pulumi-nodejs:dynamic/gms:Experiment",
      old: state("Experiment", "concise-replies", "ex-1", { name: "Concise replies" }),
    }),
  ];
  const previewEvents: StepEvent[] = [
    pre({
      op: "update",
      urn: urn("Workflow", "triage"),
      type: "pulumi-nodejs:dynamic/gms:Workflow",
      old: {
        ...state("Workflow", "triage", "wf-1", { name: "Triage | renamed", __provider: "code" }),
        outputs: { name: "Triage | renamed", guid: "wf-1", key: "sk-never-shown" },
      },
      new: { ...state("Workflow", "triage", "wf-1", { name: "Triage", key: "sk-never-shown" }) },
      diffs: ["name", "__provider", "key"],
      detailedDiff: { name: { diffKind: "update" }, __provider: { diffKind: "update" }, key: { diffKind: "update" } },
    }),
    // A dynamic provider's diff names no field: the inputs that differ are the fields.
    pre({
      op: "update",
      urn: urn("App", "helpdesk"),
      type: "pulumi-nodejs:dynamic/gms:App",
      old: state("App", "helpdesk", "app-1", { __provider: "a", name: "Helpdesk", description: "Edited" }),
      new: state("App", "helpdesk", "app-1", { __provider: "b", name: "Helpdesk", description: "Answers" }),
    }),
    pre({
      op: "create",
      urn: urn("Experiment", "concise-replies"),
      type: "pulumi-nodejs:dynamic/gms:Experiment",
      new: state("Experiment", "concise-replies", "", { name: "Concise replies" }),
    }),
  ];
  const facts = driftFacts({
    stack: "ci",
    checkedAt: "2026-01-02T03:04:05.000Z",
    refreshEvents,
    previewEvents,
    discover: { document: { resources: [{ type: "gms:index:App", name: "console_app", id: "app-9" }] } },
    secrets: ["sk-never-shown"],
  });

  it("reads the changed fields (not the dynamic provider's own), the deletions and the unmanaged objects", () => {
    expect(facts.changedFields).toEqual([
      {
        resource: "triage",
        kind: "Workflow",
        id: "wf-1",
        field: "name",
        service: "Triage | renamed",
        program: "Triage",
        putBack: true,
        replaces: false,
      },
      {
        resource: "triage",
        kind: "Workflow",
        id: "wf-1",
        field: "key",
        service: "[secret]",
        program: "[secret]",
        putBack: true,
        replaces: false,
      },
      {
        resource: "helpdesk",
        kind: "App",
        id: "app-1",
        field: "description",
        service: "Edited",
        program: "Answers",
        putBack: true,
        replaces: false,
      },
    ]);
    expect(facts.deleted).toEqual([{ resource: "concise-replies", kind: "Experiment", id: "ex-1", putBack: true }]);
    expect(facts.unmanaged).toEqual([{ importName: "console_app", kind: "App", id: "app-9", putBack: false }]);
    expect(hasDrift(facts)).toBe(true);
  });

  it("renders drift.md as a comment: a heading, the counts, a table per kind, no JSON document, no secret", () => {
    const markdown = renderDriftMarkdown(facts);
    expect(markdown).toMatch(/^## Drift report: stack `ci`\n/);
    expect(markdown).toContain(
      "**3 fields changed on 2 resources · 1 object deleted outside Pulumi · 1 object of the workspace not managed by the stack.**",
    );
    expect(markdown).toContain("| Resource | Kind | Field | Service holds | Program declares | Put back by `up` |");
    // A `|` in a value is escaped, so that it does not split the table's cell.
    expect(markdown).toContain('| triage | Workflow | `name` | `"Triage \\| renamed"` | `"Triage"` | yes |');
    expect(markdown).toContain("| concise-replies | Experiment | `ex-1` | yes, made again (with a new GUID) |");
    expect(markdown).toContain("| console_app | App | `app-9` | no: it stays (delete it, or import it with `pulumi-gms discover`) |");
    expect(markdown).not.toContain("sk-never-shown");
    expect(markdown).not.toContain("{");
  });

  it("renders drift.json with its counts; with no drift, says so; a failed listing is named", () => {
    const json = JSON.parse(renderDriftJson(facts));
    expect(json).toMatchObject({
      stack: "ci",
      summary: { drifted: true, changedFields: 3, changedResources: 2, deleted: 1, unmanaged: 1 },
      changedFields: [{ field: "name", service: "Triage | renamed", program: "Triage" }, { field: "key" }, { field: "description" }],
    });
    expect(renderDriftJson(facts)).not.toContain("sk-never-shown");

    const clean: DriftFacts = {
      stack: "ci",
      checkedAt: "now",
      changedFields: [],
      deleted: [],
      unmanagedError: "pulumi-gms discover failed (exit 1)",
    };
    expect(hasDrift(clean)).toBe(false);
    const markdown = renderDriftMarkdown(clean);
    expect(markdown).toContain("The service holds what the program declares.");
    expect(markdown).toContain("Not listed: pulumi-gms discover failed (exit 1).");
    expect(JSON.parse(renderDriftJson(clean)).summary).toEqual({
      drifted: false,
      changedFields: 0,
      changedResources: 0,
      deleted: 0,
      unmanaged: null,
    });
  });

  it("reads a nested property path", () => {
    expect(valueAt({ a: { b: [{ c: 1 }] } }, "a.b[0].c")).toBe(1);
    expect(valueAt({ "a.b": 2 }, '["a.b"]')).toBe(2);
    expect(valueAt({ a: 1 }, "a.b")).toBeUndefined();
  });
});

const cli = pulumiCliFor("test/examples/gitops-drift.test.ts");

describe.skipIf(cli === undefined)(`examples/gitops drift report against the emulator with the Pulumi CLI (${cliName(cli)})`, () => {
  let work: string;
  let emulator: RunningEmulator;
  let env: NodeJS.ProcessEnv;
  let ci: Runner;
  const OPENAI_KEY = "sk-gitops-drift-0001";
  const api = async (method: string, path: string, body?: unknown) => {
    const answer = await callOverHttp(emulator, method, path, body);
    return { ...answer, items: (Array.isArray(answer.body) ? answer.body : answer.body?.data) as { guid: string; name: string }[] };
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "gms-gitops-drift-"));
    emulator = await startEmulator({ port: 0, fixtures: join(QUICKSTART, "fixtures.yaml") });
    env = {
      GMS_BASE_URL: emulator.url,
      GMS_API_KEY: emulator.apiKey,
      OPENAI_API_KEY: OPENAI_KEY,
      PULUMI_CONFIG_PASSPHRASE: "gitops drift test passphrase",
      PULUMI_BACKEND_URL: pathToFileURL(join(work, "backend")).href,
      GMS_STACK: "ci",
      GMS_DRIFT_REPORT_DIR: join(work, "report"),
    };
    ci = runner("ci", work, { env, cli });
  });

  afterAll(async () => {
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("refresh --fail-on-drift reports a rename, a deletion and an unmanaged App in drift.json and drift.md (exit 3)", async () => {
    const applied = await ci.job(["up"]);
    expect(applied.code, applied.output).toBe(0);

    const helpdesk = (await api("GET", "/apps")).items.find((app) => app.name === "Helpdesk")!;
    const [triage] = (await api("GET", `/apps/${helpdesk.guid}/workflows`)).items;
    expect((await api("PUT", `/workflows/${triage!.guid}`, { name: "Triage (renamed in the console)" })).status).toBe(200);
    const [experiment] = (await api("GET", "/experiments")).items;
    expect((await api("DELETE", `/experiments/${experiment!.guid}`)).status).toBe(200);
    const made = await api("POST", "/apps", { name: "Made in the console" });
    expect(made.status).toBe(200);
    const consoleApp = made.body as { guid: string };

    const reportDir = join(work, "report");
    const run = await ci.job(["refresh", "--fail-on-drift", "--report-dir", reportDir], { GMS_DRIFT_REPORT_DIR: "" });
    expect(run.code, run.output).toBe(3);
    expect((run.result as { report?: unknown } | undefined)?.report, run.output).toMatchObject({
      json: join(reportDir, "drift.json"),
      markdown: join(reportDir, "drift.md"),
      changedFields: 1,
      deleted: 1,
    });
    const jsonText = readFileSync(join(reportDir, "drift.json"), "utf8");
    const markdown = readFileSync(join(reportDir, "drift.md"), "utf8");
    const report = JSON.parse(jsonText);
    expect(report.summary, jsonText).toMatchObject({ drifted: true, changedFields: 1, deleted: 1 });
    expect(report.changedFields, jsonText).toEqual([
      {
        resource: "triage",
        kind: "Workflow",
        id: triage!.guid,
        field: "name",
        service: "Triage (renamed in the console)",
        program: "Triage",
        putBack: true,
        replaces: false,
      },
    ]);
    expect(report.deleted, jsonText).toEqual([{ resource: "concise-replies", kind: "Experiment", id: experiment!.guid, putBack: true }]);
    // The fixtures' Support App is not the stack's either: the program only looks it up.
    expect(report.unmanaged, jsonText).toContainEqual({
      importName: "made_in_the_console",
      kind: "App",
      id: consoleApp.guid,
      putBack: false,
    });
    expect(report.unmanaged.map((object: { kind: string }) => object.kind).sort(), jsonText).toEqual(["App", "App"]);

    expect(markdown).toMatch(
      /^## Drift report: stack `ci`\n\n\*\*1 field changed on 1 resource · 1 object deleted outside Pulumi · 2 objects/,
    );
    expect(markdown).toContain('| triage | Workflow | `name` | `"Triage (renamed in the console)"` | `"Triage"` | yes |');
    expect(markdown).toContain(`| concise-replies | Experiment | \`${experiment!.guid}\` | yes, made again (with a new GUID) |`);
    expect(markdown).toContain(`| made_in_the_console | App | \`${consoleApp.guid}\` | no: it stays`);
    for (const text of [jsonText, markdown, run.output]) {
      expect(text.includes(OPENAI_KEY)).toBe(false);
      expect(text.includes(emulator.apiKey)).toBe(false);
    }
  }, 300_000);
});
