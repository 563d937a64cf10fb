/**
 * A value the program made secret (`config.requireSecret`), in a field the kind does not declare secret,
 * stays secret on both engines: a create that fails with it in the failure's text (a Context Source whose
 * URL carries a token, fetched by nobody, whose undo cannot delete it) shows it blanked in the error, in
 * every line the engine prints and in the init errors the state keeps, and the state holds the URL only
 * encrypted. The real Pulumi CLI runs the same when present (required under CI=true).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { EngineError, LocalEngine, PulumiCliEngine, installPackageCopy } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { expectNoSecretIn } from "../no-secret";
import { cliName, pulumiCliFor } from "../pulumi-cli/harness";

const TOKEN = "tok-9c41e7a2d05fb3";
const API_KEY = "gms_secret_values_key_4a7e";
const cli = pulumiCliFor("secret-values.test.ts");
const TIMEOUT = 240_000;

interface Bed {
  dir: string;
  emulator: RunningEmulator;
  context: string;
  lines: string[];
}

async function startBed(prefix: string): Promise<Bed> {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name: `${prefix}-program`,
      private: true,
      type: "module",
    }),
  );
  writeFileSync(
    join(dir, "index.ts"),
    `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";
const config = new pulumi.Config();
new gms.ContextSource("doc", {
  context: config.require("context"),
  url: config.requireSecret("docUrl"),
  process: true,
  waitForIndexing: { timeoutSeconds: 20 },
});
`,
  );
  installPackageCopy(dir);
  const emulator = await startEmulator({
    fixtures: {
      workspaces: [
        {
          name: "Acme",
          slug: "acme",
          apiKey: API_KEY,
          contexts: [{ name: "Docs" }],
        },
      ],
    },
  });
  const acme = { url: emulator.url, apiKey: API_KEY };
  const workspace = (await callOverHttp(acme, "GET", "/workspaces/current")).body as { guid: string };
  const contexts = (await callOverHttp(acme, "GET", `/workspaces/${workspace.guid}/context`)).body as { guid: string }[];
  return { dir, emulator, context: contexts[0]!.guid, lines: [] };
}

const engineOptions = (bed: Bed) => ({
  programDir: bed.dir,
  project: "secret-values",
  stack: "dev",
  config: {
    "gms:baseUrl": bed.emulator.url,
    "gms:apiKey": { secret: API_KEY },
    context: bed.context,
    // Nothing listens on port 9: processing fails, with the URL in the failure's text.
    docUrl: { secret: `http://127.0.0.1:9/handbook.txt?token=${TOKEN}` },
  },
  secretsPassphrase: "secret-values",
  env: { GMS_RETRY_BASE_DELAY_MS: "5", GMS_MAX_RETRIES: "1" },
  log: (line: string) => bed.lines.push(line),
});

const engines = [
  {
    name: "LocalEngine",
    make: (bed: Bed) => {
      const stateFile = join(bed.dir, "state.json");
      return {
        engine: new LocalEngine({ ...engineOptions(bed), stateFile }),
        stateFile,
      };
    },
  },
  ...(cli
    ? [
        {
          name: `the real CLI, ${cliName(cli)}`,
          make: (bed: Bed) => {
            const engine = new PulumiCliEngine({
              ...engineOptions(bed),
              cli,
              stateDir: join(bed.dir, "backend"),
            });
            return { engine, stateFile: engine.checkpointFile() };
          },
        },
      ]
    : []),
];

describe.each(engines)("a value the program made secret, on $name", ({ make }) => {
  let bed: Bed;
  beforeAll(async () => {
    bed = await startBed("gms-secret-values");
  }, TIMEOUT);
  afterAll(async () => {
    await bed?.emulator.close();
    if (bed) rmSync(bed.dir, { recursive: true, force: true });
  });

  it(
    "is blanked from a failed create's error, the engine's output and the state's init errors, and stored encrypted",
    async () => {
      const { engine, stateFile } = make(bed);
      // The undo's DELETE fails: the create is recorded as partial, its failure kept in the state as text.
      bed.emulator.faults.set({ error: 1, methods: ["DELETE"] });
      const failure = await engine.up().then(
        () => expect.unreachable("up succeeded"),
        (error: unknown) => error as EngineError,
      );
      bed.emulator.faults.set(undefined);
      expect(failure).toBeInstanceOf(EngineError);
      expect(failure.message).toContain("processing [secret] failed");
      expectNoSecretIn(failure, [TOKEN, API_KEY]);
      const state = readFileSync(stateFile, "utf8");
      const initErrors = JSON.stringify(
        (
          JSON.parse(state) as {
            checkpoint?: { latest?: { resources?: unknown[] } };
            resources?: unknown[];
          }
        ).resources ??
          (
            JSON.parse(state) as {
              checkpoint: { latest: { resources: unknown[] } };
            }
          ).checkpoint.latest.resources,
      );
      expect(initErrors).toMatch(/"initErrors":\["Cannot create ContextSource for \[secret\]/);
      for (const text of [failure.message, bed.lines.join("\n"), state]) expect(text).not.toContain(TOKEN);

      // Once the service deletes again, destroy removes the source the failed create left.
      await engine.destroy();
      const sources = await callOverHttp({ url: bed.emulator.url, apiKey: API_KEY }, "GET", `/contexts/${bed.context}/context_sources`);
      expect(sources.body).toEqual([]);
      expect(bed.lines.join("\n")).not.toContain(TOKEN);
    },
    TIMEOUT,
  );
});
