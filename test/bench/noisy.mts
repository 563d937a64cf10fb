/**
 * A noisy service is not a slow one: `pulumi up` of N `gms:index:App` (300 by default) with the release's provider
 * plugin on the real CLI (--parallel 10), against the emulator answering a random share of requests 429 with
 * `Retry-After: 1` (no rate limit: the refusals have nothing to do with the client's rate, as when a key's quota is
 * shared or a gateway is overloaded), at 8% and 2%, and with no fault, in one sitting. Each noisy run's time against
 * the quiet one's, and against the goal: within 1.5x the quiet run plus 3 s (the `Retry-After` waits of a request
 * refused up to three times in a row). One unmeasured up and destroy first; then rounds, each running the three
 * settings in turn (the first taking turns), each `up` followed by an unmeasured `destroy` without faults; medians.
 * Every `up` is checked to have made N Apps. Prints figures only: no time is pass/fail. Without release/ (`npm run
 * dist`), the CLI or its YAML language host (`npm run pulumi:install`), it prints why it is skipped.
 *   npm run bench   (or, after npm run build and npm run dist: node test/bench/noisy.mts [rounds] [N])
 * Under `npm run bench` (test/bench/report.mts) it also writes its section of docs/benchmarks.md (section.mts).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmulator } from "../../dist/emulator/index.js";
import { cliEnvironment, findPulumiCli } from "../../dist/testing/index.js";
import { pluginRelease } from "../release/artefacts.mts";
import { Section, tableMs, tableRatio } from "./section.mts";
import { BENCH_KEY, initStack, installRelease, pulumi, type YamlProject, yamlSandbox } from "./yaml-project.mts";

const ROUNDS = Number(process.argv[2] ?? 3);
const APPS = Number(process.argv[3] ?? 300);
const PARALLEL = 10;
/** The goal: a noisy run within this times the quiet one, plus the waits of a request refused three times in a row. */
const GOAL_RATIO = 1.5;
const GOAL_EXTRA_SECONDS = 3;

/** The emulator's fault spec of each setting (a seed of each round's own), or none. */
const SETTINGS: { name: string; faults: ((seed: number) => string) | undefined }[] = [
  { name: "no faults", faults: undefined },
  { name: "throttle=0.02,retry-after=1", faults: (seed) => `seed=${seed},throttle=0.02,retry-after=1` },
  { name: "throttle=0.08,retry-after=1", faults: (seed) => `seed=${seed},throttle=0.08,retry-after=1` },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const seconds = (value: number) => `${value.toFixed(1)} s`;

async function main(): Promise<void> {
  const section = new Section();
  const skip = (reason: string) => {
    section.print(`noisy service figures skipped: ${reason}`);
    section.text(`Skipped: ${reason}.`);
    section.write();
  };
  const release = pluginRelease();
  if (!release.present) return skip(`no release/${release.tarball.split("/").at(-1)}; \`npm run dist\` builds it`);
  const lookup = findPulumiCli();
  if (!lookup.found) return skip(lookup.reason);
  const { cli } = lookup;
  if (!existsSync(join(cli.dir, "pulumi-language-yaml")))
    return skip(`no pulumi-language-yaml beside ${cli.bin}; \`npm run pulumi:install\` builds it`);

  const dir = mkdtempSync(join(tmpdir(), "gms-bench-noisy-"));
  // What the emulator answered during the up under way: every request, and the Apps it made.
  let requests = 0;
  let creates = 0;
  const emulator = await startEmulator({
    db: join(dir, "emulator.db"),
    fixtures: { workspaces: [{ name: "Bench", slug: "bench", apiKey: BENCH_KEY, limits: { apps: 1_000_000 } }] },
    onRequestComplete: ({ method, path, status }) => {
      requests++;
      if (method === "POST" && path === "/v1/apps" && status < 300) creates++;
    },
  });
  try {
    const { dir: projectDir, sandbox } = yamlSandbox(dir, "release", APPS);
    const project: YamlProject = {
      name: "release executable",
      dir: projectDir,
      env: { ...cliEnvironment(cli, sandbox), PULUMI_IGNORE_AMBIENT_PLUGINS: "true" },
    };
    await installRelease(project, cli, release);
    await initStack(project, cli, emulator.url);
    const destroy = async () => {
      emulator.faults.set(undefined);
      await pulumi(project, cli, ["destroy", "--yes", "--skip-preview", "--parallel", String(PARALLEL)]);
    };
    /** One measured up under `faults`: its seconds and the refusals the emulator sent; checked to have made N Apps. */
    const up = async (faults: string | undefined) => {
      emulator.faults.set(faults);
      requests = 0;
      creates = 0;
      const run = await pulumi(project, cli, ["up", "--yes", "--skip-preview", "--parallel", String(PARALLEL)]);
      const figures = { seconds: run.seconds, refusals: emulator.faults.stats().throttle, requests };
      if (creates !== APPS) throw new Error(`up under ${faults ?? "no faults"} made ${creates} Apps, not ${APPS}:\n${run.output}`);
      // Progress only, not the section's: a run of the defaults takes minutes.
      console.log(`  (up under ${faults ?? "no faults"}: ${seconds(run.seconds)}, ${figures.refusals} refused of ${requests} requests)`);
      await destroy();
      return figures;
    };
    // Unmeasured: the first run reads the CLI, the YAML host and the plugin from disk.
    await up(undefined);

    const runs = SETTINGS.map(() => [] as { seconds: number; refusals: number; requests: number }[]);
    for (let round = 0; round < ROUNDS; round++) {
      const order = SETTINGS.map((_, index) => (index + round) % SETTINGS.length);
      for (const index of order) runs[index]!.push(await up(SETTINGS[index]!.faults?.(round + 1)));
    }
    const figures = runs.map((each) => ({
      seconds: median(each.map((run) => run.seconds)),
      min: Math.min(...each.map((run) => run.seconds)),
      max: Math.max(...each.map((run) => run.seconds)),
      refusals: median(each.map((run) => run.refusals)),
      requests: median(each.map((run) => run.requests)),
    }));
    const quiet = figures[0]!.seconds;
    const goal = GOAL_RATIO * quiet + GOAL_EXTRA_SECONDS;
    const verdict = (index: number) =>
      index === 0 ? "(the reference)" : figures[index]!.seconds <= goal ? "within the goal" : "over the goal";

    section.print(
      `pulumi up of ${APPS} gms:index:App with the release's plugin ${release.version}, Pulumi YAML project, real CLI ${cli.version} ` +
        `--parallel ${PARALLEL}, emulator in this process (median of ${ROUNDS} round(s), after one unmeasured up and destroy)`,
    );
    section.print(`  goal for a noisy run: within ${GOAL_RATIO}x the quiet one + ${GOAL_EXTRA_SECONDS} s = ${seconds(goal)}`);
    for (const [index, setting] of SETTINGS.entries()) {
      const figure = figures[index]!;
      section.print(
        `  ${setting.name.padEnd(28)} up ${seconds(figure.seconds).padStart(7)} (min ${seconds(figure.min)}, max ${seconds(figure.max)})  ` +
          `${tableRatio(figure.seconds, quiet)} the quiet one  ${String(figure.refusals).padStart(3)} refused 429 of ` +
          `${figure.requests} requests  ${verdict(index)}`,
      );
    }
    section.text(
      `\`pulumi up --skip-preview --parallel ${PARALLEL}\` of ${APPS} \`gms:index:App\` in a Pulumi YAML project on the real CLI ` +
        `${cli.version}, with the release's plugin ${release.version} installed from its tarball, against the emulator in the ` +
        "benchmark's process (SQLite file) answering a random share of requests `429` with `Retry-After: 1` and no rate limit: " +
        "refusals the client's own rate did not cause (a quota shared with other clients, an overloaded gateway). Each `up` " +
        `made the ${APPS} Apps and was followed by an unmeasured \`destroy\` without faults; medians of ${ROUNDS} round(s), each ` +
        "running the three settings in turn (the first taking turns), after one unmeasured up and destroy. Goal: each noisy run " +
        `within ${GOAL_RATIO}x the quiet one plus ${GOAL_EXTRA_SECONDS} s (the \`Retry-After\` waits of a request refused up to ` +
        "three times in a row). Refusals and requests are the emulator's counts, medians over the rounds.",
    );
    section.table(
      ["emulator faults", "up", "min", "max", "ratio to no faults", "goal", "429 refusals", "requests"],
      SETTINGS.map((setting, index) => {
        const figure = figures[index]!;
        return [
          setting.name,
          tableMs(figure.seconds),
          tableMs(figure.min),
          tableMs(figure.max),
          tableRatio(figure.seconds, quiet),
          index === 0 ? "" : `${tableMs(goal)}: ${verdict(index)}`,
          String(figure.refusals),
          String(figure.requests),
        ];
      }),
    );
  } finally {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
  section.write();
}

await main();
