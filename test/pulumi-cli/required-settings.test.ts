/**
 * Required settings are checked in preview, on the real CLI: a stack whose resources have no service URL or no API key
 * from any source (stack config, the environment, a resource's `connection`) fails `preview`, naming the setting and
 * its three sources, having sent no request; with the setting from any one source the preview passes. Both forms: the
 * dynamic resources of a TypeScript program and the plugin's of a YAML project. Required under CI=true.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { PulumiCliEngine } from "../../src/testing";
import { startCliProject, yamlCliFor } from "../plugin/cli-project";
import { cliName, makeProgramDir, pulumiCliFor } from "./harness";

const FILE = "test/pulumi-cli/required-settings.test.ts";
const cli = pulumiCliFor(FILE);
const yamlCli = cli && yamlCliFor(FILE);
const TIMEOUT = 180_000;
const NO_URL = "No service URL: set `pulumi config set gms:baseUrl https://.../v1`, or GMS_BASE_URL, or the resource's connection.baseUrl";
const NO_KEY = "No API key: set `pulumi config set --secret gms:apiKey ...`, or GMS_API_KEY, or the resource's connection.apiKey";

let emulator: RunningEmulator;
const seen: RequestLogEntry[] = [];
beforeAll(async () => {
  emulator = await startEmulator({ port: 0, db: ":memory:", onRequestComplete: (entry) => seen.push(entry) });
});
afterAll(() => emulator?.close());

describe.skipIf(!cli)(`required settings in preview, dynamic resources on the real CLI (${cliName(cli)})`, () => {
  let dir: string;
  beforeAll(() => {
    dir = makeProgramDir("gms-cli-required", `import * as gms from "pulumi-gms";\nnew gms.App("support", { name: "Support" });\n`);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const engine = (stack: string, config: Record<string, string | { secret: string }>, env: Record<string, string> = {}) =>
    new PulumiCliEngine({
      cli: cli!,
      programDir: dir,
      stateDir: join(dir, "state"),
      project: "required",
      stack,
      config,
      env,
      secretsPassphrase: "required",
      log: () => undefined,
    });

  it(
    "fails a preview with no service URL, then with no API key, naming each with its sources and sending nothing",
    async () => {
      const before = seen.length;
      await expect(engine("no-url", { "gms:apiKey": { secret: emulator.apiKey } }).preview()).rejects.toThrow(NO_URL);
      await expect(engine("no-key", { "gms:baseUrl": emulator.url }).preview()).rejects.toThrow(NO_KEY);
      expect(seen.slice(before)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "previews when the environment gives the setting the config does not",
    async () => {
      const result = await engine("from-env", { "gms:apiKey": { secret: emulator.apiKey } }, { GMS_BASE_URL: emulator.url }).preview();
      expect(result.counts.create).toBe(1);
    },
    TIMEOUT,
  );
});

describe.skipIf(!yamlCli)(`required settings in preview, the plugin's resources on the real CLI (${cliName(yamlCli)})`, () => {
  it(
    "fails a preview with no service URL, naming it with its sources and sending nothing; with it in config, previews",
    async () => {
      const project = startCliProject(
        yamlCli!,
        "gms-required-yaml",
        "name: required\nruntime: yaml\nresources:\n  support:\n    type: gms:index:App\n    properties:\n      name: Support\n",
      );
      try {
        await project.initStack("dev", { "gms:apiKey": { secret: emulator.apiKey } });
        const before = seen.length;
        const refused = await project.pulumi("preview").catch((error: Error) => error.message);
        expect(refused).toContain("exited");
        expect(refused.replace(/\s+/g, " ")).toContain(NO_URL);
        expect(refused).not.toContain(emulator.apiKey);
        expect(seen.slice(before)).toEqual([]);
        await project.pulumi("config", "set", "gms:baseUrl", emulator.url);
        expect(await project.pulumi("preview")).toMatch(/\+ 2 to create|2 to create/);
      } finally {
        project.close();
      }
    },
    TIMEOUT,
  );
});
