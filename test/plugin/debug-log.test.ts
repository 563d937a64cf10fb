/**
 * `pulumi up --debug` shows every request the provider plugin sends: a YAML project on the real CLI whose `up` makes
 * an App and a connection with a secret key, then changes the App in place, replaces the connection (another
 * provider type) and asks for a Skill the service refuses to create. Every request the emulator saw (method and path)
 * is a debug line of the resource that sent it, with its attempt, status and duration; no line shows the API key or
 * the provider key. `-v=9 --logtostderr --logflow` shows them in the engine's log; without either no such line is
 * shown. Required under CI=true, like the other CLI suites.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { cliName } from "../pulumi-cli/harness";
import { type CliProject, startCliProject, yamlCliFor } from "./cli-project";

const cli = yamlCliFor("plugin/debug-log.test.ts");
const API_KEY = "gms_debug_log_key_4a1e";
const PROVIDER_KEY = "sk-debug-log-provider-8c2f";
const TIMEOUT = 240_000;

const program = (appName: string, providerType: string, withSkill: boolean) => `name: debug-log
runtime: yaml
resources:
  support:
    type: gms:index:App
    properties:
      name: ${appName}
  openai:
    type: gms:index:ProviderConnection
    properties:
      provider: ${providerType}
      key: \${providerKey}
${
  withSkill
    ? `  search:
    type: gms:index:Skill
    properties:
      name: no-such-configured-skill
      type: web
`
    : ""
}`;

describe.skipIf(!cli)(`the plugin's debug log of every request, on the real CLI: ${cliName(cli)}`, () => {
  let emulator: RunningEmulator;
  let project: CliProject;
  const seen: RequestLogEntry[] = [];

  beforeAll(async () => {
    emulator = await startEmulator({
      port: 0,
      db: ":memory:",
      workspaces: [{ name: "Debug log", apiKey: API_KEY }],
      onRequestComplete: (entry) => seen.push(entry),
    });
    project = startCliProject(cli!, "gms-debug-log", program("Support", "openai", false));
    await project.initStack("dev", {
      "gms:baseUrl": emulator.url,
      "gms:apiKey": { secret: API_KEY },
      providerKey: { secret: PROVIDER_KEY },
    });
  }, TIMEOUT);
  afterAll(async () => {
    await emulator?.close();
    project?.close();
  });

  /** Runs `pulumi ...args`, with the requests the emulator saw meanwhile; a failing run's output too. */
  const run = async (...args: string[]) => {
    const from = seen.length;
    const output = await project.pulumi(...args).catch((error: Error) => error.message);
    return { output, requests: seen.slice(from) };
  };
  /** The debug lines the plugin wrote: `gms: <urn>: METHOD /path attempt N: <status> in <ms> ms`. */
  const lines = (output: string) => output.split("\n").filter((line) => /\bgms: urn:pulumi:/.test(line));

  it(
    "shows each request of an up with an update, a replacement and a refused create, as the resource's line; no key",
    async () => {
      const first = await run("up", "--yes", "--debug");
      expect(first.requests.length).toBeGreaterThan(0);

      // The App renamed in place, the connection replaced (made anew, then the old one deleted).
      project.write(program("Support desk", "anthropic", false));
      const second = await run("up", "--yes", "--debug");
      const methods = new Set(second.requests.map((request) => request.method));
      for (const method of ["PUT", "POST", "DELETE"]) expect(methods, `the second up sent a ${method}`).toContain(method);

      project.write(program("Support desk", "anthropic", true));
      const third = await run("up", "--yes", "--debug");
      expect(third.output).toContain("error:");
      expect(
        third.requests.some((request) => request.status >= 400),
        "the Skill's create was refused",
      ).toBe(true);

      for (const { output, requests } of [first, second, third]) {
        const logged = lines(output);
        for (const request of requests) {
          const path = request.path.replace(/^\/v1/, "");
          const line = logged.find((text) => text.includes(` ${request.method} ${path} attempt `) && text.includes(`: ${request.status}`));
          expect(line, `a debug line for ${request.method} ${path} → ${request.status}`).toBeDefined();
          expect(line).toMatch(/urn:pulumi:dev::debug-log::gms:index:\w+::\w+: /);
          expect(line).toMatch(/ in \d+ ms/);
        }
        expect(output).not.toContain(API_KEY);
        expect(output).not.toContain(PROVIDER_KEY);
      }
      // The refused create, by its resource.
      expect(lines(third.output).some((line) => line.includes("gms:index:Skill::search: POST /skills attempt 1: 4"))).toBe(true);
    },
    TIMEOUT,
  );

  it(
    "shows them among the engine's own logs with -v=9 --logtostderr --logflow",
    async () => {
      project.write(program("Support (verbose)", "anthropic", false));
      const verbose = await run("up", "--yes", "-v=9", "--logtostderr", "--logflow");
      const update = verbose.requests.find((request) => request.method === "PUT")!;
      expect(update).toBeDefined();
      expect(verbose.output).toContain(
        `gms: urn:pulumi:dev::debug-log::gms:index:App::support: PUT ${update.path.replace(/^\/v1/, "")} attempt 1: 200`,
      );
      expect(verbose.output).not.toContain(API_KEY);
      expect(verbose.output).not.toContain(PROVIDER_KEY);
    },
    TIMEOUT,
  );

  it(
    "shows none without --debug",
    async () => {
      project.write(program("Support", "openai", false));
      const quiet = await run("up", "--yes");
      expect(quiet.requests.length).toBeGreaterThan(0);
      expect(lines(quiet.output)).toEqual([]);
    },
    TIMEOUT,
  );
});
