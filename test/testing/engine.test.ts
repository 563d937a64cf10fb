/**
 * The offline engine end to end: real programs (TypeScript run by Node's type stripping, and plain
 * .mjs) in throw-away directories with a copy of the built package, the real dynamic-provider host, and
 * the emulator on a loopback port counting every request. Each `it` builds on the previous one's state.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { callOverHttp } from "../emulator/harness";
import { EngineError, type EngineResult, LocalEngine, UNKNOWN, installPackageCopy } from "../../src/testing";

const PASSPHRASE = "correct horse battery staple";
const TYPE = "pulumi-nodejs:dynamic/gms:App";

function makeProgramDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "gms-engine-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "engine-test-program", private: true, type: "module" }));
  installPackageCopy(dir);
  return dir;
}

const steps = (result: EngineResult) =>
  result.steps.map((step) => `${step.op} ${step.name}${step.changes.length ? ` [${step.changes.join(", ")}]` : ""}`);

describe("LocalEngine with gms.App against the emulator", () => {
  let dir: string;
  let emulator: RunningEmulator;
  let engine: LocalEngine;
  const requests: RequestLogEntry[] = [];
  const log: string[] = [];
  const writes = () => requests.filter((entry) => entry.method !== "GET");
  const api = (method: string, path: string, body?: unknown) => callOverHttp(emulator, method, path, body);
  const listApps = async () =>
    ((await api("GET", "/apps")).body.data as { guid: string; name: string; description: string | null }[]).map(
      ({ guid, name, description }) => ({ guid, name, description }),
    );

  /** `support` authenticates with a secret `connection`; `triage` takes its description from support's slug. */
  const writeProgram = (options: { supportName?: string; withTriage?: boolean } = {}) =>
    writeFileSync(
      join(dir, "index.ts"),
      `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";

const config = new pulumi.Config();
const key: pulumi.Output<string> = config.requireSecret("workspaceKey");
const support = new gms.App("support", { name: ${JSON.stringify(options.supportName ?? "Support")}, description: "Customer support", connection: { apiKey: key } });
export const supportGuid = support.guid;
export const supportSlug = support.slug;
export const workspaceKey = key;
${options.withTriage === false ? "" : `const triage = new gms.App("triage", { name: "Triage", description: support.slug });\nexport const triageDescription = triage.description;`}
`,
    );

  beforeAll(async () => {
    dir = makeProgramDir();
    emulator = await startEmulator({ port: 0, onRequestComplete: (entry) => requests.push(entry) });
    engine = new LocalEngine({
      programDir: dir,
      stateFile: join(dir, "state/dev.json"),
      project: "engine-test",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey }, workspaceKey: { secret: emulator.apiKey } },
      secretsPassphrase: PASSPHRASE,
      log: (line) => log.push(line),
    });
    writeProgram();
  });

  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("previews creates without touching the service or the state; unknown outputs flow into dependents", async () => {
    const result = await engine.preview();
    expect(steps(result)).toEqual(["create support", "create triage"]);
    expect(result.steps[0]).toMatchObject({ urn: `urn:pulumi:dev::engine-test::${TYPE}::support`, type: TYPE });
    // triage registered only after support's slug resolved, as the unknown marker, and echoed it back.
    expect(result.outputs.triageDescription).toEqual({ value: UNKNOWN, secret: false });
    expect(result.outputs.supportGuid).toEqual({ value: UNKNOWN, secret: false });
    expect(result.outputs.workspaceKey).toEqual({ value: emulator.apiKey, secret: true });
    expect(writes()).toEqual([]);
    expect(await listApps()).toEqual([]);
    expect(existsSync(join(dir, "state/dev.json"))).toBe(false);
    expect(log).toContain("Previewing update (engine-test/dev):");
    expect(log).toContain(`  + ${TYPE} triage create`);
    expect(log).toContain("Resources: 2 to create");
  });

  it("up creates both Apps and reports the outputs, the dependent one with the real slug", async () => {
    log.length = 0;
    const result = await engine.up();
    expect(steps(result)).toEqual(["create support", "create triage"]);
    expect(result.counts).toMatchObject({ create: 2, same: 0 });
    const apps = await listApps();
    const support = apps.find((app) => app.name === "Support")!;
    expect(result.outputs.supportGuid).toEqual({ value: support.guid, secret: false });
    expect(result.outputs.triageDescription).toEqual({ value: "support", secret: false });
    expect(apps.find((app) => app.name === "Triage")?.description).toBe("support");
    expect(result.outputs.workspaceKey).toEqual({ value: emulator.apiKey, secret: true });
    expect(log.some((line) => /^ {2}\+ pulumi-nodejs:dynamic\/gms:App support created \(\d+\.\d\ds\)$/.test(line))).toBe(true);
    expect(log).toContain("    workspaceKey     : [secret]");
    expect(log).toContain("Resources: 2 created");
    expect(log.join("\n")).not.toContain(emulator.apiKey);
  });

  it("keeps secrets out of the state file in plaintext and refuses to open it without the passphrase", async () => {
    const text = readFileSync(join(dir, "state/dev.json"), "utf8");
    expect(text).not.toContain(emulator.apiKey);
    const state = JSON.parse(text);
    const support = state.resources.find((resource: { name: string }) => resource.name === "support");
    expect(support.inputs.connection).toEqual({
      "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
      ciphertext: expect.stringMatching(/^v1:/),
    });
    expect(support.outputs.connection.ciphertext).toMatch(/^v1:/);
    expect(support.inputs.__provider).toContain('require("pulumi-gms/dist/shims/app.js")');
    expect(state.resources.map((resource: { name: string }) => resource.name)).toEqual(["support", "triage"]);

    const options = { ...engine.options, secretsPassphrase: undefined, env: { PULUMI_CONFIG_PASSPHRASE: undefined } };
    const saved = process.env.PULUMI_CONFIG_PASSPHRASE;
    delete process.env.PULUMI_CONFIG_PASSPHRASE;
    try {
      await expect(new LocalEngine(options).up()).rejects.toMatchObject({ name: "EngineError", code: "PASSPHRASE_REQUIRED" });
    } finally {
      if (saved !== undefined) process.env.PULUMI_CONFIG_PASSPHRASE = saved;
    }
    await expect(new LocalEngine({ ...engine.options, secretsPassphrase: "wrong" }).up()).rejects.toMatchObject({ code: "BAD_PASSPHRASE" });
  });

  it("a second up is all same and makes no write to the service", async () => {
    requests.length = 0;
    const result = await engine.up();
    expect(steps(result)).toEqual(["same support", "same triage"]);
    expect(writes()).toEqual([]);
  });

  it("a changed name is previewed, then applied, as an in-place update of that App only", async () => {
    writeProgram({ supportName: "Support Desk" });
    requests.length = 0;
    log.length = 0;
    // As with the real engine, a provider without preview support returns only its inputs from a previewed
    // update, so support's slug is unknown in preview and triage, which reads it, may change too.
    expect(steps(await engine.preview())).toEqual(["update support [name]", "update triage [description]"]);
    expect(log).toContain(`  ~ ${TYPE} support update [name]`);
    expect(writes()).toEqual([]);

    const result = await engine.up();
    expect(steps(result)).toEqual(["update support [name]", "same triage"]);
    expect(writes().map((entry) => entry.method)).toEqual(["PUT"]);
    expect((await listApps()).map((app) => app.name).sort()).toEqual(["Support Desk", "Triage"]);
  });

  it("refresh reports drift made outside Pulumi, and the next up puts the program's value back", async () => {
    const [support] = (await listApps()).filter((app) => app.name === "Support Desk");
    expect((await api("PUT", `/apps/${support!.guid}`, { description: "Edited by hand" })).status).toBe(200);

    const refreshed = await engine.refresh();
    expect(steps(refreshed)).toContain("refresh support [description, updatedAt]");
    expect(steps(refreshed)).toContain("same triage");

    requests.length = 0;
    const result = await engine.up();
    expect(steps(result)).toEqual(["update support [description]", "same triage"]);
    expect((await listApps()).find((app) => app.guid === support!.guid)?.description).toBe("Customer support");
  });

  it("removing a resource from the program deletes it", async () => {
    writeProgram({ supportName: "Support Desk", withTriage: false });
    const triage = (await listApps()).find((app) => app.name === "Triage")!;
    expect(steps(await engine.preview())).toEqual(["same support", "delete triage"]);
    expect((await api("GET", `/apps/${triage.guid}`)).status).toBe(200);

    const result = await engine.up();
    expect(steps(result)).toEqual(["same support", "delete triage"]);
    expect((await api("GET", `/apps/${triage.guid}`)).status).toBe(404);
    expect(result.outputs.triageDescription).toBeUndefined();
  });

  it("a check failure aborts the operation with the property and reason, before any write", async () => {
    writeProgram({ supportName: "", withTriage: true });
    requests.length = 0;
    const error = (await engine.up().catch((caught: unknown) => caught)) as EngineError;
    expect(error).toBeInstanceOf(EngineError);
    expect(error.code).toBe("CHECK_FAILED");
    expect(error.failures).toEqual([
      { urn: `urn:pulumi:dev::engine-test::${TYPE}::support`, property: "name", reason: expect.any(String) },
    ]);
    expect(error.message).toMatch(/support\n {4}name: /);
    expect(writes()).toEqual([]);
  });

  it("destroy deletes everything and empties the state", async () => {
    writeProgram({ supportName: "Support Desk", withTriage: false });
    const result = await engine.destroy();
    expect(steps(result)).toEqual(["delete support"]);
    expect(await listApps()).toEqual([]);
    const state = JSON.parse(readFileSync(join(dir, "state/dev.json"), "utf8"));
    expect(state.resources).toEqual([]);
  });
});

/**
 * Replacement and deletion order need a resource with a replace-only property, which no gms kind has
 * yet: a small file-writing dynamic provider installed as a package (so `__provider` is a `require`),
 * used by a plain .mjs program. It logs every call to `events.log` in the program directory.
 */
describe("LocalEngine replacements and deletion order", () => {
  let dir: string;
  let engine: LocalEngine;
  const events = () => readFileSync(join(dir, "events.log"), "utf8").trim().split("\n");

  const writeProgram = (files: { name: string; path: string; content?: string; deleteBeforeReplace?: boolean; dependsOn?: string }[]) =>
    writeFileSync(
      join(dir, "index.mjs"),
      `import * as pulumi from "@pulumi/pulumi";
import provider from "file-provider";
class File extends pulumi.dynamic.Resource {
  constructor(name, args, opts) { super(provider, name, { ...args, size: undefined }, opts, "test", "File"); }
}
const files = {};
${files
  .map(
    (file) =>
      `files[${JSON.stringify(file.name)}] = new File(${JSON.stringify(file.name)}, { path: ${JSON.stringify(file.path)}, content: ${JSON.stringify(file.content ?? "x")} }, { deleteBeforeReplace: ${file.deleteBeforeReplace ?? "undefined"}, dependsOn: ${file.dependsOn ? `[files[${JSON.stringify(file.dependsOn)}]]` : "[]"} });`,
  )
  .join("\n")}
`,
    );

  beforeAll(() => {
    dir = makeProgramDir();
    const providerDir = join(dir, "node_modules/file-provider");
    mkdirSync(providerDir, { recursive: true });
    writeFileSync(join(providerDir, "package.json"), JSON.stringify({ name: "file-provider", version: "1.0.0", main: "index.js" }));
    writeFileSync(
      join(providerDir, "index.js"),
      `const fs = require("node:fs");
const log = (line) => fs.appendFileSync("events.log", line + "\\n");
module.exports = {
  async diff(id, olds, news) {
    const replaces = olds.path !== news.path ? ["path"] : [];
    return { changes: replaces.length > 0 || olds.content !== news.content, replaces };
  },
  async create(inputs) {
    if (fs.existsSync(inputs.path)) throw new Error(inputs.path + " exists");
    fs.writeFileSync(inputs.path, inputs.content);
    log("create " + inputs.path);
    return { id: inputs.path, outs: { ...inputs, size: inputs.content.length } };
  },
  async update(id, olds, news) {
    fs.writeFileSync(id, news.content);
    log("update " + id);
    return { outs: { ...news, size: news.content.length } };
  },
  async read(id, props) {
    if (!fs.existsSync(id)) return { id: "", props: {} };
    const content = fs.readFileSync(id, "utf8");
    return { id, props: { ...props, content, size: content.length } };
  },
  async delete(id) {
    fs.rmSync(id);
    log("delete " + id);
  },
};
`,
    );
    engine = new LocalEngine({
      programDir: dir,
      program: "index.mjs",
      stateFile: join(dir, "state.json"),
      project: "files",
      stack: "test",
      log: () => undefined,
    });
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("replaces create-before-delete by default, and delete-before-replace when asked", async () => {
    writeProgram([
      { name: "a", path: "a1.txt" },
      { name: "b", path: "b1.txt", deleteBeforeReplace: true },
    ]);
    await engine.up();
    // Independent steps run in parallel: their events may come in either order.
    expect([...events()].sort()).toEqual(["create a1.txt", "create b1.txt"]);

    writeProgram([
      { name: "a", path: "a2.txt" },
      { name: "b", path: "b2.txt", deleteBeforeReplace: true },
    ]);
    const preview = await engine.preview();
    expect(preview.steps.map((step) => [step.op, step.name, step.replaces])).toEqual([
      ["replace", "a", ["path"]],
      ["replace", "b", ["path"]],
    ]);
    const result = await engine.up();
    expect(result.counts).toMatchObject({ replace: 2, delete: 0 });
    // a's old file is deleted after the program (create-before-delete); b's before its replacement is created.
    const replaced = events().slice(2);
    expect([...replaced].sort()).toEqual(["create a2.txt", "create b2.txt", "delete a1.txt", "delete b1.txt"]);
    expect(replaced.indexOf("delete b1.txt")).toBeLessThan(replaced.indexOf("create b2.txt"));
    expect(replaced.at(-1)).toBe("delete a1.txt");
    expect(existsSync(join(dir, "a1.txt")) || existsSync(join(dir, "b1.txt"))).toBe(false);
  });

  it("deletes what the program no longer declares, dependents first; refresh drops what is gone and reports drift", async () => {
    writeProgram([
      { name: "a", path: "a2.txt" },
      { name: "b", path: "b2.txt", deleteBeforeReplace: true },
      { name: "c", path: "c.txt", dependsOn: "a" },
    ]);
    await engine.up();
    writeProgram([]);
    const result = await engine.up();
    expect(result.steps.map((step) => `${step.op} ${step.name}`)).toEqual(["delete c", "delete b", "delete a"]);
    const deletes = events().slice(-3);
    expect([...deletes].sort()).toEqual(["delete a2.txt", "delete b2.txt", "delete c.txt"]);
    // c depends on a: gone before a is deleted (b, independent, may go at any time).
    expect(deletes.indexOf("delete c.txt")).toBeLessThan(deletes.indexOf("delete a2.txt"));

    writeProgram([
      { name: "d", path: "d.txt" },
      { name: "e", path: "e.txt" },
    ]);
    await engine.up();
    rmSync(join(dir, "d.txt"));
    writeFileSync(join(dir, "e.txt"), "edited");
    const refreshed = await engine.refresh();
    expect(refreshed.steps.map((step) => `${step.op} ${step.name} ${step.changes.join(",")}`)).toEqual([
      "delete d ",
      "refresh e content,size",
    ]);
    const state = JSON.parse(readFileSync(join(dir, "state.json"), "utf8"));
    expect(state.resources.map((resource: { name: string }) => resource.name)).toEqual(["e"]);
    expect(state.resources[0].inputs.content).toBe("x");
    expect(state.resources[0].outputs.content).toBe("edited");
    expect((await engine.destroy()).steps.map((step) => `${step.op} ${step.name}`)).toEqual(["delete e"]);
    expect(existsSync(join(dir, "e.txt"))).toBe(false);
  });

  it("a RunError (a mistake the program explains) is reported by its message alone, as the CLI prints it: no stack", async () => {
    const lines: string[] = [];
    const quiet = new LocalEngine({ ...engine.options, log: (line) => lines.push(line) });
    writeProgram([]);
    const base = readFileSync(join(dir, "index.mjs"), "utf8");
    // Thrown synchronously by the program, and from an apply (the way a Workspace's preflight fails).
    for (const throwing of [
      'throw new pulumi.RunError("config.yaml:3:5: size: must be a number\\nconfig.yaml:4:5: name: is required");',
      'pulumi.output("x").apply(() => { throw new pulumi.RunError("config.yaml:3:5: size: must be a number\\nconfig.yaml:4:5: name: is required"); });',
    ]) {
      writeFileSync(join(dir, "index.mjs"), `${base}${throwing}\n`);
      lines.length = 0;
      const thrown = (await quiet.preview().catch((error: unknown) => error)) as EngineError;
      expect(thrown).toMatchObject({ name: "EngineError", code: "PROGRAM_FAILED" });
      expect(thrown.message).toBe("config.yaml:3:5: size: must be a number\nconfig.yaml:4:5: name: is required");
      expect(lines.at(-1)).toBe("error: config.yaml:3:5: size: must be a number\nconfig.yaml:4:5: name: is required");
    }
  });

  it("a failing program or an unimplemented option fails the run and deletes nothing", async () => {
    writeProgram([{ name: "f", path: "f.txt" }]);
    await engine.up();
    writeFileSync(
      join(dir, "index.mjs"),
      readFileSync(join(dir, "index.mjs"), "utf8") + 'files.f.id.apply(() => { throw new Error("thrown in an apply"); });\n',
    );
    const thrown = (await engine.up().catch((error: unknown) => error)) as EngineError;
    expect(thrown).toMatchObject({ name: "EngineError", code: "PROGRAM_FAILED", message: expect.stringContaining("thrown in an apply") });
    // Any other error than a RunError is reported with its stack.
    expect(thrown.message).toMatch(/^The program failed: Error: thrown in an apply\n\s+at /);

    writeProgram([{ name: "g", path: "g.txt" }]);
    writeFileSync(
      join(dir, "index.mjs"),
      readFileSync(join(dir, "index.mjs"), "utf8").replace("deleteBeforeReplace: undefined", "protect: true"),
    );
    await expect(engine.up()).rejects.toMatchObject({ code: "UNSUPPORTED", message: expect.stringContaining("protect") });
    expect(existsSync(join(dir, "f.txt"))).toBe(true);
    expect(existsSync(join(dir, "g.txt"))).toBe(false);
    expect((await engine.destroy()).steps.map((step) => `${step.op} ${step.name}`)).toEqual(["delete f"]);
  });
});
