/**
 * PulumiCliEngine's own parts: finding the CLI (and saying why there is none), reading steps from the
 * engine's events (no CLI needed), and, on the real CLI, a failed step reported as an EngineError with
 * the steps so far.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EngineEvent, StepEventMetadata } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { resultFromEvents } from "../../src/testing/cli-engine";
import { EngineError, PulumiCliEngine, findPulumiCli } from "../../src/testing";
import { cliName, makeProgramDir, pulumiCliFor } from "./harness";

const cli = pulumiCliFor("test/pulumi-cli/cli-engine.test.ts");
const APP = "pulumi-nodejs:dynamic/gms:App";
const urn = (name: string, type = APP) => `urn:pulumi:dev::p::${type}::${name}`;

function state(name: string, props: { id?: string; inputs?: object; outputs?: object; custom?: boolean; type?: string } = {}) {
  const type = props.type ?? APP;
  return {
    type,
    urn: urn(name, type),
    custom: props.custom ?? true,
    id: props.id ?? "",
    parent: "",
    inputs: props.inputs ?? {},
    outputs: props.outputs ?? {},
    provider: "",
  };
}

function step(kind: "pre" | "outputs", op: string, name: string, meta: Partial<StepEventMetadata> = {}): EngineEvent {
  const metadata = { op, urn: urn(name, meta.type), type: meta.type ?? APP, provider: "", ...meta } as StepEventMetadata;
  return { sequence: 0, timestamp: 0, ...(kind === "pre" ? { resourcePreEvent: { metadata } } : { resOutputsEvent: { metadata } }) };
}

describe("findPulumiCli", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "gms-find-cli-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("without a project build or one on PATH, says so and how to build one", () => {
    const lookup = findPulumiCli({ root: dir, env: { PATH: join(dir, "nothing-here") } });
    expect(lookup.found).toBe(false);
    if (!lookup.found) expect(lookup.reason).toMatch(/^no Pulumi CLI \(.*pulumi on PATH.*\); `npm run pulumi:install` builds one/);
  });

  it("refuses a `pulumi` whose folder lacks the dynamic-provider launcher, naming it", () => {
    const bin = join(dir, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "pulumi"), "#!/bin/sh\necho v3.0.0-fake\n");
    chmodSync(join(bin, "pulumi"), 0o755);
    const lookup = findPulumiCli({ root: dir, env: { PATH: bin } });
    expect(lookup.found).toBe(false);
    if (!lookup.found) expect(lookup.reason).toContain(`${join(bin, "pulumi")} has no pulumi-resource-pulumi-nodejs beside it`);
    writeFileSync(join(bin, "pulumi-resource-pulumi-nodejs"), "#!/bin/sh\n");
    expect(findPulumiCli({ root: dir, env: { PATH: bin } })).toEqual({
      found: true,
      cli: { bin: join(bin, "pulumi"), dir: bin, version: "v3.0.0-fake", source: "PATH" },
    });
  });
});

describe("resultFromEvents: the engine's events as LocalEngine's steps", () => {
  const provider = "pulumi:providers:pulumi-nodejs";

  it("folds a replacement's three steps into one replace, and leaves out providers, components and the stack", () => {
    const old = state("a", { id: "guid-1", inputs: { name: "A", key: "[secret]" } });
    const next = state("a", { inputs: { name: "A", key: "[secret]" } });
    const events = [
      step("pre", "create", "default", { type: provider, new: state("default", { type: provider }) }),
      step("pre", "create", "stack", { type: "pulumi:pulumi:Stack", new: state("stack", { custom: false }) }),
      step("pre", "create", "group", { type: "gms:index:Workspace", new: state("group", { custom: false }) }),
      step("pre", "create-replacement", "a", { old, new: next, keys: ["key"] }),
      step("outputs", "create-replacement", "a", { old, new: { ...next, id: "guid-2" }, keys: ["key"] }),
      step("pre", "replace", "a", { old, new: next, keys: ["key"] }),
      step("pre", "delete-replaced", "a", { old }),
      step("pre", "update", "b", { old: state("b", { id: "guid-3", inputs: { name: "B" } }), new: state("b", { inputs: { name: "B2" } }) }),
      step("pre", "same", "c", { old: state("c", { id: "guid-4" }), new: state("c") }),
    ];
    const result = resultFromEvents("up", events, { out: { value: "x", secret: false }, key: { value: "k", secret: true } });
    expect(result.steps.map(({ op, name, id, changes, replaces }) => ({ op, name, id, changes, replaces }))).toEqual([
      // The key is masked in the events: it is named as a change because it forces the replacement.
      { op: "replace", name: "a", id: "guid-1", changes: ["key"], replaces: ["key"] },
      { op: "update", name: "b", id: "guid-3", changes: ["name"], replaces: [] },
      { op: "same", name: "c", id: "guid-4", changes: [], replaces: [] },
    ]);
    expect(result.counts).toEqual({ create: 0, update: 1, replace: 1, delete: 0, same: 1, refresh: 0, read: 0 });
    expect(result.outputs).toEqual({ out: { value: "x", secret: false }, key: { value: "k", secret: true } });
  });

  it("a refresh step is same, refresh (the engine's update: drifted outputs) or delete (gone), as its outputs event says", () => {
    const before = (name: string) => state(name, { id: `id-${name}`, outputs: { name: "N", updatedAt: "t1" } });
    const events = ["kept", "drifted", "gone"].map((name) => step("pre", "refresh", name, { old: before(name), new: before(name) }));
    events.push(
      step("outputs", "same", "kept", { old: before("kept"), new: before("kept") }),
      step("outputs", "update", "drifted", {
        old: before("drifted"),
        new: state("drifted", { id: "id-drifted", outputs: { name: "M", updatedAt: "t2" } }),
      }),
      step("outputs", "delete", "gone", { old: before("gone") }),
    );
    const result = resultFromEvents("refresh", events, undefined);
    expect(result.steps.map(({ op, name, changes }) => `${op} ${name} [${changes.join(", ")}]`)).toEqual([
      "same kept []",
      "refresh drifted [name, updatedAt]",
      "delete gone []",
    ]);
    expect(result.outputs).toEqual({});
  });

  it("in preview, a step has no id until it exists, and an update's changes come from the inputs", () => {
    const events = [
      step("pre", "create", "new", { new: state("new", { inputs: { name: "N" } }) }),
      step("pre", "update", "old", {
        old: state("old", { id: "id-old", inputs: { a: 1, b: [1] } }),
        new: state("old", { inputs: { a: 1, b: [2] } }),
      }),
    ];
    const result = resultFromEvents("preview", events, undefined);
    expect(result.steps.map(({ op, name, id, changes }) => ({ op, name, id, changes }))).toEqual([
      { op: "create", name: "new", id: undefined, changes: [] },
      { op: "update", name: "old", id: "id-old", changes: ["b"] },
    ]);
  });
});

describe.skipIf(!cli)(`PulumiCliEngine on ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let dir: string;

  beforeAll(async () => {
    // The workspace allows one App: the second create, which waits for the first, is refused.
    emulator = await startEmulator({
      port: 0,
      fixtures: { workspaces: [{ name: "Small", slug: "small", apiKey: "gms_small_key", limits: { apps: 1 } }] },
    });
    dir = makeProgramDir(
      "gms-cli-engine",
      `import * as gms from "pulumi-gms";
const ok = new gms.App("ok", { name: "Fine" });
new gms.App("bad", { name: "One too many" }, { dependsOn: [ok] });
export const okGuid = ok.guid;
`,
    );
  });
  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a step the provider fails rejects with a STEP_FAILED EngineError that carries the steps so far", async () => {
    const engine = new PulumiCliEngine({
      cli: cli!,
      programDir: dir,
      stateDir: join(dir, "state"),
      project: "cli-engine",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey } },
      secretsPassphrase: "cli engine test",
      log: () => undefined,
    });
    const failure = await engine.up().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(EngineError);
    expect((failure as EngineError).code).toBe("STEP_FAILED");
    // The engine's own diagnostic, naming the resource, rather than the whole output the CLI printed.
    expect((failure as EngineError).message).toMatch(/^pulumi up failed: bad: Cannot create App "One too many": .*429/);
    expect((failure as EngineError).message).not.toContain("Updating (dev)");
    const steps = (failure as EngineError).result?.steps.map((step) => `${step.op} ${step.name}`).sort();
    expect(steps).toEqual(["create bad", "create ok"]);
    await engine.destroy();
  }, 180_000);

  it("a program whose input fails deletes nothing it declares (the Automation API's language server would signal success)", async () => {
    const program = makeProgramDir(
      "gms-cli-engine-input",
      `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";
const fail = new pulumi.Config().getBoolean("fail");
new gms.App("a", { name: "A" });
new gms.App("b", { name: fail ? (Promise.reject(new Error("an input that failed")) as unknown as string) : "B" });
`,
    );
    const service = await startEmulator({ port: 0 });
    const engine = (fail: boolean) =>
      new PulumiCliEngine({
        cli: cli!,
        programDir: program,
        stateDir: join(program, "state"),
        project: "cli-engine-input",
        stack: "dev",
        config: { "gms:baseUrl": service.url, "gms:apiKey": { secret: service.apiKey }, fail: String(fail) },
        secretsPassphrase: "cli engine test",
        log: () => undefined,
      });
    const names = async () =>
      (
        (await (await fetch(`${service.url}/apps`, { headers: { authorization: `Bearer ${service.apiKey}` } })).json()) as {
          data: { name: string }[];
        }
      ).data
        .map((app) => app.name)
        .sort();
    try {
      expect((await engine(false).up()).counts.create).toBe(2);
      const failure = await engine(true)
        .up()
        .then(
          () => undefined,
          (error: unknown) => error as EngineError,
        );
      expect(failure?.code).toBe("PROGRAM_FAILED");
      expect(failure?.result?.steps.filter((step) => step.op !== "same")).toEqual([]);
      expect(await names()).toEqual(["A", "B"]);
      expect((await engine(false).up()).counts).toMatchObject({ same: 2, create: 0, delete: 0 });
    } finally {
      await engine(false).destroy();
      await service.close();
      rmSync(program, { recursive: true, force: true });
    }
  }, 180_000);
});
