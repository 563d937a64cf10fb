/**
 * A Model that names its connection by provider type (`provider: "openai"` with the ProviderConnection in
 * `dependsOn`, as README's example does) follows that connection, on LocalEngine and on the real Pulumi CLI
 * (when present; required under CI=true): when the connection is replaced (a new key), the same `up` replaces
 * the Model, linked to the new connection (no request re-links a Model); when the connection is deleted
 * outside Pulumi, `refresh` sees the link gone and the next `up` makes the connection and a linked Model anew.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { type CliResult, LocalEngine, PulumiCliEngine, installPackageCopy } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";

const cli = pulumiCliFor("model-link.test.ts");
const TIMEOUT = 240_000;

const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";
const config = new pulumi.Config();
const connection = new gms.ProviderConnection("openai", { provider: "openai", key: config.requireSecret("connectionKey"), nickname: "OpenAI" });
const model = new gms.Model("gpt", { llm: "gpt-4o-mini", provider: "openai", key: config.requireSecret("modelKey") }, { dependsOn: [connection] });
export const connectionGuid = connection.guid;
export const modelConnection = model.providerGuid;
`;

const engines = [{ name: "LocalEngine", real: false }, ...(cli ? [{ name: `the real CLI, ${cliName(cli)}`, real: true }] : [])];

describe.each(engines)("a Model linked by provider type, on $name", ({ real }) => {
  let dir: string;
  let emulator: RunningEmulator;
  const engine = (connectionKey: string) => {
    const options = {
      programDir: dir,
      project: "model-link",
      stack: "dev",
      config: {
        "gms:baseUrl": emulator.url,
        "gms:apiKey": { secret: emulator.apiKey },
        connectionKey: { secret: connectionKey },
        modelKey: { secret: "sk-model-link-model" },
      },
      secretsPassphrase: "model-link",
      log: () => undefined,
    };
    return real
      ? new PulumiCliEngine({ ...options, cli: cli!, stateDir: join(dir, "backend") })
      : new LocalEngine({ ...options, stateFile: join(dir, "state.json") });
  };
  const api = (method: string, path: string) => callOverHttp(emulator, method, path);
  /** The one Model of the service and the GUID of the connection it is linked to. */
  const liveModels = async () =>
    (await api("GET", "/models")).body as { guid: string; providerGuid?: string | null; provider_guid?: string | null }[];
  const linkOf = (model: { providerGuid?: string | null; provider_guid?: string | null }) =>
    model.providerGuid ?? model.provider_guid ?? null;
  const stepOf = (result: CliResult, name: string) => result.steps.find((step) => step.name === name);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gms-model-link-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "model-link-program", private: true, type: "module" }));
    writeFileSync(join(dir, "index.ts"), PROGRAM);
    installPackageCopy(dir);
    emulator = await startEmulator({});
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    "is created linked to the connection, and an unchanged program changes nothing",
    async () => {
      const first = await engine("sk-model-link-first").up();
      const connection = first.outputs.connectionGuid!.value as string;
      expect(first.outputs.modelConnection?.value).toBe(connection);
      expect((await liveModels()).map(linkOf)).toEqual([connection]);
      const again = await engine("sk-model-link-first").up();
      expect(again.steps.map((step) => step.op)).toEqual(["same", "same"]);
    },
    TIMEOUT,
  );

  it(
    "is replaced in the same up as its connection, linked to the new one",
    async () => {
      const result = await engine("sk-model-link-second").up();
      expect(stepOf(result, "openai")).toMatchObject({ op: "replace", replaces: ["key"] });
      expect(stepOf(result, "gpt")).toMatchObject({ op: "replace", replaces: ["providerGuid"] });
      const connection = result.outputs.connectionGuid!.value as string;
      expect(result.outputs.modelConnection?.value).toBe(connection);
      expect((await liveModels()).map(linkOf)).toEqual([connection]);
    },
    TIMEOUT,
  );

  it(
    "is made anew, linked, by the up after a refresh that saw its connection deleted outside Pulumi",
    async () => {
      const [model] = await liveModels();
      const gone = linkOf(model!)!;
      await api("DELETE", `/providers/${gone}`);
      await engine("sk-model-link-second").refresh();
      const result = await engine("sk-model-link-second").up();
      expect(stepOf(result, "openai")?.op).toBe("create");
      expect(stepOf(result, "gpt")).toMatchObject({ op: "replace", replaces: ["providerGuid"] });
      const connection = result.outputs.connectionGuid!.value as string;
      expect(connection).not.toBe(gone);
      expect((await liveModels()).map(linkOf)).toEqual([connection]);
      const again = await engine("sk-model-link-second").up();
      expect(again.steps.map((step) => step.op)).toEqual(["same", "same"]);
    },
    TIMEOUT,
  );
});
