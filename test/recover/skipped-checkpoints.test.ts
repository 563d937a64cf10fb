/**
 * A run killed with PULUMI_SKIP_CHECKPOINTS=true, on the real CLI: the engine then writes the checkpoint only when a
 * run ends, so a SIGKILLed run leaves the checkpoint as it was before it and its lock, and no pending operation names
 * what it did. What docs/scaling.md recommends skipping checkpoints for, and why not for the rest:
 * - an adoption (`up` whose every step imports) killed mid-run: `pulumi-gms recover --yes` releases the lock (on a new
 *   stack too, which holds no resource to name its project) and warns that the run wrote no checkpoint; the same `up`
 *   again imports every object once, and the service holds what it held before, no object more or less;
 * - a `destroy` killed mid-run: recover, then the same `destroy`, which meets the objects already deleted as gone;
 *   nothing is left in the service or the stack;
 * - a `refresh` killed mid-run: recover, then the same `refresh`; the stack holds every object, `preview` shows no change;
 * - an `up` that creates, killed mid-run: the objects made are in the service and in no stack, recover can find none of
 *   them (it warns), and running the `up` again makes them a second time. This is why skipping checkpoints is not
 *   recommended for a run that creates.
 * Native resources in a Pulumi YAML project, the plugin on PATH, every command with PULUMI_SKIP_CHECKPOINTS=true. The
 * kill lands while an `answerGate` holds the answer to the fifth import read, delete, refresh read or create (the
 * first four let through), at a moment the test holds, however busy the machine. The CLI and the YAML language host are
 * required under CI=true.
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RecoveryReport } from "../../src/recover/report";
import { cliEnvironment } from "../../src/testing";
import { type CliProject, startCliProject, yamlCliFor } from "../plugin/cli-project";
import { cliName } from "../pulumi-cli/harness";
import { type AnswerGate, answerGate, api, gmsPendingCreates, gmsResources, killWhen, latestDeployment, runRecover } from "./harness";

const cli = yamlCliFor("test/recover/skipped-checkpoints.test.ts");
const PREFIX = "gms-skipped-checkpoints";
const PROJECT = "skipped-checkpoints";
const API_KEY = "gms_skipped_checkpoints_key_4e1d";
const COUNT = 12;
/** The answers let through before the gate holds the next one. */
const PASSED = 4;
const TIMEOUT = 300_000;
const SKIP = { PULUMI_SKIP_CHECKPOINTS: "true" };

/** The project: `COUNT` Apps named after the stack, each imported from `guids[i]` when given. */
function projectYaml(guids?: string[]): string {
  const lines = [`name: ${PROJECT}`, "runtime: yaml", "resources:"];
  for (let i = 0; i < COUNT; i++) {
    lines.push(
      `  app-${i}:`,
      "    type: gms:index:App",
      "    properties:",
      `      name: \${pulumi.stack}-app-${i}`,
      "      description: skipped",
    );
    if (guids) lines.push("    options:", `      import: ${guids[i]}`);
  }
  return `${lines.join("\n")}\n`;
}

/** Whether a request is a read or a delete of one App: `GET|DELETE /v1/apps/<guid>`. */
const ofOneApp = (wanted: string) => (method: string, path: string) => method === wanted && /^\/v1\/apps\/[^/?]+$/.test(path);

describe.skipIf(!cli)(`a run killed with PULUMI_SKIP_CHECKPOINTS=true, on the real CLI (${cliName(cli)})`, () => {
  let emulator: RunningEmulator;
  let project: CliProject;
  let env: NodeJS.ProcessEnv;
  const gates: AnswerGate[] = [];
  const service = () => ({ url: emulator.url, apiKey: API_KEY });
  const checkpoint = (stack: string) => join(project.root, "state", ".pulumi", "stacks", PROJECT, `${stack}.json`);
  const lockFiles = (stack: string) => {
    const dir = join(project.root, "state", ".pulumi", "locks", "organization", PROJECT, stack);
    try {
      return readdirSync(dir).filter((file) => file.endsWith(".json"));
    } catch {
      return [];
    }
  };
  /** The Apps of `stack` in the service (named `<stack>-app-<i>`), their names and GUIDs, sorted by name. */
  const appsOf = async (stack: string) =>
    (await api<{ data: { guid: string; name: string }[] }>(service(), "/apps?limit=100")).data
      .filter((app) => app.name.startsWith(`${stack}-`))
      .map(({ guid, name }) => ({ guid, name }))
      .sort((a, b) => a.name.localeCompare(b.name) || a.guid.localeCompare(b.guid));
  /** The ids of the Apps the stack records, sorted. */
  const recorded = (stack: string) =>
    gmsResources(latestDeployment(checkpoint(stack)))
      .map((resource) => resource.id!)
      .sort();

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, workspaces: [{ name: "Skipped", apiKey: API_KEY }] });
    project = startCliProject(cli!, PREFIX, projectYaml(), SKIP);
    // As startCliProject runs the CLI (its backend, passphrase and home, the plugin on PATH), checkpoints skipped.
    env = cliEnvironment(
      cli!,
      { backendDir: join(project.root, "state"), passphrase: `${PREFIX}-passphrase`, pulumiHome: join(project.root, "home") },
      { ...process.env, ...SKIP, PATH: `${join(project.root, "bin")}:${process.env.PATH ?? ""}` },
    );
  }, TIMEOUT);
  afterAll(async () => {
    for (const gate of gates) await gate.close();
    await emulator?.close();
    project?.close();
  });

  /** A stack whose service is behind a gate holding the answers `holds` names (creates by default) after the first four. */
  const stackBehindGate = async (stack: string, holds?: (method: string, path: string) => boolean) => {
    const gate = await answerGate(emulator.url, PASSED, holds ? { holds } : {});
    gates.push(gate);
    await project.initStack(stack, { "gms:baseUrl": gate.url, "gms:apiKey": { secret: API_KEY }, "gms:requestDeadlineMs": "3000" });
    return gate;
  };

  /** `pulumi <operation>` of `stack` as a user types it, SIGKILLed once the gate holds an answer; what was killed. */
  const killed = async (stack: string, gate: AnswerGate, operation: string[]) => {
    const run = new Promise<number | null>((resolve) => {
      const args = [...operation, "--yes", "--skip-preview", "--parallel", "3", "--stack", stack, "--non-interactive"];
      spawn(cli!.bin, args, { cwd: project.dir, env, stdio: "ignore" }).once("close", resolve);
    });
    const before = latestDeployment(checkpoint(stack));
    const kill = await killWhen(cli!, checkpoint(stack), run, () => gate.held() > 0);
    gate.open();
    expect(kill.some((found) => found.args.startsWith(`${cli!.bin} ${operation[0]}`))).toBe(true);
    expect(await run).not.toBe(0);
    // The checkpoint is as the run found it: it wrote nothing, not even a pending operation. Its lock stays.
    expect(latestDeployment(checkpoint(stack))).toEqual(before);
    expect(gmsPendingCreates(latestDeployment(checkpoint(stack)))).toEqual([]);
    expect(lockFiles(stack)).toHaveLength(1);
  };

  /** `pulumi-gms recover --stack <stack> --yes --json`: the lock released, the warning given, nothing else to settle. */
  const recover = async (stack: string) => {
    const done = await runRecover(["--stack", stack, "--yes", "--json"], { env, cwd: project.dir });
    expect(done.code, done.err).toBe(0);
    const report = JSON.parse(done.out) as RecoveryReport;
    expect(report).toMatchObject({ applied: true, pendingCreates: [], otherOperations: [], blockers: [], next: [] });
    expect(report.lock).toMatchObject({ readable: true, release: true, holders: [expect.objectContaining({ status: "gone" })] });
    expect(report.warnings).toEqual([expect.stringContaining("wrote no checkpoint after it began")]);
    expect(report.warnings[0]).toContain("PULUMI_SKIP_CHECKPOINTS=true");
    expect(lockFiles(stack)).toEqual([]);
    expect(done.err).not.toContain(API_KEY);
    return report;
  };

  it(
    "an adoption killed mid-run: recover releases the lock of the new stack, the same up imports every object once",
    async () => {
      const stack = "adopt";
      const made = await Promise.all(
        Array.from({ length: COUNT }, async (_, i) => {
          const response = await fetch(`${emulator.url}/apps`, {
            method: "POST",
            headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
            body: JSON.stringify({ name: `${stack}-app-${i}`, description: "skipped" }),
          });
          return ((await response.json()) as { guid: string }).guid;
        }),
      );
      const seeded = await appsOf(stack);
      project.write(projectYaml(made));
      const gate = await stackBehindGate(stack, ofOneApp("GET"));
      await killed(stack, gate, ["up"]);
      expect(recorded(stack)).toEqual([]);
      expect(await appsOf(stack)).toEqual(seeded);

      const report = await recover(stack);
      expect(report.since).not.toBeNull();
      await project.pulumi("up", "--yes", "--skip-preview", "--stack", stack);
      expect(await appsOf(stack)).toEqual(seeded);
      expect(recorded(stack)).toEqual(made.sort());
      await project.pulumi("preview", "--expect-no-changes", "--stack", stack);
      await project.pulumi("destroy", "--yes", "--skip-preview", "--stack", stack);
      expect(await appsOf(stack)).toEqual([]);
      project.write(projectYaml());
    },
    TIMEOUT,
  );

  it(
    "a destroy killed mid-run: recover, then the same destroy leaves nothing in the service or the stack",
    async () => {
      const stack = "gone";
      const gate = await stackBehindGate(stack, ofOneApp("DELETE"));
      await project.pulumi("up", "--yes", "--skip-preview", "--stack", stack);
      expect(await appsOf(stack)).toHaveLength(COUNT);
      await killed(stack, gate, ["destroy"]);
      // Some objects are deleted already; the stack still records every one.
      expect((await appsOf(stack)).length).toBeLessThan(COUNT);
      expect(recorded(stack)).toHaveLength(COUNT);

      await recover(stack);
      await project.pulumi("destroy", "--yes", "--skip-preview", "--stack", stack);
      expect(await appsOf(stack)).toEqual([]);
      expect(recorded(stack)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "a refresh killed mid-run: recover, then the same refresh; the stack holds every object and previews no change",
    async () => {
      const stack = "read";
      const gate = await stackBehindGate(stack, ofOneApp("GET"));
      await project.pulumi("up", "--yes", "--skip-preview", "--stack", stack);
      const live = await appsOf(stack);
      await killed(stack, gate, ["refresh"]);
      await recover(stack);
      await project.pulumi("refresh", "--yes", "--skip-preview", "--expect-no-changes", "--stack", stack);
      expect(await appsOf(stack)).toEqual(live);
      expect(recorded(stack)).toEqual(live.map((app) => app.guid).sort());
      await project.pulumi("preview", "--expect-no-changes", "--stack", stack);
      await project.pulumi("destroy", "--yes", "--skip-preview", "--stack", stack);
      expect(await appsOf(stack)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "an up that creates, killed mid-run: its objects are in no stack, recover finds none and warns, and up again makes them twice",
    async () => {
      const stack = "made";
      const gate = await stackBehindGate(stack);
      await killed(stack, gate, ["up"]);
      const orphans = await appsOf(stack);
      // The four answered creates and the one held: objects the service made, which no stack records.
      expect(orphans.length).toBeGreaterThan(PASSED);
      expect(recorded(stack)).toEqual([]);

      await recover(stack);
      await project.pulumi("up", "--yes", "--skip-preview", "--stack", stack);
      const after = await appsOf(stack);
      expect(after).toHaveLength(COUNT + orphans.length);
      expect(new Set(after.map((app) => app.name)).size).toBe(COUNT);
      process.stdout.write(`skipped checkpoints: a killed up that creates left ${orphans.length} objects that the next up made again\n`);

      // Leave nothing: destroy what the stack holds, and delete the orphans through the API.
      await project.pulumi("destroy", "--yes", "--skip-preview", "--stack", stack);
      for (const { guid } of orphans)
        await fetch(`${emulator.url}/apps/${guid}`, { method: "DELETE", headers: { authorization: `Bearer ${API_KEY}` } });
      expect(await appsOf(stack)).toEqual([]);
    },
    TIMEOUT,
  );
});
