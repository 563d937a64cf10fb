/**
 * `npm run demo`: the quickstart, offline, start to finish. No Pulumi CLI, no account, no network.
 *
 * 1. starts the emulator on a SQLite file (in a fresh temp directory, `gms-demo-*` under the OS temp
 *    dir, removed at the end; `--keep` keeps it) seeded with examples/quickstart/fixtures.yaml;
 * 2. copies examples/quickstart into that directory and installs the built package into its
 *    node_modules as a copy, as `npm install --install-links` would (`installPackageCopy`);
 * 3. runs the program through the real Pulumi CLI when one is installed (`npm run pulumi:install`, or `pulumi`
 *    on PATH), else through the offline engine (`pulumi-gms/testing`), and says which and why: preview, up (outputs, secrets
 *    as [secret]), up again (no changes, no API writes), a change (a new App description, updated in
 *    place, and a rotated provider key, which replaces the connection and the Model holding the key) as
 *    preview + up, an out-of-band rename and a refresh that shows it, and destroy;
 * 4. checks through the API that destroy left nothing of the program in the workspace.
 *
 * Each phase prints its plan and wall time, and the engine's phases the API requests the program and
 * the provider made; the demo checks every plan and exits non-zero when one is not what it should be
 * (or anything fails).
 *
 * `--parallel N` runs at most N steps at once (default: unbounded, as `pulumi up`); `--parallel 1` one at a time.
 * `--engine cli` insists on the real CLI (exit 2 without one), `--engine local` on the offline engine.
 *
 *   npm run demo            (builds first)      node examples/demo.mts [--keep] [--parallel N] [--engine cli|local]
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startEmulator } from "pulumi-gms/emulator";
import { type CliResult, type EngineOptions, LocalEngine, PulumiCliEngine, findPulumiCli, installPackageCopy } from "pulumi-gms/testing";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const QUICKSTART = join(ROOT, "examples", "quickstart");
const KEEP = process.argv.includes("--keep");
const PARALLEL = parallelOption(process.argv);
const ENGINE = engineOption(process.argv);
const FIRST_KEY = "sk-demo-0001-first";
const ROTATED_KEY = "sk-demo-0002-rotated";

const work = mkdtempSync(join(tmpdir(), "gms-demo-"));
const programDir = join(work, "quickstart");
const requests: { method: string; path: string }[] = [];
const phases: { name: string; seconds: number }[] = [];
let phaseNumber = 0;
const PHASES = 9;

/** `--parallel N` (a whole number of at least 1), else undefined; anything else is a usage error (exit 2). */
function parallelOption(argv: string[]): number | undefined {
  const at = argv.indexOf("--parallel");
  if (at < 0) return undefined;
  const value = Number(argv[at + 1]);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`--parallel takes a whole number of at least 1 (got ${argv[at + 1] ?? "nothing"})`);
    process.exit(2);
  }
  return value;
}

/** `--engine cli|local`, else undefined (the CLI when there is one); anything else is a usage error (exit 2). */
function engineOption(argv: string[]): "cli" | "local" | undefined {
  const at = argv.indexOf("--engine");
  if (at < 0) return undefined;
  const value = argv[at + 1];
  if (value !== "cli" && value !== "local") {
    console.error(`--engine takes cli or local (got ${value ?? "nothing"})`);
    process.exit(2);
  }
  return value;
}

/** The operations the demo runs, which both engines offer (the CLI's results have no `stateBytesWritten`). */
interface Engine {
  preview(): Promise<CliResult>;
  up(): Promise<CliResult>;
  refresh(): Promise<CliResult>;
  destroy(): Promise<CliResult>;
}

/** The real Pulumi CLI when one is found (or `--engine cli` insists), else LocalEngine; says which and why. */
function chooseEngine(): (options: EngineOptions) => Engine {
  const lookup = ENGINE === "local" ? undefined : findPulumiCli();
  if (lookup?.found) {
    const { cli } = lookup;
    const where = cli.source === "project" ? `${cli.bin}, built by \`npm run pulumi:install\`` : `${cli.bin}, on PATH`;
    console.log(`engine: the real Pulumi CLI ${cli.version} (${where}); \`--engine local\` runs the offline engine instead`);
    return ({ stateFile, ...options }) => new PulumiCliEngine({ ...options, cli, stateDir: dirname(stateFile) });
  }
  if (ENGINE === "cli") {
    console.error(`--engine cli: ${lookup?.reason}`);
    process.exit(2);
  }
  console.log(
    ENGINE === "local"
      ? "engine: LocalEngine, the offline engine (--engine local)"
      : `engine: LocalEngine, the offline engine, since there is ${lookup?.reason}`,
  );
  return (options) => new LocalEngine(options);
}

function fail(message: string): never {
  throw new Error(`demo: ${message}`);
}

/** The demo's own API calls (its checks and the out-of-band rename), kept out of each phase's count. */
const own = { requests: 0, writes: 0 };

/**
 * Runs one phase: a header, the phase's own printing, then its wall time and, for the engine's phases,
 * the API requests the program and the provider made.
 */
async function phase<T>(name: string, run: () => Promise<T>, options: { counted?: boolean } = {}): Promise<T> {
  phaseNumber += 1;
  console.log(`\n==> [${phaseNumber}/${PHASES}] ${name}`);
  const first = requests.length;
  const ownBefore = { ...own };
  const started = performance.now();
  const value = await run();
  const seconds = (performance.now() - started) / 1000;
  const made = requests.slice(first);
  const total = made.length - (own.requests - ownBefore.requests);
  const writes = made.filter((request) => request.method !== "GET").length - (own.writes - ownBefore.writes);
  phases.push({ name, seconds });
  console.log(`<== ${name}: ${seconds.toFixed(2)} s${options.counted ? `, ${total} API requests (${writes} writes)` : ""}`);
  return value;
}

const ORDER = ["create", "update", "replace", "delete", "refresh", "read", "same"] as const;

/** `update 1, replace 2, same 6` style counts, for checking a plan. */
const summary = (result: CliResult) =>
  ORDER.filter((op) => result.counts[op] > 0)
    .map((op) => `${op} ${result.counts[op]}`)
    .join(", ");

function expectPlan(result: CliResult, expected: string, steps?: string[]): void {
  if (summary(result) !== expected) fail(`${result.operation} planned "${summary(result)}", expected "${expected}"`);
  if (steps) {
    // The CLI reports steps as they start, in parallel; the plan is compared in a fixed order.
    const actual = result.steps
      .filter((step) => step.op !== "same")
      .map((step) => `${step.op} ${step.name}`)
      .sort();
    const wanted = [...steps].sort();
    if (JSON.stringify(actual) !== JSON.stringify(wanted))
      fail(`${result.operation} planned [${actual.join(", ")}], expected [${wanted.join(", ")}]`);
  }
}

async function main(): Promise<void> {
  const makeEngine = chooseEngine();
  const emulator = await phase("emulator on SQLite, quickstart fixtures", async () => {
    const db = join(work, "gms-emulator.db");
    const running = await startEmulator({
      db,
      port: 0,
      fixtures: join(QUICKSTART, "fixtures.yaml"),
      onRequestComplete: (entry) => requests.push(entry),
    });
    console.log(`gms-emulator listening on ${running.url}`);
    console.log(`database: ${db}`);
    return running;
  });
  const api = async (method: string, path: string, body?: unknown) => {
    own.requests += 1;
    if (method !== "GET") own.writes += 1;
    const response = await fetch(`${emulator.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${emulator.apiKey}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) fail(`${method} ${path} answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as any;
  };

  try {
    await phase("program: examples/quickstart + the package (a copy)", async () => {
      cpSync(QUICKSTART, programDir, { recursive: true, filter: (source) => !source.includes(`${QUICKSTART}/node_modules`) });
      const installed = installPackageCopy(programDir);
      console.log(`program: ${programDir}`);
      console.log(`package: ${installed}`);
    });

    const options: EngineOptions = {
      programDir,
      stateFile: join(work, "state", "dev.json"),
      project: "gms-quickstart",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey }, openaiKey: { secret: FIRST_KEY } },
      secretsPassphrase: "gms-demo-passphrase",
      ...(PARALLEL === undefined ? {} : { parallel: PARALLEL }),
    };
    const engine = makeEngine(options);

    expectPlan(await phase("preview", () => engine.preview(), { counted: true }), "create 9");
    const up = await phase("up", () => engine.up(), { counted: true });
    expectPlan(up, "create 9");
    const appGuid = up.outputs.appGuid?.value as string;
    if (up.outputs.handbookStatus?.value !== "indexed") fail(`the handbook was not indexed: ${JSON.stringify(up.outputs.handbookStatus)}`);
    if (up.outputs.modelConnection?.value !== up.outputs.connectionGuid?.value) fail("the Model is not linked to the connection");
    if (up.outputs.providerKey?.secret !== true) fail("providerKey is not a secret output");

    const again = await phase(
      "up again: nothing to do",
      async () => {
        const first = requests.length;
        const result = await engine.up();
        const writes = requests.slice(first).filter((request) => request.method !== "GET");
        if (writes.length > 0) fail(`an up without changes wrote to the service: ${writes.map((w) => `${w.method} ${w.path}`).join(", ")}`);
        return result;
      },
      { counted: true },
    );
    expectPlan(again, "same 9");

    const changed = makeEngine({
      ...options,
      config: {
        ...options.config,
        appDescription: "Answers customer questions, in English and German",
        openaiKey: { secret: ROTATED_KEY },
      },
    });
    const changeSteps = ["update helpdesk", "replace openai", "replace gpt-4o-mini"];
    await phase(
      "change: App description + rotated provider key",
      async () => {
        console.log("(config: appDescription changed; openaiKey rotated)");
        expectPlan(await changed.preview(), "update 1, replace 2, same 6", changeSteps);
        console.log("");
        const result = await changed.up();
        expectPlan(result, "update 1, replace 2, same 6", changeSteps);
        if (result.outputs.modelConnection?.value !== result.outputs.connectionGuid?.value)
          fail("the new Model is not linked to the new connection");
        if (result.outputs.connectionGuid?.value === up.outputs.connectionGuid?.value) fail("the connection was not replaced");
        return result;
      },
      { counted: true },
    );

    await phase(
      "refresh after an out-of-band rename",
      async () => {
        const workflows = (await api("GET", `/apps/${appGuid}/workflows`)) as { guid: string; name: string }[];
        const triage = workflows.find((workflow) => workflow.name === "Triage") ?? fail("no Workflow Triage in the App");
        await api("PUT", `/workflows/${triage.guid}`, { name: "Triage (renamed in the console)" });
        console.log(`(renamed Workflow ${triage.guid} through the API, outside Pulumi)`);
        expectPlan(await changed.refresh(), "refresh 1, same 8", ["refresh triage"]);
      },
      { counted: true },
    );

    const destroyed = await phase("destroy", () => changed.destroy(), { counted: true });
    expectPlan(destroyed, "delete 9");

    await phase("workspace after destroy, through the API", async () => {
      // Some lists answer a bare array, others the {data, total_count, has_next_page} envelope.
      const list = async (path: string) => {
        const body = await api("GET", path);
        return (Array.isArray(body) ? body : body.data) as { guid: string; name: string }[];
      };
      const apps = (await list("/apps")).map((app) => app.name);
      const left = {
        providers: (await list("/providers")).length,
        models: (await list("/models")).length,
        datasets: (await list("/datasets")).length,
        evals: (await list("/evals")).length,
        experiments: (await list("/experiments")).length,
        skills: (await list("/skills")).length,
      };
      const workspace = (await api("GET", "/workspaces/current")) as { guid: string };
      const contexts = await list(`/workspaces/${workspace.guid}/context`);
      const sources = (await Promise.all(contexts.map((context) => list(`/contexts/${context.guid}/context_sources`)))).flat().length;
      console.log(`Apps: ${apps.join(", ")} (the fixtures' own)`);
      console.log(
        `connections ${left.providers}, Models ${left.models}, Datasets ${left.datasets}, ` +
          `Evals ${left.evals}, Experiments ${left.experiments}, Context Sources ${sources}`,
      );
      console.log(`Skills: ${left.skills} (the configured one from the fixtures)`);
      if (
        apps.join() !== "Support" ||
        left.providers + left.models + left.datasets + left.evals + left.experiments + sources > 0 ||
        left.skills !== 1
      ) {
        fail("destroy left objects of the program in the workspace");
      }
    });

    const upTime = phases.find((entry) => entry.name === "up")!.seconds;
    const stepTime = up.steps.reduce((sum, step) => sum + (step.durationMs ?? 0), 0) / 1000;
    const inSteps = stepTime > 0 ? ` (${stepTime.toFixed(2)} s in its 9 create steps)` : "";
    console.log(`\nDemo complete: quickstart up took ${upTime.toFixed(2)} s wall time${inSteps}.`);
    console.log(phases.map((entry) => `  ${entry.name.padEnd(52)} ${entry.seconds.toFixed(2).padStart(6)} s`).join("\n"));
  } finally {
    await emulator.close();
  }
}

main()
  .then(
    () => undefined,
    (error: unknown) => {
      console.error(`\n${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    },
  )
  .finally(() => {
    if (KEEP) console.log(`kept ${work} (database, program, state)`);
    else rmSync(work, { recursive: true, force: true });
  });
