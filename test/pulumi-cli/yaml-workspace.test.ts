/**
 * examples/yaml-workspace on the real Pulumi CLI (`PulumiCliEngine`: the program as an Automation API inline
 * program, a file backend, the passphrase secrets provider) against the emulator loaded with the example's
 * fixtures.yaml, counting every request: preview (the plan per URN, the component's children under the
 * component's type), up, an edit of workspace.yaml that updates two objects in place, refresh after an
 * out-of-band change, and destroy, after which the emulator holds nothing of the program (checked through
 * the API). Without a CLI the suite is skipped with the reason printed (required under CI=true:
 * test/pulumi-cli/harness.ts). test/workspace/yaml-workspace.test.ts runs the same example, and its failure
 * cases, through LocalEngine.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { type CliResult, PulumiCliEngine, installPackageCopy } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { cliName, pulumiCliFor } from "./harness";

const EXAMPLE = join(__dirname, "../../examples/yaml-workspace");
const OPENAI_KEY = "sk-cli-example-openai-key-0123456789";
const TIMEOUT = 180_000;

/** The component's children: kind and resource name (`acme-<logical name>`). */
const CHILDREN: [kind: string, name: string][] = [
  ["ProviderConnection", "acme-openai-main"],
  ["App", "acme-support"],
  ["App", "acme-onboarding"],
  ["Skill", "acme-search"],
  ["Model", "acme-gpt-4o"],
  ["Workflow", "acme-ticket-intake"],
  ["Workflow", "acme-first-steps"],
  ["Dataset", "acme-golden-summaries"],
  ["Eval", "acme-summary-match"],
  ["Eval", "acme-summary-toxicity"],
  ["Experiment", "acme-summarize-ab"],
  ["ContextSource", "acme-handbook"],
];
/** A child's URN: its type is qualified by its parent's, the Workspace component. */
const urn = (kind: string, name: string) =>
  `urn:pulumi:dev::yaml-workspace::gms:index:Workspace$pulumi-nodejs:dynamic/gms:${kind}::${name}`;
/** Every child's URN with `line`, except those given (by resource name). */
const all = (line: string, except: Record<string, string> = {}) =>
  Object.fromEntries(CHILDREN.map(([kind, name]) => [urn(kind, name), except[name] ?? line]));
/** The plan per URN: `op [changes] {replaces}`. */
const planByUrn = (result: CliResult) =>
  Object.fromEntries(
    result.steps.map((step) => [
      step.urn,
      `${step.op}${step.changes.length ? ` [${step.changes.join(", ")}]` : ""}${step.replaces.length ? ` {${step.replaces.join(", ")}}` : ""}`,
    ]),
  );

const cli = pulumiCliFor("test/pulumi-cli/yaml-workspace.test.ts");

describe.skipIf(cli === undefined)(`examples/yaml-workspace on the real Pulumi CLI against the emulator (${cliName(cli)})`, () => {
  let dir: string;
  let emulator: RunningEmulator;
  let engine: PulumiCliEngine;
  const requests: RequestLogEntry[] = [];
  const output: string[] = [];
  const writes = () => requests.filter((entry) => entry.method !== "GET").map((entry) => `${entry.method} ${entry.path}`);
  const yamlFile = () => join(dir, "workspace.yaml");
  const editYaml = (edit: (text: string) => string) => {
    const before = readFileSync(yamlFile(), "utf8");
    const after = edit(before);
    expect(after).not.toBe(before);
    writeFileSync(yamlFile(), after);
  };
  const api = async <T = any>(method: string, path: string, body?: unknown): Promise<T> => {
    const answer = await callOverHttp(emulator, method, path, body);
    expect(answer.status, `${method} ${path}`).toBeLessThan(300);
    return answer.body as T;
  };
  const list = async (path: string): Promise<{ guid: string; name: string }[]> => {
    const body = await api("GET", path);
    return Array.isArray(body) ? body : body.data;
  };
  const appNames = async () => (await list("/apps")).map((app) => app.name).sort();
  /** Runs an operation; the request log then holds that operation's requests only. */
  const run = (operation: "preview" | "up" | "refresh" | "destroy") => {
    requests.length = 0;
    return engine[operation]();
  };
  /** The stack outputs of the last up: the GUIDs of the children by section and logical name. */
  let guids: Record<string, Record<string, string>> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gms-cli-yaml-workspace-"));
    cpSync(EXAMPLE, dir, { recursive: true, filter: (source) => !relative(EXAMPLE, source).split(/[\\/]/).includes("node_modules") });
    installPackageCopy(dir);
    emulator = await startEmulator({
      port: 0,
      fixtures: join(EXAMPLE, "fixtures.yaml"),
      onRequestComplete: (entry) => requests.push(entry),
    });
    engine = new PulumiCliEngine({
      cli: cli!,
      programDir: dir,
      stateDir: join(dir, "state"),
      project: "yaml-workspace",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey }, openaiKey: { secret: OPENAI_KEY } },
      secretsPassphrase: "yaml workspace cli passphrase",
      log: (line) => output.push(line),
    });
  });

  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    "previews every entry as a create of a child of the component, reading but never writing",
    async () => {
      const result = await run("preview");
      expect(planByUrn(result)).toEqual(all("create"));
      expect(result.counts).toMatchObject({ create: CHILDREN.length, same: 0, update: 0, replace: 0, delete: 0 });
      expect(writes()).toEqual([]);
      expect(requests.length).toBeGreaterThan(0); // the names it looks up, and the App allowance
      expect(await appNames()).toEqual(["Support Bot"]);
    },
    TIMEOUT,
  );

  it(
    "up creates them, references resolved, and returns the GUIDs by section and logical name",
    async () => {
      const result = await run("up");
      expect(planByUrn(result)).toEqual(all("create"));
      const order = result.steps.map((step) => step.name);
      const before = (first: string, second: string) =>
        expect(order.indexOf(first), `${first} before ${second}`).toBeLessThan(order.indexOf(second));
      before("acme-openai-main", "acme-gpt-4o");
      before("acme-support", "acme-ticket-intake");
      before("acme-onboarding", "acme-first-steps");
      before("acme-golden-summaries", "acme-summary-match");
      guids = Object.fromEntries(Object.entries(result.outputs).map(([name, value]) => [name, value.value as Record<string, string>]));

      expect(await appNames()).toEqual(["Onboarding", "Support", "Support Bot"]);
      const apps = await list("/apps");
      const appGuid = (name: string) => apps.find((app) => app.name === name)!.guid;
      expect(guids.apps).toEqual({ support: appGuid("Support"), onboarding: appGuid("Onboarding") });
      expect(await api("GET", `/models/${guids.models!["gpt-4o"]}`)).toMatchObject({
        llm: "gpt-4o",
        provider_guid: guids.providerConnections!["openai-main"],
      });
      expect(await api("GET", `/workflows/${guids.workflows!["ticket-intake"]}`)).toMatchObject({
        name: "Ticket intake",
        app: appGuid("Support"),
      });
      expect(await api("GET", `/workflows/${guids.workflows!["first-steps"]}`)).toMatchObject({
        name: "First steps",
        app: appGuid("Onboarding"),
      });
      expect(await api("GET", `/evals/${guids.evals!["summary-match"]}`)).toMatchObject({
        dataset: { guid: guids.datasets!["golden-summaries"] },
        eval_types: [{ name: "Exact match" }],
      });
      expect(result.outputs.handbookStatus).toEqual({ value: "indexed", secret: false });
      expect(output.join("\n").includes(OPENAI_KEY)).toBe(false);
      expect(readFileSync(engine.checkpointFile(), "utf8").includes(OPENAI_KEY)).toBe(false);
    },
    TIMEOUT,
  );

  it(
    "a preview without changes: every URN the same, no write",
    async () => {
      const result = await run("preview");
      expect(planByUrn(result)).toEqual(all("same"));
      expect(writes()).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "an edit of workspace.yaml updates the two objects in place and nothing else",
    async () => {
      editYaml((text) =>
        text
          .replace("name: Ticket intake", "name: Ticket triage")
          .replace("description: Customer support assistants", "description: Support on every channel"),
      );
      const expected = all("same", { "acme-support": "update [description]", "acme-ticket-intake": "update [name]" });
      expect(planByUrn(await run("preview"))).toEqual(expected);
      expect(writes()).toEqual([]);
      const result = await run("up");
      expect(planByUrn(result)).toEqual(expected);
      // Independent of each other: the CLI sends them in parallel, in either order.
      expect(writes().sort()).toEqual(
        [`PUT /v1/apps/${guids.apps!.support}`, `PUT /v1/workflows/${guids.workflows!["ticket-intake"]}`].sort(),
      );
      expect(await api("GET", `/apps/${guids.apps!.support}`)).toMatchObject({ name: "Support", description: "Support on every channel" });
      expect(await api("GET", `/workflows/${guids.workflows!["ticket-intake"]}`)).toMatchObject({ name: "Ticket triage" });
      // Same objects: an update, not a replacement.
      expect(result.outputs.apps!.value).toEqual(guids.apps);
      expect(result.outputs.workflows!.value).toEqual(guids.workflows);
    },
    TIMEOUT,
  );

  it(
    "refresh reads an out-of-band rename into the state; the next up puts the name back",
    async () => {
      const workflow = guids.workflows!["first-steps"]!;
      await api("PUT", `/workflows/${workflow}`, { name: "First steps (renamed in the console)" });
      const refreshed = await run("refresh");
      expect(planByUrn(refreshed)).toEqual(all("same", { "acme-first-steps": "refresh [name, updatedAt]" }));
      expect(writes()).toEqual([]);

      const result = await run("up");
      expect(planByUrn(result)).toEqual(all("same", { "acme-first-steps": "update [name]" }));
      expect(writes()).toEqual([`PUT /v1/workflows/${workflow}`]);
      expect(await api("GET", `/workflows/${workflow}`)).toMatchObject({ name: "First steps" });
    },
    TIMEOUT,
  );

  it(
    "destroy deletes every object the workspace declared, and only those (checked through the API)",
    async () => {
      const result = await run("destroy");
      expect(planByUrn(result)).toEqual(all("delete"));
      expect(writes().every((write) => write.startsWith("DELETE "))).toBe(true);
      expect(await appNames()).toEqual(["Support Bot"]);
      for (const path of ["/providers", "/models", "/datasets", "/evals", "/experiments"]) expect(await list(path), path).toEqual([]);
      expect((await list("/skills")).map((skill) => skill.name)).toEqual(["web-search"]);
      const workspace = await api<{ guid: string }>("GET", "/workspaces/current");
      const contexts = await list(`/workspaces/${workspace.guid}/context`);
      for (const context of contexts) expect(await list(`/contexts/${context.guid}/context_sources`), context.name).toEqual([]);
      // Every object the program had answers 404 by GUID.
      const routes: Record<string, (guid: string) => string> = {
        apps: (guid) => `/apps/${guid}`,
        providerConnections: (guid) => `/providers/${guid}`,
        models: (guid) => `/models/${guid}`,
        workflows: (guid) => `/workflows/${guid}`,
        datasets: (guid) => `/datasets/${guid}`,
        evals: (guid) => `/evals/${guid}`,
        experiments: (guid) => `/experiments/${guid}`,
        skills: (guid) => `/skills/${guid}`,
      };
      let checked = 0;
      for (const [section, route] of Object.entries(routes)) {
        for (const guid of Object.values(guids[section] ?? {})) {
          expect((await callOverHttp(emulator, "GET", route(guid))).status, `${section} ${guid}`).toBe(404);
          checked += 1;
        }
      }
      expect(checked).toBe(CHILDREN.length - 1); // all but the ContextSource, whose route needs its Context
    },
    TIMEOUT,
  );
});
