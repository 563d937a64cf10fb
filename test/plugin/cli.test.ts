/**
 * The plugin under the real Pulumi engine (skipped, saying why, without the CLI; see test/pulumi-cli): a
 * program declaring `gms:index:*` resources with the package's native SDK classes (and a second `Provider`),
 * with `pulumi-resource-gms` found on PATH as the engine finds a provider plugin. One `up` creates, the next
 * updates one field and replaces another, `import` adopts an App made through the API with no diff after it,
 * and `destroy` leaves nothing; keys are ciphertext in the checkpoint, whether or not the program made them secret.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { PulumiCliEngine } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { cliName, makeProgramDir, pulumiCliFor } from "../pulumi-cli/harness";

const cli = pulumiCliFor("plugin/cli.test.ts");
const TIMEOUT = 120_000;
const API_KEY = "gms_plugin_cli_key_0b7c";
const OTHER_KEY = "gms_plugin_cli_other_key_6d1e";
const KEY = "sk-plugin-cli-typed-5512";

/** The program, written with the package's native SDK classes (`gms.native`, see src/native). */
const programOf = (step: { name: string; connection: string; importId?: string; baseUrl: string }) =>
  [
    `import * as pulumi from "@pulumi/pulumi";`,
    `import * as gms from "pulumi-gms";`,
    // A second provider instance, configured for another workspace: its own plugin process.
    `const other = new gms.native.Provider("other", { baseUrl: ${JSON.stringify(step.baseUrl)}, apiKey: pulumi.secret(${JSON.stringify(OTHER_KEY)}) });`,
    `new gms.native.App("elsewhere", { name: "Elsewhere" }, { provider: other });`,
    `new gms.native.App("support", { name: ${JSON.stringify(step.name)}, description: "Answers tickets" });`,
    `new gms.native.ProviderConnection("pc", { provider: "openai", key: ${JSON.stringify(KEY)}, name: ${JSON.stringify(step.connection)}, nickname: "Main" });`,
    step.importId
      ? `new gms.native.App("adopted", { name: "Made outside", description: "by API" }, { import: ${JSON.stringify(step.importId)} });`
      : "",
    "",
  ].join("\n");

describe.skipIf(!cli)(`the plugin under the real engine: ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let programDir: string;
  let engine: PulumiCliEngine;
  const api = <T = any>(method: string, path: string, body?: unknown) =>
    callOverHttp<T>({ url: emulator.url, apiKey: API_KEY }, method, path, body);
  const otherApi = <T = any>(method: string, path: string) => callOverHttp<T>({ url: emulator.url, apiKey: OTHER_KEY }, method, path);
  const lines: string[] = [];
  const write = (step: Omit<Parameters<typeof programOf>[0], "baseUrl">) =>
    writeFileSync(join(programDir, "index.ts"), programOf({ ...step, baseUrl: emulator.url }));

  beforeAll(async () => {
    emulator = await startEmulator({
      port: 0,
      db: ":memory:",
      workspaces: [
        { name: "Plugin", apiKey: API_KEY },
        { name: "Other", apiKey: OTHER_KEY },
      ],
    });
    programDir = makeProgramDir("plugin-cli");
    const bin = join(programDir, "plugin-bin");
    mkdirSync(bin);
    const main = join(__dirname, "..", "..", "dist", "plugin", "main.js");
    chmodSync(main, 0o755);
    symlinkSync(main, join(bin, "pulumi-resource-gms"));
    engine = new PulumiCliEngine({
      cli: cli!,
      programDir,
      stateDir: join(programDir, "state"),
      project: "plugin-cli",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: API_KEY }, "gms:maxRetries": "0" },
      secretsPassphrase: "plugin-passphrase",
      env: { PATH: `${bin}:${process.env.PATH ?? ""}` },
      log: (line) => lines.push(line),
    });
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    if (programDir) rmSync(programDir, { recursive: true, force: true });
  });

  it(
    "creates, updates, replaces, imports with no diff after, and destroys",
    async () => {
      write({ name: "Support", connection: "one" });
      const created = await engine.up();
      expect(created.steps.map((step) => [step.name, step.op]).sort()).toEqual([
        ["elsewhere", "create"],
        ["pc", "create"],
        ["support", "create"],
      ]);
      // Each provider instance in its own workspace.
      expect(((await otherApi("GET", "/apps")).body as { data: { name: string }[] }).data.map((app) => app.name)).toEqual(["Elsewhere"]);
      expect(((await api("GET", "/apps")).body as { data: { name: string }[] }).data.map((app) => app.name)).toEqual(["Support"]);
      const checkpoint = () => readFileSync(engine.checkpointFile(), "utf8");
      expect(checkpoint()).not.toContain(KEY);
      expect(checkpoint()).not.toContain(API_KEY);
      expect(checkpoint()).not.toContain(OTHER_KEY);

      write({ name: "Support 2", connection: "two" });
      const changed = Object.fromEntries((await engine.up()).steps.map((step) => [step.name, step]));
      expect(changed.support).toMatchObject({ op: "update", changes: ["name"] });
      expect(changed.pc).toMatchObject({ op: "replace" });
      expect(changed.pc!.replaces).toContain("name");
      expect(((await api("GET", "/providers")).body as { data?: unknown[] }).data ?? (await api("GET", "/providers")).body).toHaveLength(1);

      const made = (await api("POST", "/apps", { name: "Made outside", description: "by API" })).body.guid as string;
      write({ name: "Support 2", connection: "two", importId: made });
      await engine.up();
      // Imported, not created: the checkpoint holds the object made through the API, and no second one exists.
      const resources = JSON.parse(checkpoint()).checkpoint.latest.resources as {
        urn: string;
        id?: string;
        outputs?: Record<string, unknown>;
      }[];
      expect(resources.find((resource) => resource.urn.endsWith("::adopted"))).toMatchObject({
        id: made,
        outputs: { name: "Made outside" },
      });
      expect(((await api("GET", "/apps")).body as { data: unknown[] }).data).toHaveLength(2);
      const again = await engine.preview();
      expect(again.steps.filter((step) => step.op !== "same")).toEqual([]);

      await engine.destroy();
      expect(((await api("GET", "/apps")).body as { data: unknown[] }).data).toEqual([]);
      expect(((await otherApi("GET", "/apps")).body as { data: unknown[] }).data).toEqual([]);
      for (const secret of [KEY, API_KEY, OTHER_KEY]) expect(lines.join("\n").includes(secret)).toBe(false);
    },
    TIMEOUT,
  );
});
