/**
 * The dynamic resources' request log on the real CLI, with its real dynamic-provider host (PulumiCliEngine; no stub):
 * a TypeScript program of three Apps and a connection with a secret key, run with `--debug` and GMS_LOG=debug in the
 * CLI's environment, shows a debug line for every request the emulator saw (method, path, attempt and status), and
 * none of another, through its `up`, a changed program's `up` and `destroy`; no line, nor anything else in the output,
 * shows the API key or the connection's key. Without GMS_LOG the same `--debug` run shows none. The host never gives
 * the SDK the engine's address, so the lines reach the engine through src/plugin/engine-log.ts. Skipped, with the
 * reason printed, without a CLI (required under CI=true).
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { PulumiCliEngine } from "../../src/testing";
import { cliName, makeProgramDir, pulumiCliFor } from "./harness";

const cli = pulumiCliFor("test/pulumi-cli/dynamic-debug-log.test.ts");
const API_KEY = "gms_dynamic_debug_log_key_73c1";
const CONNECTION_KEY = "sk-dynamic-debug-log-connection-5e0a";
/** Three CLI runs of four resources, each starting the program and the provider host, on a busy 2-core machine. */
const TIMEOUT = 240_000;

const program = (description: string) => `import * as pulumi from "@pulumi/pulumi";
import * as gms from "pulumi-gms";
const config = new pulumi.Config();
for (const name of ["support", "sales", "billing"]) new gms.App(name, { name: \`Debug log \${name}\`, description: "${description}" });
new gms.ProviderConnection("openai", { provider: "openai", key: config.requireSecret("connectionKey"), name: "Debug log" });
`;

/** The request lines of the output: `debug: gms: METHOD /path attempt N: <status> in <ms> ms`. */
const requestLines = (output: string[]) => output.filter((line) => /\bgms: (GET|POST|PUT|PATCH|DELETE) \//.test(line));

describe.skipIf(cli === undefined)(`the dynamic resources' debug log with GMS_LOG=debug, on the real CLI (${cliName(cli)})`, () => {
  let dir: string;
  let emulator: RunningEmulator;
  const seen: RequestLogEntry[] = [];
  beforeAll(async () => {
    dir = makeProgramDir("gms-cli-dynamic-debug-log", program("first"));
    emulator = await startEmulator({
      port: 0,
      db: ":memory:",
      workspaces: [{ name: "Debug log", apiKey: API_KEY }],
      onRequestComplete: (entry) => seen.push(entry),
    });
  });
  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The engine of the stack, its output lines kept; `logging`: GMS_LOG=debug in the CLI's environment. */
  const engineWith = (logging: boolean, output: string[]) =>
    new PulumiCliEngine({
      cli: cli!,
      programDir: dir,
      stateDir: join(dir, "state"),
      project: "dynamic-debug-log",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: API_KEY }, connectionKey: { secret: CONNECTION_KEY } },
      env: { GMS_LOG: logging ? "debug" : "" },
      secretsPassphrase: "dynamic-debug-log",
      debug: true,
      log: (line) => output.push(line),
    });

  /** Runs `operation` with its output, and the requests the emulator saw meanwhile. */
  const run = async (logging: boolean, operation: "up" | "destroy") => {
    const output: string[] = [];
    const from = seen.length;
    await engineWith(logging, output)[operation]();
    return { output, requests: seen.slice(from) };
  };

  /**
   * Every request has its line, and every line is of a request the emulator saw (the CLI shows each debug line twice: as
   * it comes, and among the diagnostics at the end); nothing shows a key.
   */
  const expectEveryRequestLogged = ({ output, requests }: { output: string[]; requests: RequestLogEntry[] }) => {
    expect(requests.length).toBeGreaterThan(0);
    const lines = requestLines(output);
    const lineOf = (request: RequestLogEntry) =>
      new RegExp(
        `\\bgms: ${request.method} ${request.path.replace(/^\/v1/, "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} attempt \\d+: ${request.status} in \\d+ ms`,
      );
    for (const request of requests)
      expect(
        lines.some((line) => lineOf(request).test(line)),
        `a debug line for ${request.method} ${request.path} → ${request.status} among\n${lines.join("\n")}`,
      ).toBe(true);
    expect(
      lines.filter((line) => !requests.some((request) => lineOf(request).test(line))),
      "lines of requests the emulator did not see",
    ).toEqual([]);
    const text = output.join("\n");
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain(CONNECTION_KEY);
  };

  it(
    "shows a line for every request of an up, a changed program's up and a destroy; none without GMS_LOG; no key",
    async () => {
      const created = await run(true, "up");
      expect(created.requests.filter((request) => request.method === "POST")).toHaveLength(4);
      expectEveryRequestLogged(created);

      // The same program directory, the Apps' description changed: three updates in place.
      writeFileSync(join(dir, "index.ts"), program("second"));
      const quiet = await run(false, "up");
      expect(quiet.requests.some((request) => request.method === "PUT" || request.method === "PATCH")).toBe(true);
      expect(requestLines(quiet.output)).toEqual([]);

      const destroyed = await run(true, "destroy");
      expect(destroyed.requests.filter((request) => request.method === "DELETE")).toHaveLength(4);
      expectEveryRequestLogged(destroyed);
    },
    TIMEOUT,
  );
});
