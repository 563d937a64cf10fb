/**
 * LocalEngine when steps fail: the other steps still run, dependents of a failed one are skipped, every
 * failure is reported at the end, a create that made its object but could not finish it is recorded with
 * its init errors, and the next `up` finishes it. Each `it` builds on the previous one's state.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { type CliResult, EngineError, LocalEngine, installPackageCopy } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { expectNoSecretIn } from "../no-secret";

const steps = (result: CliResult | undefined) => (result?.steps ?? []).map((step) => `${step.op} ${step.name}`);

describe("LocalEngine when steps fail", () => {
  let dir: string;
  let emulator: RunningEmulator;
  let config: Record<string, string | { secret: string }> & { openaiKey: { secret: string } };
  const engine = () =>
    new LocalEngine({
      programDir: dir,
      stateFile: join(dir, "state.json"),
      project: "failures",
      stack: "dev",
      config,
      secretsPassphrase: "failures",
      env: { GMS_RETRY_BASE_DELAY_MS: "5", GMS_MAX_RETRIES: "1" },
      log: () => undefined,
    });
  const state = () =>
    JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { resources: { urn: string; id: string; initErrors?: string[] }[] };
  const api = (method: string, path: string, body?: unknown) => callOverHttp(emulator, method, path, body);
  const failureOf = (operation: Promise<unknown>) =>
    operation.then(
      () => expect.unreachable("the operation succeeded"),
      (error: unknown) => error as EngineError,
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gms-failures-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "failures-program", private: true, type: "module" }));
    writeFileSync(
      join(dir, "index.ts"),
      `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";
const config = new pulumi.Config();
// "broken" sends App a to a port where nothing listens.
const elsewhere = config.getBoolean("broken") ? { connection: { baseUrl: "http://127.0.0.1:1/v1", apiKey: "gms_nowhere" } } : {};
const a = new gms.App("a", { name: "A", ...elsewhere });
const b = new gms.App("b", { name: "B" });
const c = new gms.Workflow("c", { name: "C", app: config.get("flowApp") === "b" ? b.id : a.id });
if (config.getBoolean("withConnection")) {
  new gms.ProviderConnection("openai", { provider: "openai", key: config.requireSecret("openaiKey"), nickname: "Primary" });
}
// "crash" fails the program once c is registered: a run whose steps succeeded but whose program did not.
if (config.getBoolean("crash")) c.id.apply(() => { throw new pulumi.RunError("the program stopped after registering its resources"); });
`,
    );
    installPackageCopy(dir);
    emulator = await startEmulator({});
    config = {
      "gms:baseUrl": emulator.url,
      "gms:apiKey": { secret: emulator.apiKey },
      broken: "true",
      openaiKey: { secret: "sk-failures-71c2" },
    };
  });
  afterAll(async () => {
    await emulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs the steps that do not depend on a failed one, skips its dependents and saves what happened", async () => {
    const error = await failureOf(engine().up());
    expect(error).toBeInstanceOf(EngineError);
    expect(error.code).toBe("STEP_FAILED");
    expectNoSecretIn(error, [emulator.apiKey, "gms_nowhere"]);
    expect(error.message).toMatch(
      /^create of urn:pulumi:dev::failures::pulumi-nodejs:dynamic\/gms:App::a failed: Cannot create App "A": .*ECONNREFUSED.*\(after 2 attempts\)/,
    );
    // b was created although a failed before or after it; c (which needs a's GUID) never started.
    expect(steps(error.result)).toEqual(["create b"]);
    expect(state().resources.map((resource) => resource.urn.split("::").pop())).toEqual(["b"]);
    expect(((await api("GET", "/apps")).body.data as { name: string }[]).map((app) => app.name)).toEqual(["B"]);
  });

  it("converges on the next run", async () => {
    config.broken = "false";
    const result = await engine().up();
    expect(steps(result)).toEqual(["create a", "same b", "create c"]);
    expect(((await api("GET", "/apps")).body.data as { name: string }[]).map((app) => app.name).sort()).toEqual(["A", "B"]);
  });

  it("records a create that made its object but could not finish it, with its init errors, and reports every failure", async () => {
    config.withConnection = "true";
    // The nickname PUT and the rollback's DELETE both fail: the connection exists and cannot be undone.
    emulator.faults.set("error=1,methods=PUT+DELETE");
    const error = await failureOf(engine().up());
    emulator.faults.set(undefined);
    // The partial create's properties (the key in plaintext) are the engine's to record, not in the error a person prints.
    expectNoSecretIn(error, [config.openaiKey.secret, emulator.apiKey]);
    expect(error.message).toMatch(
      /setting its nickname failed: the service answered 503 .*Deleting the ProviderConnection it had created \(.*\) failed too/,
    );
    const recorded = state().resources.find((resource) => resource.urn.endsWith("::openai"));
    expect(recorded?.initErrors).toEqual([expect.stringContaining("setting its nickname failed")]);
    const live = (await api("GET", "/providers")).body as { guid: string; nickname: string }[];
    expect(live).toEqual([expect.objectContaining({ guid: recorded!.id, nickname: "openai" })]);
  });

  it("replaces a resource created with errors on the next up, though nothing changed in the program", async () => {
    const before = state().resources.find((resource) => resource.urn.endsWith("::openai"))!.id;
    const result = await engine().up();
    expect(steps(result).filter((step) => !step.startsWith("same"))).toEqual(["replace openai"]);
    const recorded = state().resources.find((resource) => resource.urn.endsWith("::openai"));
    expect(recorded?.initErrors).toBeUndefined();
    expect(recorded?.id).not.toBe(before);
    expect((await api("GET", "/providers")).body).toEqual([expect.objectContaining({ guid: recorded!.id, nickname: "Primary" })]);
    expect((await engine().up()).counts).toMatchObject({ same: 4, update: 0 });
  });

  it("reports every failed delete of a destroy, keeps going, and finishes on the next run", async () => {
    emulator.faults.set("error=1,methods=DELETE");
    const error = await failureOf(engine().destroy());
    emulator.faults.set(undefined);
    // c depends on a, so a is not deleted while c stands; b and the connection are independent.
    expect(error.errors.map((failure) => failure.message.split(" failed:")[0]).sort()).toEqual([
      "delete of urn:pulumi:dev::failures::pulumi-nodejs:dynamic/gms:App::b",
      "delete of urn:pulumi:dev::failures::pulumi-nodejs:dynamic/gms:ProviderConnection::openai",
      "delete of urn:pulumi:dev::failures::pulumi-nodejs:dynamic/gms:Workflow::c",
    ]);
    expect(error.message).toMatch(/^3 steps failed:\n {2}delete of /);
    expect(error.message).toMatch(
      /delete of .*::openai failed: Cannot delete ProviderConnection .*: the service answered 503 Service Unavailable \(injected fault\) \(after 2 attempts\)/,
    );
    expect(state().resources).toHaveLength(4);
    const result = await engine().destroy();
    expect(result.counts.delete).toBe(4);
    expect(state().resources).toEqual([]);
    expect((await api("GET", "/apps")).body.data).toEqual([]);
  });

  it("deletes a replaced object on the next successful up when the run that replaced it failed", async () => {
    config = { ...config, broken: "false", withConnection: "false", flowApp: "a" };
    await engine().up();
    const [first] = (await api("GET", `/apps/${state().resources.find((r) => r.urn.endsWith("::a"))!.id}/workflows`)).body as {
      guid: string;
    }[];

    // Another App replaces the Workflow; then the program fails, so nothing is deleted in that run.
    config = { ...config, flowApp: "b", crash: "true" };
    const error = await failureOf(engine().up());
    expect(error.message).toBe("the program stopped after registering its resources");
    expect(steps(error.result).filter((step) => !step.startsWith("same"))).toEqual(["replace c"]);
    const pending = state().resources.filter((resource) => resource.urn.endsWith("::c"));
    expect(pending).toEqual([
      expect.not.objectContaining({ pendingReplacement: true }),
      expect.objectContaining({ id: first!.guid, pendingReplacement: true }),
    ]);

    config = { ...config, crash: "false" };
    const result = await engine().up();
    expect(steps(result).filter((step) => !step.startsWith("same"))).toEqual(["delete c"]);
    expect(state().resources.filter((resource) => resource.urn.endsWith("::c"))).toEqual([
      expect.not.objectContaining({ pendingReplacement: true }),
    ]);
    expect((await api("GET", `/workflows/${first!.guid}`)).status).toBe(404);
    await engine().destroy();
  });
});
