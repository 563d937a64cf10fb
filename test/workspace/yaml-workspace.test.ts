/**
 * examples/yaml-workspace end to end: the example (copied to a throw-away directory with a copy of the
 * built package) through the offline engine and the real dynamic-provider host, against the emulator
 * loaded with the example's fixtures.yaml, counting every request. Each `it` builds on the previous
 * one's state: create, re-run, an in-place change, a replacing change, a removed entry, then the
 * failures that must cost no write (a full workspace, a name that resolves to nothing, a bad file).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { EngineError, type EngineResult, LocalEngine, installPackageCopy } from "../../src/testing";

const EXAMPLE = join(__dirname, "../../examples/yaml-workspace");
const OPENAI_KEY = "sk-example-openai-key-0123456789";

/** Each step as `op Kind name [changes] {replaces}`, in the engine's order. */
const plan = (result: EngineResult) =>
  result.steps
    .filter((step) => step.op !== "same")
    .map(
      (step) =>
        `${step.op} ${step.type.split(":").at(-1)} ` +
        `${step.name}${step.changes.length ? ` [${step.changes.join(", ")}]` : ""}${step.replaces.length ? ` {${step.replaces.join(", ")}}` : ""}`,
    );

describe("examples/yaml-workspace through the offline engine against the emulator", () => {
  let dir: string;
  let emulator: RunningEmulator;
  let engine: LocalEngine;
  const requests: RequestLogEntry[] = [];
  const log: string[] = [];
  const writes = () => requests.filter((entry) => entry.method !== "GET").map((entry) => `${entry.method} ${entry.path}`);
  const yamlFile = () => join(dir, "workspace.yaml");
  const editYaml = (edit: (text: string) => string) => {
    const before = readFileSync(yamlFile(), "utf8");
    const after = edit(before);
    expect(after).not.toBe(before);
    writeFileSync(yamlFile(), after);
  };
  const api = async <T = any>(path: string): Promise<T> => {
    const response = await fetch(`${emulator.url}${path}`, { headers: { authorization: `Bearer ${emulator.apiKey}` } });
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  };
  const appNames = async () => (await api<{ data: { name: string }[] }>("/apps")).data.map((app) => app.name).sort();
  /** Runs an operation; the request log then holds that operation's requests only. */
  const run = async (operation: "preview" | "up" | "destroy") => {
    requests.length = 0;
    log.length = 0;
    return engine[operation]();
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gms-yaml-workspace-"));
    cpSync(EXAMPLE, dir, { recursive: true, filter: (source) => !relative(EXAMPLE, source).split(/[\\/]/).includes("node_modules") });
    installPackageCopy(dir);
    emulator = await startEmulator({
      port: 0,
      fixtures: join(EXAMPLE, "fixtures.yaml"),
      onRequestComplete: (entry) => requests.push(entry),
    });
    engine = new LocalEngine({
      programDir: dir,
      stateFile: join(dir, "state/dev.json"),
      project: "yaml-workspace",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey }, openaiKey: { secret: OPENAI_KEY } },
      secretsPassphrase: "yaml workspace passphrase",
      log: (line) => log.push(line),
    });
  });

  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const CREATES = [
    "create ProviderConnection acme-openai-main",
    "create App acme-support",
    "create App acme-onboarding",
    "create Skill acme-search",
    "create Model acme-gpt-4o",
    "create Workflow acme-ticket-intake",
    "create Workflow acme-first-steps",
    "create Dataset acme-golden-summaries",
    "create Eval acme-summary-match",
    "create Eval acme-summary-toxicity",
    "create Experiment acme-summarize-ab",
    "create ContextSource acme-handbook",
  ];

  it("previews every entry as a create, reading but never writing", async () => {
    const result = await run("preview");
    expect(plan(result).sort()).toEqual([...CREATES].sort());
    expect(writes()).toEqual([]);
    expect(requests.length).toBeGreaterThan(0);
    expect(await appNames()).toEqual(["Support Bot"]);
  });

  /** The stack outputs of the last up: the GUIDs of the children by section and logical name. */
  let guids: Record<string, Record<string, string>> = {};
  const remember = (result: EngineResult) => {
    guids = Object.fromEntries(Object.entries(result.outputs).map(([name, output]) => [name, output.value as Record<string, string>]));
  };

  it("up creates them with the references resolved, dependencies first", async () => {
    const result = await run("up");
    const order = plan(result);
    expect([...order].sort()).toEqual([...CREATES].sort());
    const before = (a: string, b: string) => expect(order.indexOf(`create ${a}`)).toBeLessThan(order.indexOf(`create ${b}`));
    before("ProviderConnection acme-openai-main", "Model acme-gpt-4o");
    before("App acme-support", "Workflow acme-ticket-intake");
    before("App acme-onboarding", "Workflow acme-first-steps");
    before("Dataset acme-golden-summaries", "Eval acme-summary-match");
    remember(result);

    expect(await appNames()).toEqual(["Onboarding", "Support", "Support Bot"]);
    const apps = (await api<{ data: { guid: string; name: string }[] }>("/apps")).data;
    const appGuid = (name: string) => apps.find((app) => app.name === name)!.guid;
    expect(guids.apps).toEqual({ support: appGuid("Support"), onboarding: appGuid("Onboarding") });
    const actions = await api<{ guid: string; name: string }[]>(`/apps/${appGuid("Support Bot")}/actions`);
    const actionGuid = (name: string) => actions.find((action) => action.name === name)!.guid;

    expect(await api(`/providers/${guids.providerConnections!["openai-main"]}`)).toMatchObject({
      nickname: "OpenAI (main)",
      default: true,
    });
    expect(await api(`/models/${guids.models!["gpt-4o"]}`)).toMatchObject({
      llm: "gpt-4o",
      provider_name: "openai",
      provider_guid: guids.providerConnections!["openai-main"],
      default: true,
    });
    expect(await api(`/workflows/${guids.workflows!["ticket-intake"]}`)).toMatchObject({ name: "Ticket intake", app: appGuid("Support") });
    expect(await api(`/workflows/${guids.workflows!["first-steps"]}`)).toMatchObject({ name: "First steps", app: appGuid("Onboarding") });
    const dataset = guids.datasets!["golden-summaries"]!;
    expect(await api(`/datasets/${dataset}`)).toMatchObject({ name: "Golden summaries", app: appGuid("Support Bot") });
    expect(await api(`/evals/${guids.evals!["summary-match"]}`)).toMatchObject({
      action: actionGuid("Summarize"),
      dataset: { guid: dataset },
      eval_types: [{ name: "Exact match" }],
      data_type: "DATASET",
    });
    expect(await api(`/evals/${guids.evals!["summary-toxicity"]}`)).toMatchObject({
      action: actionGuid("Summarize"),
      dataset: null,
      eval_types: [{ name: "Toxicity", metadata: { variables: [{ name: "threshold", value: 0.2 }] } }],
      sampling_rate: 0.25,
      alert_on_fail: true,
    });
    expect(await api(`/experiments/${guids.experiments!["summarize-ab"]}`)).toMatchObject({
      app: appGuid("Support Bot"),
      primary_action: actionGuid("Summarize"),
      secondary_action: actionGuid("Summarize v2"),
    });
    expect(await api(`/skills/${guids.skills!.search}`)).toMatchObject({ name: "web-search", type: "web" });
    expect(result.outputs.handbookStatus).toEqual({ value: "indexed", secret: false });
    expect(log.join("\n")).not.toContain(OPENAI_KEY);
    expect(readFileSync(join(dir, "state/dev.json"), "utf8")).not.toContain(OPENAI_KEY);
  });

  it("a second run changes nothing and writes nothing", async () => {
    const result = await run("up");
    expect(plan(result)).toEqual([]);
    expect(result.counts.same).toBe(CREATES.length);
    expect(writes()).toEqual([]);
  });

  it("an in-place change updates the two objects and nothing else", async () => {
    editYaml((text) =>
      text
        .replace("name: Ticket intake", "name: Ticket triage")
        .replace("description: Customer support assistants", "description: Support on every channel"),
    );
    const expected = ["update App acme-support [description]", "update Workflow acme-ticket-intake [name]"];
    expect(plan(await run("preview"))).toEqual(expected);
    expect(writes()).toEqual([]);
    expect(plan(await run("up"))).toEqual(expected);
    expect(writes()).toEqual([`PUT /v1/apps/${guids.apps!.support}`, `PUT /v1/workflows/${guids.workflows!["ticket-intake"]}`]);
    expect(await api(`/apps/${guids.apps!.support}`)).toMatchObject({ name: "Support", description: "Support on every channel" });
    expect(await api(`/workflows/${guids.workflows!["ticket-intake"]}`)).toMatchObject({ name: "Ticket triage" });
  });

  it("a replace-only change replaces the Eval: the new one is created, then the old one deleted", async () => {
    editYaml((text) => text.replace("samplingRate: 0.25", "samplingRate: 0.5"));
    const expected = ["replace Eval acme-summary-toxicity [samplingRate] {samplingRate}"];
    expect(plan(await run("preview"))).toEqual(expected);
    expect(writes()).toEqual([]);
    const old = guids.evals!["summary-toxicity"]!;
    const result = await run("up");
    expect(plan(result)).toEqual(expected);
    remember(result);
    const replacement = guids.evals!["summary-toxicity"]!;
    expect(replacement).not.toBe(old);
    expect(writes()).toEqual(["POST /v1/evals", `DELETE /v1/evals/${old}`]);
    expect(await api(`/evals/${replacement}`)).toMatchObject({ name: "Live summaries stay polite", sampling_rate: 0.5 });
  });

  it("removing an entry deletes its object", async () => {
    editYaml((text) => text.replace("  first-steps:\n    name: First steps\n    app: onboarding\n", ""));
    const old = guids.workflows!["first-steps"]!;
    expect(plan(await run("preview"))).toEqual(["delete Workflow acme-first-steps"]);
    expect(writes()).toEqual([]);
    const result = await run("up");
    expect(plan(result)).toEqual(["delete Workflow acme-first-steps"]);
    remember(result);
    expect(writes()).toEqual([`DELETE /v1/workflows/${old}`]);
    expect(guids.workflows).toEqual({ "ticket-intake": expect.any(String) });
    expect(plan(await run("up"))).toEqual([]);
  });

  /** The failure of a run, which must have written nothing. */
  const failure = async (operation: "preview" | "up") => {
    const error = (await run(operation).then(
      () => undefined,
      (caught: unknown) => caught,
    )) as EngineError;
    expect(error).toBeInstanceOf(EngineError);
    expect(writes()).toEqual([]);
    return error;
  };
  /** `workspace.yaml:<line>:<column>` of `token` on the first line of the file that contains `line`. */
  const at = (line: string, token: string) => {
    const lines = readFileSync(yamlFile(), "utf8").split("\n");
    const index = lines.findIndex((candidate) => candidate.includes(line));
    expect(index).toBeGreaterThanOrEqual(0);
    expect(lines[index]).toContain(token);
    return `workspace.yaml:${index + 1}:${lines[index]!.indexOf(token) + 1}`;
  };

  it("Apps beyond the workspace's allowance fail the preview (and up) before any write", async () => {
    const original = readFileSync(yamlFile(), "utf8");
    // The workspace allows 5 Apps and has 3 (Support Bot, and Support and Onboarding that this stack
    // manages, which are not counted again): 2 of the 3 new ones fit.
    editYaml((text) =>
      text.replace(
        "\nproviderConnections:",
        "  billing:\n    name: Billing\n  sales:\n    name: Sales\n  returns:\n    name: Returns\n\nproviderConnections:",
      ),
    );
    for (const operation of ["preview", "up"] as const) {
      const error = await failure(operation);
      expect(error.message).toBe(
        `${at("name: Returns", "name")}: apps.returns: the workspace allows 5 Apps and has 3: ` +
          `the 3 new App(s) declared here would make 6. Would not fit: returns ("Returns"). ` +
          "Remove them, delete Apps the workspace no longer needs, or raise the workspace's limit; nothing was created",
      );
    }
    expect(await appNames()).toEqual(["Onboarding", "Support", "Support Bot"]);
    writeFileSync(yamlFile(), original);
  });

  it("a name that resolves to nothing fails the preview with its position, before any write", async () => {
    const original = readFileSync(yamlFile(), "utf8");
    editYaml((text) =>
      text
        .replace("primaryAction: Summarize", "primaryAction: Sumarize")
        .replace("context: Handbook", "context: Handbok")
        .replace("app: Support Bot # an App", "app: Support Bott # an App")
        .replace("evalTypes: [Exact match]", "evalTypes: [Exact matches]")
        .replace("type: web", "type: webs"),
    );
    const error = await failure("preview");
    // A WorkspaceSpecError is a RunError: the engine, as the CLI, reports its message alone (no stack).
    expect(error.message.split("\n")).toEqual([
      `${at("app: Support Bott", "Support Bott")}: datasets.golden-summaries.app: no App "Support Bott": it is not declared under apps ` +
        `(declared: "support", "onboarding") and the workspace has no App of that name (it has: "Support Bot", "Support", "Onboarding")`,
      `${at("primaryAction:", "Sumarize")}: experiments.summarize-ab.primaryAction: App "Support Bot" has no Action ` +
        `"Sumarize" (it has: "Summarize", "Summarize v2", "Classify"); Actions are configured outside the public interface`,
      `${at("context: Handbok", "Handbok")}: contextSources.handbook.context: no Context "Handbok" in ` +
        `the workspace (it has: "Handbook", "FAQ"); Contexts are created outside the public interface`,
      `${at("evalTypes: [Exact matches]", "Exact matches")}: evals.summary-match.evalTypes.0: ` +
        `no Eval type "Exact matches" (available: "Exact match", "Toxicity")`,
      `${at("type: webs", "webs")}: skills.search.type: no Skill type "webs" in the ` +
        `workspace (it has: "web"); Skill types are configured outside the public interface`,
    ]);
    expect(log.at(-1)).toBe(`error: ${error.message}`);
    writeFileSync(yamlFile(), original);
  });

  it("a bad file fails the program before any request, with file, line and column", async () => {
    const original = readFileSync(yamlFile(), "utf8");
    editYaml((text) => text.replace("    llm: gpt-4o\n", "    llm: gpt-4o\n    temperature: 0.2\n"));
    const error = await failure("preview");
    expect(error.message).toBe(`${at("temperature:", "temperature")}: models.gpt-4o.temperature: unknown key`);
    expect(requests).toEqual([]);
    writeFileSync(yamlFile(), original);
  });

  it("an empty document fails the program before any request instead of deleting everything", async () => {
    const original = readFileSync(yamlFile(), "utf8");
    writeFileSync(yamlFile(), "# yaml-language-server: $schema=node_modules/pulumi-gms/src/workspace/workspace.schema.json\n");
    for (const operation of ["preview", "up"] as const) {
      const error = await failure(operation);
      expect(error.message).toBe(
        "workspace.yaml:1:1: declares no resources: an empty workspace would delete everything " +
          "this stack manages; remove the component (or the stack) to do that on purpose",
      );
      expect(requests).toEqual([]);
      expect(error.result?.steps).toEqual([]);
    }
    writeFileSync(yamlFile(), original);
    expect(plan(await run("preview"))).toEqual([]);
  });

  it("destroy deletes every object the workspace declared, and only those", async () => {
    const result = await run("destroy");
    expect(result.counts.delete).toBe(CREATES.length - 1);
    expect(await appNames()).toEqual(["Support Bot"]);
    expect((await api<{ data: unknown[] }>("/evals")).data).toEqual([]);
    expect((await api<{ data: { name: string }[] }>("/skills")).data.map((skill) => skill.name)).toEqual(["web-search"]);
  });
});
