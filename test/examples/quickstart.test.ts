/**
 * examples/quickstart through the offline engine against the emulator (seeded with the example's own
 * fixtures.yaml), over the runs a user makes: preview, up, up without changes, an in-place update, a
 * rotated key, refresh after an out-of-band change, destroy. Each run's plan is asserted, API writes are
 * counted with the emulator's `onRequestComplete`, and the end state is checked through the API, not
 * through the engine's state. The program runs from a copy of the example with the built package
 * installed as a copy in its node_modules, as `npm install --install-links` leaves it. Also: the example
 * type-checks with its own tsconfig, and `npm run demo`'s script runs to the end.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectNothingOfTheQuickstart, serviceOf, startQuickstart } from "./quickstart-service";
import { typeCheckProgram, typeCheckScript } from "./type-check";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";
import type { RunningEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { type EngineResult, LocalEngine, UNKNOWN } from "../../src/testing";

const ROOT = join(__dirname, "..", "..");
const cli = pulumiCliFor("test/examples/quickstart.test.ts");
const PASSPHRASE = "quickstart test passphrase";
const FIRST_KEY = "sk-test-first-0001";
const ROTATED_KEY = "sk-test-rotated-0002";
const KINDS = ["App", "Workflow", "ProviderConnection", "Model", "Dataset", "Eval", "Experiment", "Skill", "ContextSource"];
const SHIM_FILES: Record<string, string> = {
  App: "app",
  Workflow: "workflow",
  ProviderConnection: "provider-connection",
  Model: "model",
  Dataset: "dataset",
  Eval: "eval",
  Experiment: "experiment",
  Skill: "skill",
  ContextSource: "context-source",
};

/** `op name [changes]` per step, unchanged ones included. */
const plan = (result: EngineResult) =>
  result.steps.map((step) => `${step.op} ${step.name}${step.changes.length ? ` [${step.changes.join(", ")}]` : ""}`);
const changing = (result: EngineResult) => plan(result).filter((line) => !line.startsWith("same "));

interface StateDocument {
  resources: { urn: string; type: string; name: string; id: string; inputs: Record<string, unknown>; outputs: Record<string, unknown> }[];
}

describe("examples/quickstart through the offline engine against the emulator", () => {
  let work: string;
  let programDir: string;
  let emulator: RunningEmulator;
  let engine: LocalEngine;
  const requests: RequestLogEntry[] = [];
  const writes = () => requests.filter((entry) => entry.method !== "GET").map((entry) => `${entry.method} ${entry.path}`);
  /** Every GUID the program's objects had, by kind, to check each one is gone at the end. */
  const seen = new Map<string, Set<string>>();

  const { api, list } = serviceOf(() => emulator);
  const state = (): StateDocument => JSON.parse(readFileSync(join(work, "state", "dev.json"), "utf8"));
  const remember = () => {
    for (const resource of state().resources) {
      const kind = resource.type.split(":").pop()!;
      if (!seen.has(kind)) seen.set(kind, new Set());
      seen.get(kind)!.add(resource.id);
    }
  };
  const engineWith = (config: Record<string, string | { secret: string }> = {}) =>
    new LocalEngine({
      ...engine.options,
      config: { ...engine.options.config, ...config },
    });

  beforeAll(async () => {
    ({ work, programDir, emulator } = await startQuickstart("gms-quickstart", requests));
    engine = new LocalEngine({
      programDir,
      stateFile: join(work, "state", "dev.json"),
      project: "gms-quickstart",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey }, openaiKey: { secret: FIRST_KEY } },
      secretsPassphrase: PASSPHRASE,
      log: () => undefined,
    });
  });

  afterAll(async () => {
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("preview: all nine kinds to create, lookups resolved, no API write and no state", async () => {
    const result = await engine.preview();
    expect(result.counts).toMatchObject({ create: 9, same: 0, update: 0, replace: 0, delete: 0 });
    expect(result.steps.map((step) => step.type.split(":").pop()).sort()).toEqual([...KINDS].sort());
    // Lookups ran (the Data records), unknown outputs stay unknown, the secret stays a secret.
    expect(result.outputs.datasetRecords).toEqual({ value: 3, secret: false });
    expect(result.outputs.appGuid).toEqual({ value: UNKNOWN, secret: false });
    expect(result.outputs.providerKey).toEqual({ value: FIRST_KEY, secret: true });
    expect(writes()).toEqual([]);
    expect(existsSync(join(work, "state", "dev.json"))).toBe(false);
  });

  it("up: all creates, wired together; the __provider texts are short requires of the installed copy", async () => {
    requests.length = 0;
    const result = await engine.up();
    expect(result.counts).toMatchObject({ create: 9, same: 0 });
    expect(changing(result)).toHaveLength(9);
    remember();

    const outputs = Object.fromEntries(Object.entries(result.outputs).map(([name, output]) => [name, output.value]));
    expect(outputs).toMatchObject({
      appSlug: "helpdesk",
      appDescription: "Answers customer questions",
      workflowSlug: "triage",
      datasetRecords: 3,
      evalDataType: "DATASET",
      experimentStatus: "active",
      handbookStatus: "indexed",
      providerKey: FIRST_KEY,
    });
    expect(result.outputs.providerKey!.secret).toBe(true);
    expect(outputs.modelConnection).toBe(outputs.connectionGuid);
    expect(outputs.handbookDocuments).toBeGreaterThan(1);

    // What the service now holds, read through the API.
    const helpdesk = (await list("/apps")).find((app) => app.name === "Helpdesk")!;
    expect(helpdesk.guid).toBe(outputs.appGuid);
    expect((await list(`/apps/${helpdesk.guid}/workflows`)).map((workflow) => workflow.name)).toEqual(["Triage"]);
    const support = (await list("/apps")).find((app) => app.name === "Support")!;
    const actions = await list(`/apps/${support.guid}/actions`);
    const [experiment] = await list("/experiments");
    expect(experiment).toMatchObject({ app: support.guid, primary_action: actions.find((a) => a.name === "Draft reply")!.guid });
    const dataset = await list(`/datasets/${outputs.datasetGuid}/data`);
    expect(dataset.map((record) => record.guid).sort()).toEqual(
      (await list(`/apps/${support.guid}/data`)).map((record) => record.guid).sort(),
    );

    // Each __provider is the one-line require of the kind's shim, resolved from the program's node_modules.
    // The serializer names it through the package's `exports`: `pulumi-gms/shims/<kind>` when it finds the
    // package beside the SDK (an npm install), `pulumi-gms/dist/shims/<kind>.js` here, where the SDK is
    // linked from the repository; both subpaths are exported.
    const resources = state().resources;
    expect(resources.map((resource) => resource.type.split(":").pop()).sort()).toEqual([...KINDS].sort());
    for (const resource of resources) {
      const kind = resource.type.split(":").pop()!;
      const text = resource.outputs.__provider as string;
      const shim = SHIM_FILES[kind]!;
      expect(text, kind).toMatch(new RegExp(`require\\("pulumi-gms/(shims/${shim}|dist/shims/${shim}\\.js)"\\)`));
      expect(text.match(/require\(/g), kind).toHaveLength(1);
      expect(text.length, kind).toBeLessThan(400);
      expect(text, kind).not.toContain(ROOT);
      expect(resource.inputs.__provider).toBe(text);
    }
    const installed = createRequire(join(programDir, "package.json")).resolve("pulumi-gms/dist/shims/app.js");
    expect(realpathSync(installed)).toBe(join(realpathSync(programDir), "node_modules", "pulumi-gms", "dist", "shims", "app.js"));
    expect(lstatSync(join(programDir, "node_modules", "pulumi-gms")).isSymbolicLink()).toBe(false);
    // Secrets never reach the state file in plaintext: the key, nor the signed URL of the uploaded handbook.
    const stateText = readFileSync(join(work, "state", "dev.json"), "utf8");
    expect(stateText).not.toContain(FIRST_KEY);
    expect(stateText).not.toMatch(/signature=/);
  });

  it("up again: no changes and zero API writes", async () => {
    requests.length = 0;
    const result = await engine.up();
    expect(result.counts).toMatchObject({ same: 9, create: 0, update: 0, replace: 0, delete: 0 });
    expect(writes()).toEqual([]);
  });

  it("a new App description: previewed and applied as one in-place update", async () => {
    const described = engineWith({ appDescription: "Answers customer questions, in English and German" });
    requests.length = 0;
    const preview = await described.preview();
    expect(changing(preview)).toEqual(["update helpdesk [description]"]);
    expect(preview.counts.same).toBe(8);
    expect(writes()).toEqual([]);

    const before = state().resources.find((resource) => resource.name === "helpdesk")!.id;
    const result = await described.up();
    expect(changing(result)).toEqual(["update helpdesk [description]"]);
    expect(writes()).toEqual([`PUT /v1/apps/${before}`]);
    expect((await api("GET", `/apps/${before}`)).body.description).toBe("Answers customer questions, in English and German");
    expect(state().resources.find((resource) => resource.name === "helpdesk")!.id).toBe(before);
  });

  it("a rotated provider key replaces the connection and the Model that holds it, new before old", async () => {
    const rotated = engineWith({ appDescription: "Answers customer questions, in English and German", openaiKey: { secret: ROTATED_KEY } });
    const old = Object.fromEntries(state().resources.map((resource) => [resource.name, resource.id]));
    requests.length = 0;
    const preview = await rotated.preview();
    // The Model is replaced for its key, and since it must be linked to the new connection (`__linkTo`, its GUID).
    expect(changing(preview)).toEqual(["replace openai [key]", "replace gpt-4o-mini [__linkTo, key]"]);
    expect(preview.steps.filter((step) => step.op === "replace").map((step) => step.replaces)).toEqual([["key"], ["key", "providerGuid"]]);
    expect(writes()).toEqual([]);

    const result = await rotated.up();
    expect(changing(result)).toEqual(["replace openai [key]", "replace gpt-4o-mini [__linkTo, key]"]);
    expect(writes()).toEqual([
      "POST /v1/providers",
      expect.stringMatching(/^PUT \/v1\/providers\//), // the nickname: create takes none
      "POST /v1/models",
      `DELETE /v1/models/${old["gpt-4o-mini"]}`,
      `DELETE /v1/providers/${old.openai}`,
    ]);
    remember();
    const fresh = Object.fromEntries(state().resources.map((resource) => [resource.name, resource.id]));
    expect(fresh.openai).not.toBe(old.openai);
    expect(result.outputs.connectionGuid!.value).toBe(fresh.openai);
    expect(result.outputs.modelConnection!.value).toBe(fresh.openai);
    expect((await list("/providers")).map((provider) => provider.guid)).toEqual([fresh.openai]);
    expect((await api("GET", `/models/${old["gpt-4o-mini"]}`)).status).toBe(404);
    expect(readFileSync(join(work, "state", "dev.json"), "utf8")).not.toContain(ROTATED_KEY);
  });

  it("refresh shows a Workflow renamed outside Pulumi, and the next up puts the name back", async () => {
    const rotated = engineWith({ appDescription: "Answers customer questions, in English and German", openaiKey: { secret: ROTATED_KEY } });
    const workflow = state().resources.find((resource) => resource.name === "triage")!.id;
    expect((await api("PUT", `/workflows/${workflow}`, { name: "Triage (renamed in the console)" })).status).toBe(200);

    requests.length = 0;
    const refreshed = await rotated.refresh();
    expect(changing(refreshed)).toEqual(["refresh triage [name, updatedAt]"]);
    expect(refreshed.counts.same).toBe(8);
    expect(writes()).toEqual([]);
    expect(state().resources.find((resource) => resource.name === "triage")!.outputs.name).toBe("Triage (renamed in the console)");

    const result = await rotated.up();
    expect(changing(result)).toEqual(["update triage [name]"]);
    expect((await api("GET", `/workflows/${workflow}`)).body.name).toBe("Triage");
  });

  it("destroy deletes everything the program made: checked through the API, not the engine's state", async () => {
    const result = await engineWith().destroy();
    expect(result.counts).toMatchObject({ delete: 9, same: 0 });
    // Dependents first: the Eval before its Dataset, the Workflow and the Dataset before their App.
    const order = result.steps.map((step) => step.name);
    expect(order.indexOf("reply-quality")).toBeLessThan(order.indexOf("golden-answers"));
    expect(order.indexOf("golden-answers")).toBeLessThan(order.indexOf("helpdesk"));
    expect(order.indexOf("triage")).toBeLessThan(order.indexOf("helpdesk"));

    // Only the fixtures' own objects are left, and every object the program ever had (replaced ones included) answers 404.
    await expectNothingOfTheQuickstart(() => emulator, seen, 11);
  });

  it("the example type-checks with its own tsconfig.json against the installed package", () => {
    const { output, status } = typeCheckProgram(programDir);
    expect(output).toBe("");
    expect(status).toBe(0);
  }, 60_000);
});

describe("npm run demo", () => {
  it("its script type-checks (it imports the package by its own name, as a user's code would)", () => {
    const { output, status } = typeCheckScript(join(ROOT, "examples", "demo.mts"));
    expect(output).toBe("");
    expect(status).toBe(0);
  }, 60_000);

  it("refuses a --parallel that is not a whole number of at least 1, before starting anything (exit 2)", () => {
    for (const value of ["0", "two"]) {
      const run = spawnSync(process.execPath, [join(ROOT, "examples", "demo.mts"), "--parallel", value], { cwd: ROOT, encoding: "utf8" });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(`--parallel takes a whole number of at least 1 (got ${value})`);
      expect(run.stdout).not.toContain("==>");
    }
  });

  const PHASES = [
    "emulator on SQLite, quickstart fixtures",
    "program: examples/quickstart + the package (a copy)",
    "preview",
    "up",
    "up again: nothing to do",
    "change: App description + rotated provider key",
    "refresh after an out-of-band rename",
    "destroy",
    "workspace after destroy, through the API",
  ];

  /** The demo's whole output and exit code; it checks its own plans and exits non-zero on a wrong one. */
  async function runDemo(args: string[]): Promise<{ code: number | null; output: string }> {
    const child = spawn(process.execPath, [join(ROOT, "examples", "demo.mts"), ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const code = await new Promise<number | null>((done) => child.on("close", done));
    expect(output, output).not.toMatch(/^demo: /m);
    expect(code, output).toBe(0);
    expect([...output.matchAll(/^==> \[(\d)\/9\] (.+)$/gm)].map((match) => match[2])).toEqual(PHASES);
    expect(output).toMatch(/<== up again: nothing to do: [\d.]+ s, \d+ API requests \(0 writes\)/);
    expect(output).toMatch(/^Demo complete: quickstart up took [\d.]+ s wall time/m);
    expect(output).toContain("connections 0, Models 0, Datasets 0, Evals 0, Experiments 0, Context Sources 0");
    expect(output).not.toContain("sk-demo-");
    return { code, output };
  }

  it("refuses an --engine other than cli or local, before starting anything (exit 2)", () => {
    const run = spawnSync(process.execPath, [join(ROOT, "examples", "demo.mts"), "--engine", "terraform"], { cwd: ROOT, encoding: "utf8" });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("--engine takes cli or local (got terraform)");
    expect(run.stdout).not.toContain("==>");
  });

  it("runs the quickstart offline through LocalEngine (--engine local), printing every phase and plan, and exits 0", async () => {
    const { output } = await runDemo(["--engine", "local"]);
    expect(output).toMatch(/^engine: LocalEngine, the offline engine \(--engine local\)$/m);
    for (const line of [
      "Resources: 9 to create",
      "Resources: 9 created",
      "Resources: 9 unchanged",
      "Resources: 1 to update, 2 to replace, 6 unchanged",
      "Resources: 1 updated, 2 replaced, 6 unchanged",
      "  ~ pulumi-nodejs:dynamic/gms:Workflow triage refreshed [name, updatedAt]",
      "Resources: 9 deleted",
      "    providerKey      : [secret]",
    ]) {
      expect(output).toContain(line);
    }
  }, 60_000);

  it.skipIf(!cli)(
    `by default runs on the real Pulumi CLI when there is one, and says so (${cliName(cli)})`,
    async () => {
      const { output } = await runDemo([]);
      expect(output).toContain(`engine: the real Pulumi CLI ${cli?.version} (`);
      // The CLI's own output: its counts include the root stack resource, which LocalEngine does not show.
      for (const line of [
        "+ 10 to create",
        "+ 10 created",
        "10 unchanged",
        "~ 1 to update",
        "+-2 to replace",
        "- 10 deleted",
        "providerKey      : [secret]",
      ]) {
        expect(output).toContain(line);
      }
    },
    180_000,
  );
});
