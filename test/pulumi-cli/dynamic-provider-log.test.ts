/**
 * The dynamic resources' warnings and info lines on the real CLI, with its real dynamic-provider host (PulumiCliEngine;
 * no stub), in the output of `pulumi up`:
 * - the provider's own lines, written in the host: a FineTune's create waits for its provider job (three seconds of
 *   `processing` in the emulator) and logs when it starts waiting and when the job has succeeded. The host never gives
 *   the SDK the engine's address, so these reach the engine through src/plugin/engine-log.ts (src/provider/log.ts);
 *   through the SDK's log they went to the host's standard output and error instead, which the CLI shows as the host's
 *   console output (`info: [runtime] ...`);
 * - a program's warning about a resource: two Apps of one name (src/provider/identity.ts), the warning under the second
 *   App in the CLI's diagnostics.
 * No line shows the API key or the connection's key. Skipped, with the reason printed, without a CLI (required under CI=true).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { PulumiCliEngine } from "../../src/testing";
import { TEST_FIXTURES, callOverHttp } from "../emulator/harness";
import { logData, providerConnection } from "../provider/fine-tune-fixture";
import { cliName, makeProgramDir, pulumiCliFor } from "./harness";

const cli = pulumiCliFor("test/pulumi-cli/dynamic-provider-log.test.ts");
/** One CLI run of three resources, one of which waits three seconds for its job, on a busy 2-core machine. */
const TIMEOUT = 180_000;

const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";
const config = new pulumi.Config();
new gms.App("first", { name: "Twin" });
new gms.App("second", { name: "Twin" });
new gms.FineTune("tone", {
  name: "Logged tone",
  app: config.require("app"),
  dataset: config.require("dataset"),
  dataIds: config.requireObject<number[]>("dataIds"),
  baseModel: "gpt-4o-mini",
  providerConnection: config.requireNumber("connection"),
});
`;

describe.skipIf(cli === undefined)(`the dynamic resources' warnings and info lines, on the real CLI (${cliName(cli)})`, () => {
  let dir: string;
  let emulator: RunningEmulator;
  beforeAll(async () => {
    dir = makeProgramDir("gms-cli-dynamic-provider-log", PROGRAM);
    emulator = await startEmulator({ port: 0, db: ":memory:", fixtures: TEST_FIXTURES });
  });
  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    "shows the FineTune's wait as info lines from the host, and the twin warning under the second App; no key",
    async () => {
      const { support, ids } = await logData(emulator, 10);
      const dataset = (await callOverHttp(emulator, "POST", "/datasets", { name: "Logged examples", app: support })).body.guid as string;
      const connection = await providerConnection(emulator, "Logged");
      const connectionKey = "sk-Logged";
      const output: string[] = [];
      const engine = new PulumiCliEngine({
        cli: cli!,
        programDir: dir,
        stateDir: join(dir, "state"),
        project: "dynamic-provider-log",
        stack: "dev",
        config: {
          "gms:baseUrl": emulator.url,
          "gms:apiKey": { secret: emulator.apiKey },
          app: support,
          dataset,
          dataIds: JSON.stringify(ids),
          connection: String(connection.id),
        },
        secretsPassphrase: "dynamic-provider-log",
        log: (line) => output.push(line),
      });
      const up = await engine.up();
      expect(up.counts.create).toBe(3);
      const text = output.join("\n");

      // The host's lines, at info level, as the engine's log (the host names no resource: the CLI shows them under the
      // stack). Through the SDK's log without an engine they were the host's console lines, `info: [runtime] ...`.
      expect(text).not.toContain("[runtime]");
      expect(text).toMatch(/FineTune "Logged tone" \([0-9a-f-]{36}\): waiting up to 3600 s for provider job \S+ to leave processing/);
      expect(text).toMatch(/FineTune "Logged tone" \([0-9a-f-]{36}\): provider job \S+ succeeded after \d+\.\d s/);

      // The warning, in the diagnostics under the second App (the CLI's heading: `<type> (<name>):`).
      const diagnostics = output.slice(output.findIndex((line) => /^Diagnostics:/.test(line)));
      const heading = diagnostics.findIndex((line) => /gms:App \(second\):$/.test(line.trim()));
      expect(heading, `a heading of the second App among\n${diagnostics.join("\n")}`).toBeGreaterThan(0);
      expect(diagnostics[heading + 1]).toMatch(/^\s*warning: App "second" has the name "Twin" of App "first" in the same workspace/);

      expect(text).not.toContain(emulator.apiKey);
      expect(text).not.toContain(connectionKey);
    },
    TIMEOUT,
  );
});
