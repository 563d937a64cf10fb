/**
 * examples/quickstart on the real Pulumi CLI (`PulumiCliEngine`: the program as an Automation API inline
 * program, a file backend, the passphrase secrets provider) against the emulator seeded with the example's
 * own fixtures.yaml, over the runs a user makes: preview, up, a no-op preview, an in-place update, a rotated
 * key (replacements), refresh after an out-of-band rename and an out-of-band delete, then up again, and
 * destroy. Each plan is asserted per URN, API writes are counted with the emulator's `onRequestComplete`,
 * the end state is checked through the API (not through the CLI's state), and no secret reaches the
 * checkpoint, `pulumi stack export` or the CLI's output in plaintext. Without a CLI the suite is skipped
 * with the reason printed (required under CI=true: test/pulumi-cli/harness.ts).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { type CliResult, PulumiCliEngine } from "../../src/testing";
import { readCheckpoint } from "../../src/testing/cli-engine";
import { expectNothingOfTheQuickstart, serviceOf, startQuickstart } from "../examples/quickstart-service";
import { cliName, pulumiCliFor } from "./harness";

const PASSPHRASE = "quickstart cli test passphrase";
const FIRST_KEY = "sk-cli-test-first-0001";
const ROTATED_KEY = "sk-cli-test-rotated-0002";
const NEW_DESCRIPTION = "Answers customer questions, in English and German";
const TIMEOUT = 180_000;

/** The program's resources: kind and resource name. */
const RESOURCES: [kind: string, name: string][] = [
  ["App", "helpdesk"],
  ["Workflow", "triage"],
  ["ProviderConnection", "openai"],
  ["Model", "gpt-4o-mini"],
  ["Dataset", "golden-answers"],
  ["Eval", "reply-quality"],
  ["Experiment", "concise-replies"],
  ["Skill", "web-search"],
  ["ContextSource", "handbook"],
];
const urn = (kind: string, name: string) => `urn:pulumi:dev::gms-quickstart::pulumi-nodejs:dynamic/gms:${kind}::${name}`;
const URN_OF = Object.fromEntries(RESOURCES.map(([kind, name]) => [name, urn(kind, name)]));
/** Every resource's URN with `line`, except those given. */
const all = (line: string, except: Record<string, string> = {}) =>
  Object.fromEntries(RESOURCES.map(([, name]) => [URN_OF[name]!, except[name] ?? line]));

/** The plan per URN: `op [changes] {replaces}`. */
const planByUrn = (result: CliResult) =>
  Object.fromEntries(
    result.steps.map((step) => [
      step.urn,
      `${step.op}${step.changes.length ? ` [${step.changes.join(", ")}]` : ""}${step.replaces.length ? ` {${step.replaces.join(", ")}}` : ""}`,
    ]),
  );
interface CheckpointResource {
  urn: string;
  type: string;
  id?: string;
  custom?: boolean;
  outputs?: Record<string, unknown>;
}

const cli = pulumiCliFor("test/pulumi-cli/quickstart.test.ts");

describe.skipIf(cli === undefined)(`examples/quickstart on the real Pulumi CLI against the emulator (${cliName(cli)})`, () => {
  let work: string;
  let programDir: string;
  let emulator: RunningEmulator;
  let engine: PulumiCliEngine;
  const requests: RequestLogEntry[] = [];
  /** Every line the CLI printed, over all runs. */
  const output: string[] = [];
  const writes = () => requests.filter((entry) => entry.method !== "GET").map((entry) => `${entry.method} ${entry.path}`);
  /** Every GUID the program's objects had, by kind, to check each one is gone at the end. */
  const seen = new Map<string, Set<string>>();

  const { api, list } = serviceOf(() => emulator);
  /** The program's resources in the CLI's checkpoint (the stack and the provider left out). */
  const resources = (): CheckpointResource[] =>
    (
      (existsSync(engine.checkpointFile()) ? (readCheckpoint(engine).checkpoint.latest?.resources ?? []) : []) as CheckpointResource[]
    ).filter((resource) => resource.custom === true && resource.type.startsWith("pulumi-nodejs:dynamic/gms:"));
  const ids = () => Object.fromEntries(resources().map((resource) => [resource.urn.split("::").pop()!, resource.id!]));
  const remember = () => {
    for (const resource of resources()) {
      const kind = resource.type.split(":").pop()!;
      if (!seen.has(kind)) seen.set(kind, new Set());
      seen.get(kind)!.add(resource.id!);
    }
  };
  const engineWith = (config: Record<string, string | { secret: string }> = {}) =>
    new PulumiCliEngine({ ...engine.options, config: { ...engine.options.config, ...config } });
  const changed = () => engineWith({ appDescription: NEW_DESCRIPTION, openaiKey: { secret: ROTATED_KEY } });
  /** Runs `operation`; the request log then holds that operation's requests only. */
  const run = (on: PulumiCliEngine, operation: "preview" | "up" | "refresh" | "destroy") => {
    requests.length = 0;
    return on[operation]();
  };

  beforeAll(async () => {
    ({ work, programDir, emulator } = await startQuickstart("gms-cli-quickstart", requests));
    engine = new PulumiCliEngine({
      cli: cli!,
      programDir,
      stateDir: join(work, "state"),
      project: "gms-quickstart",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey }, openaiKey: { secret: FIRST_KEY } },
      secretsPassphrase: PASSPHRASE,
      log: (line) => output.push(line),
    });
  });

  afterAll(async () => {
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(
    "preview: all nine kinds to create, one step per URN, no API write and no resource in the checkpoint",
    async () => {
      const result = await run(engine, "preview");
      expect(planByUrn(result)).toEqual(all("create"));
      expect(result.counts).toMatchObject({ create: 9, same: 0, update: 0, replace: 0, delete: 0 });
      expect(writes()).toEqual([]);
      // The lookups ran: the CLI's preview read the Data records, Actions, Context and Eval type.
      expect(requests.length).toBeGreaterThan(0);
      expect(resources()).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "up: all creates, dependencies first, with the outputs; the service holds the objects, wired together",
    async () => {
      const result = await run(engine, "up");
      expect(planByUrn(result)).toEqual(all("create"));
      const order = result.steps.map((step) => step.name);
      const before = (first: string, second: string) =>
        expect(order.indexOf(first), `${first} before ${second}`).toBeLessThan(order.indexOf(second));
      before("helpdesk", "triage");
      before("helpdesk", "golden-answers");
      before("golden-answers", "reply-quality");
      before("openai", "gpt-4o-mini");
      expect(result.steps.every((step) => typeof step.id === "string" && step.id.length > 0)).toBe(true);
      remember();

      const outputs = Object.fromEntries(Object.entries(result.outputs).map(([name, value]) => [name, value.value]));
      expect(outputs).toMatchObject({
        appSlug: "helpdesk",
        appDescription: "Answers customer questions",
        workflowSlug: "triage",
        datasetRecords: 3,
        evalDataType: "DATASET",
        experimentStatus: "active",
        handbookStatus: "indexed",
      });
      expect(result.outputs.providerKey!.secret).toBe(true);
      expect(outputs.providerKey === FIRST_KEY).toBe(true);
      expect(result.outputs.appGuid!.secret).toBe(false);
      expect(outputs.appGuid).toBe(ids().helpdesk);
      expect(outputs.modelConnection).toBe(outputs.connectionGuid);
      expect(outputs.handbookDocuments).toBeGreaterThan(1);

      // What the service now holds, read through the API.
      const helpdesk = (await list("/apps")).find((app) => app.name === "Helpdesk")!;
      expect(helpdesk.guid).toBe(outputs.appGuid);
      expect((await list(`/apps/${helpdesk.guid}/workflows`)).map((workflow) => workflow.name)).toEqual(["Triage"]);
      expect((await list("/providers")).map((provider) => provider.guid)).toEqual([outputs.connectionGuid]);
      const support = (await list("/apps")).find((app) => app.name === "Support")!;
      const actions = await list(`/apps/${support.guid}/actions`);
      const [experiment] = await list("/experiments");
      expect(experiment).toMatchObject({ app: support.guid, primary_action: actions.find((a) => a.name === "Draft reply")!.guid });
      expect((await api("GET", `/skills/${outputs.skillGuid}`)).status).toBe(200);
    },
    TIMEOUT,
  );

  it(
    "preview without changes: every URN the same, zero API writes",
    async () => {
      const result = await run(engine, "preview");
      expect(planByUrn(result)).toEqual(all("same"));
      expect(result.counts).toMatchObject({ same: 9, create: 0, update: 0, replace: 0, delete: 0 });
      expect(writes()).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "a new App description: previewed and applied as one in-place update of the App",
    async () => {
      const described = engineWith({ appDescription: NEW_DESCRIPTION });
      const expected = all("same", { helpdesk: "update [description]" });
      expect(planByUrn(await run(described, "preview"))).toEqual(expected);
      expect(writes()).toEqual([]);

      const app = ids().helpdesk!;
      const result = await run(described, "up");
      expect(planByUrn(result)).toEqual(expected);
      expect(writes()).toEqual([`PUT /v1/apps/${app}`]);
      expect((await api("GET", `/apps/${app}`)).body.description).toBe(NEW_DESCRIPTION);
      expect(result.outputs.appDescription).toEqual({ value: NEW_DESCRIPTION, secret: false });
      expect(ids().helpdesk).toBe(app);
    },
    TIMEOUT,
  );

  it(
    "a rotated provider key replaces the connection and the Model that holds it (replaces: key), new before old",
    async () => {
      // The Model is replaced for its key, and since it must be linked to the new connection (`__linkTo`, its GUID).
      const model = "replace [__linkTo, key, providerGuid] {key, providerGuid}";
      const expected = all("same", { openai: "replace [key] {key}", "gpt-4o-mini": model });
      const preview = await run(changed(), "preview");
      expect(planByUrn(preview)).toEqual(expected);
      expect(preview.steps.filter((step) => step.op === "replace").map((step) => step.replaces)).toEqual([
        ["key"],
        ["key", "providerGuid"],
      ]);
      expect(writes()).toEqual([]);

      const old = ids();
      const result = await run(changed(), "up");
      expect(planByUrn(result)).toEqual(expected);
      // Create before delete (the CLI's default), the Model's old object before the old connection.
      const sent = writes();
      expect(sent.slice(0, 3)).toEqual(["POST /v1/providers", expect.stringMatching(/^PUT \/v1\/providers\//), "POST /v1/models"]);
      expect(sent.slice(3)).toEqual([`DELETE /v1/models/${old["gpt-4o-mini"]}`, `DELETE /v1/providers/${old.openai}`]);
      remember();
      const fresh = ids();
      expect(fresh.openai).not.toBe(old.openai);
      expect(fresh["gpt-4o-mini"]).not.toBe(old["gpt-4o-mini"]);
      expect(result.outputs.connectionGuid!.value).toBe(fresh.openai);
      expect(result.outputs.modelConnection!.value).toBe(fresh.openai);
      expect((await list("/providers")).map((provider) => provider.guid)).toEqual([fresh.openai]);
      expect((await api("GET", `/models/${old["gpt-4o-mini"]}`)).status).toBe(404);
    },
    TIMEOUT,
  );

  it(
    "refresh reads an out-of-band rename and an out-of-band delete; the next up puts both back",
    async () => {
      const { triage, "web-search": skill } = ids();
      expect((await api("PUT", `/workflows/${triage}`, { name: "Triage (renamed in the console)" })).status).toBe(200);
      expect((await api("DELETE", `/skills/${skill}`)).status).toBeLessThan(300);

      const refreshed = await run(changed(), "refresh");
      expect(planByUrn(refreshed)).toEqual(all("same", { triage: "refresh [name, updatedAt]", "web-search": "delete" }));
      expect(writes()).toEqual([]);
      const state = resources();
      expect(state.map((resource) => resource.urn)).not.toContain(URN_OF["web-search"]);
      expect(state.find((resource) => resource.urn === URN_OF.triage)!.outputs!.name).toBe("Triage (renamed in the console)");

      const result = await run(changed(), "up");
      expect(planByUrn(result)).toEqual(all("same", { triage: "update [name]", "web-search": "create" }));
      // The two are independent: the CLI runs them in parallel, in either order.
      expect(writes().sort()).toEqual(["POST /v1/skills", `PUT /v1/workflows/${triage}`]);
      remember();
      expect((await api("GET", `/workflows/${triage}`)).body.name).toBe("Triage");
      const recreated = ids()["web-search"]!;
      expect(recreated).not.toBe(skill);
      expect((await api("GET", `/skills/${recreated}`)).body).toMatchObject({ name: "web-search", type: "web" });
      expect(result.outputs.skillGuid!.value).toBe(recreated);
    },
    TIMEOUT,
  );

  it(
    "secrets: encrypted in the checkpoint, the stack export and the stack config, and absent from the CLI's output",
    () => {
      const secrets = { FIRST_KEY, ROTATED_KEY, "the API key": emulator.apiKey };
      /** Which secrets `text` holds in plaintext (names only: a failure must not print a secret). */
      const leaked = (text: string) => Object.entries(secrets).flatMap(([name, value]) => (text.includes(value) ? [name] : []));

      const checkpoint = readFileSync(engine.checkpointFile(), "utf8");
      expect(leaked(checkpoint)).toEqual([]);
      // Every file the file backend keeps (history, backups, the CLI's home) as well.
      const files = (dir: string): string[] =>
        readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : [join(dir, name)]));
      const stateFiles = files(join(work, "state"));
      expect(stateFiles.length).toBeGreaterThan(1);
      for (const file of stateFiles) expect(leaked(readFileSync(file, "latin1")), file).toEqual([]);

      const exported = spawnSync(cli!.bin, ["stack", "export", "--stack", "dev"], {
        cwd: programDir,
        env: engine.environment(),
        encoding: "utf8",
      });
      expect(exported.status, exported.stderr).toBe(0);
      expect(leaked(exported.stdout + exported.stderr)).toEqual([]);
      const deployment = JSON.parse(exported.stdout) as {
        deployment: { resources: (CheckpointResource & { inputs?: Record<string, unknown> })[] };
      };
      const byUrn = new Map(deployment.deployment.resources.map((resource) => [resource.urn, resource]));
      for (const name of ["openai", "gpt-4o-mini"]) {
        const resource = byUrn.get(URN_OF[name]!)!;
        expect(resource.inputs!.key, `${name} inputs.key`).toEqual(
          expect.objectContaining({
            "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
            ciphertext: expect.any(String),
          }),
        );
        expect(resource.outputs!.key, `${name} outputs.key`).toEqual(expect.objectContaining({ ciphertext: expect.any(String) }));
      }
      // The stack's config (Pulumi.dev.yaml, written by the Automation API) holds the secrets encrypted.
      const stackConfig = readFileSync(join(programDir, "Pulumi.dev.yaml"), "utf8");
      expect(leaked(stackConfig)).toEqual([]);
      expect(stackConfig.match(/secure: /g)).toHaveLength(2); // gms:apiKey and openaiKey

      // Everything the CLI printed, over every run so far.
      const printed = output.join("\n");
      expect(printed).toContain("pulumi-nodejs:dynamic/gms:ProviderConnection openai");
      expect(leaked(printed)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "destroy deletes everything the program made: checked through the API, not the CLI's state",
    async () => {
      const result = await run(changed(), "destroy");
      expect(planByUrn(result)).toEqual(all("delete"));
      // Dependents first: the Eval before its Dataset, the Workflow and the Dataset before their App.
      const order = result.steps.map((step) => step.name);
      expect(order.indexOf("reply-quality")).toBeLessThan(order.indexOf("golden-answers"));
      expect(order.indexOf("golden-answers")).toBeLessThan(order.indexOf("helpdesk"));
      expect(order.indexOf("triage")).toBeLessThan(order.indexOf("helpdesk"));
      expect(writes().every((write) => write.startsWith("DELETE "))).toBe(true);

      // Only the fixtures' own objects are left, and every object the program ever had (replaced and re-created ones
      // included) answers 404.
      await expectNothingOfTheQuickstart(() => emulator, seen, 12);
    },
    TIMEOUT,
  );
});
