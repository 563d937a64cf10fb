/**
 * The real Pulumi CLI against LocalEngine and the raw floor, from one run:
 * - `up`, no-op `up` and `destroy` of N Apps (N = 100 and 300 by default) through the real CLI
 *   (PulumiCliEngine: the Automation API's inline program, the CLI's engine, its dynamic-provider host),
 *   through LocalEngine, and as the same API calls made directly with undici (one after another and
 *   `parallel` in flight), with the ratios;
 * - the same count of a trivial `pulumi.dynamic.Resource` through the CLI, whose provider's create returns at
 *   once (no HTTP, no diff, no delete): what the CLI's engine, the SDK and the dynamic-provider host cost with
 *   no provider work at all. What the Apps cost beyond it is this package's provider and the service's calls
 *   (whose floor is shown), so that the provider's share of the CLI time is separable from the engine's;
 * - the Apps through the CLI with PULUMI_SKIP_CHECKPOINTS=true: the file backend then writes no checkpoint after each
 *   step (only at the end), which shows what those writes (the whole state each time, so N² bytes) cost;
 * - the fixed cost of a CLI operation: the same operations on a program that declares nothing.
 * The CLI runs with `--parallel` as LocalEngine (10 by default). The emulator runs in its own process.
 * Prints figures only: timings are never pass/fail. Each figure is the median of a few rounds (3 by default),
 * a round measuring everything in turn, so that a slow spell of a shared machine weighs on both sides of a
 * ratio alike. Without a CLI (`npm run pulumi:install` builds one) it prints why its figures are skipped.
 *   npm run bench   (or: node test/bench/cli.mts [N,N,...] [parallel] [rounds])
 * Under `npm run bench` (test/bench/report.mts) it also writes its section of docs/benchmarks.md (section.mts).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PulumiCli, PulumiCliEngine, findPulumiCli, installPackageCopy } from "../../dist/testing/index.js";
import type * as EngineBench from "./engine.mts";
import type * as SectionModule from "./section.mts";

// engine.mts's helpers (it runs its own bench only as the entry point). A type-only import may name the .mts
// file; the module itself is imported by a path TypeScript does not resolve, as Node strips the types at run time.
const engineBench = "./engine.mts";
const { KEY, engineRun, floor, median, ms, ratio, seconds, startEmulator } = (await import(engineBench)) as typeof EngineBench;
type EngineRun = EngineBench.EngineRun;
type Floor = EngineBench.Floor;
type Operation = EngineBench.Operation;
const sectionModule = "./section.mts";
const { Section, tableMs, tableRatio } = (await import(sectionModule)) as typeof SectionModule;

const SIZES = (process.argv[2] ?? "100,300").split(",").map(Number);
const PARALLEL = Number(process.argv[3] ?? 10);
const ROUNDS = Number(process.argv[4] ?? 3);

/** What the CLI runs: N Apps of this package, or N trivial dynamic resources. */
type Program = "apps" | "trivial";

function programText(program: Program, n: number): string {
  if (program === "apps")
    return `import * as gms from "pulumi-gms";
for (let i = 0; i < ${n}; i++) new gms.App(\`app-\${i}\`, { name: \`bench \${i}\`, description: "bench" });
`;
  return `import * as pulumi from "@pulumi/pulumi";
const provider: pulumi.dynamic.ResourceProvider = {
  async create(inputs) {
    return { id: inputs.name, outs: inputs };
  },
};
class Trivial extends pulumi.dynamic.Resource {
  constructor(name: string, args: { name: string; description: string }) {
    super(provider, name, args);
  }
}
for (let i = 0; i < ${n}; i++) new Trivial(\`app-\${i}\`, { name: \`bench \${i}\`, description: "bench" });
`;
}

/** `up`, no-op `up` and `destroy` of the program through the real CLI; each checked to have done what it should. */
async function cliRun(cli: PulumiCli, url: string, program: Program, n: number, parallel: number, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "gms-bench-cli-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "bench-cli-program", private: true, type: "module" }));
  installPackageCopy(dir);
  writeFileSync(join(dir, "index.ts"), programText(program, n));
  const engine = new PulumiCliEngine({
    cli,
    programDir: dir,
    stateDir: join(dir, "state"),
    project: "bench",
    stack: "dev",
    config: { "gms:baseUrl": url, "gms:apiKey": { secret: KEY } },
    secretsPassphrase: "bench",
    parallel,
    env,
    log: () => undefined,
  });
  const measure = async (operation: "up" | "destroy", expected: "create" | "same" | "delete"): Promise<Operation> => {
    const started = process.hrtime.bigint();
    const result = await engine[operation]();
    const taken = seconds(started);
    if (result.counts[expected] !== n) throw new Error(`${program} N=${n}: ${operation} gave ${JSON.stringify(result.counts)}`);
    return { seconds: taken };
  };
  try {
    return { up: await measure("up", "create"), noop: await measure("up", "same"), destroy: await measure("destroy", "delete") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
type CliRun = Awaited<ReturnType<typeof cliRun>>;

const lookup = findPulumiCli();
const section = new Section();
if (!lookup.found) {
  section.print(`Pulumi CLI figures skipped: ${lookup.reason}`);
  section.text(`Skipped: no Pulumi CLI was found (${lookup.reason}). \`npm run pulumi:install\` builds one.`);
  section.write();
} else {
  const { cli } = lookup;
  const dir = mkdtempSync(join(tmpdir(), "gms-bench-cli-"));
  const { url, child } = await startEmulator(dir);
  try {
    section.print(
      `The real Pulumi CLI ${cli.version} (${cli.bin}) vs LocalEngine vs raw undici (emulator in its own process; ` +
        `CLI --parallel ${PARALLEL}, LocalEngine parallel=${PARALLEL}, concurrent floor ${PARALLEL} in flight; median of ${ROUNDS} rounds, ` +
        `each measuring everything in turn)`,
    );
    const empties: CliRun[] = [];
    const runs = new Map(
      SIZES.map((n) => [
        n,
        {
          sequential: [] as Floor[],
          concurrent: [] as Floor[],
          local: [] as EngineRun[],
          apps: [] as CliRun[],
          trivial: [] as CliRun[],
          unsaved: [] as CliRun[],
        },
      ]),
    );
    for (let round = 0; round < ROUNDS; round++) {
      empties.push(await cliRun(cli, url, "apps", 0, PARALLEL));
      for (const n of SIZES) {
        const of = runs.get(n)!;
        of.sequential.push(await floor(url, n, 1, `cli seq ${n} ${round}`));
        of.concurrent.push(await floor(url, n, PARALLEL, `cli par ${n} ${round}`));
        of.local.push(await engineRun(url, n, PARALLEL));
        of.apps.push(await cliRun(cli, url, "apps", n, PARALLEL));
        of.trivial.push(await cliRun(cli, url, "trivial", n, PARALLEL));
        of.unsaved.push(await cliRun(cli, url, "apps", n, PARALLEL, { PULUMI_SKIP_CHECKPOINTS: "true" }));
      }
    }
    const empty = median(empties);
    section.print(
      `CLI fixed cost (a program that declares nothing): up ${ms(empty.up.seconds)}, no-op ${ms(empty.noop.seconds)}, ` +
        `destroy ${ms(empty.destroy.seconds)}`,
    );
    const table: string[][] = [];
    const perResource: string[][] = [];
    for (const n of SIZES) {
      const perShare: string[] = [];
      const of = runs.get(n)!;
      const [sequential, concurrent, local, apps, trivial, unsaved] = [
        of.sequential,
        of.concurrent,
        of.local,
        of.apps,
        of.trivial,
        of.unsaved,
      ].map((rounds) => median(rounds as Record<string, Operation | number>[])) as [Floor, Floor, EngineRun, CliRun, CliRun, CliRun];
      section.print(`N=${n}`);
      const rows: [string, "up" | "noop" | "destroy", keyof Floor][] = [
        ["up", "up", "create"],
        ["no-op up", "noop", "read"],
        ["destroy", "destroy", "remove"],
      ];
      for (const [name, operation, request] of rows) {
        const [cliApps, cliTrivial, localApps] = [apps[operation].seconds, trivial[operation].seconds, local[operation].seconds];
        const [seq, par] = [sequential[request], concurrent[request]];
        table.push([
          String(n),
          name,
          tableMs(cliApps),
          tableMs(cliTrivial),
          tableMs(unsaved[operation].seconds),
          tableMs(localApps),
          tableMs(seq),
          tableMs(par),
          tableRatio(cliApps, localApps),
          tableRatio(cliApps, par),
          tableRatio(cliTrivial, cliApps),
          tableRatio(unsaved[operation].seconds, cliApps),
        ]);
        section.print(
          `  ${name.padEnd(8)} CLI ${ms(cliApps)}  floor seq ${ms(seq)} ${ratio(cliApps, seq)}  floor x${PARALLEL} ${ms(par)} ` +
            `${ratio(cliApps, par)}  LocalEngine ${ms(localApps)} (CLI ${ratio(cliApps, localApps).trim()} of it)`,
        );
        // The Apps beyond the trivial resources: this package's provider plus the HTTP calls (their floor beside it).
        const share = cliApps - cliTrivial;
        perShare.push(`${name} ${((share * 1000) / n).toFixed(2)} ms`);
        section.print(
          `  ${"".padEnd(8)} CLI, trivial dynamic resource ${ms(cliTrivial)} (the engine, SDK and host alone; ` +
            `${ratio(cliTrivial, cliApps).trim()} of the Apps' time); the Apps beyond it ${ms(share)} ` +
            `(${((share * 1000) / n).toFixed(2)} ms per resource; the floor x${PARALLEL} ${ms(par)})`,
        );
        section.print(
          `  ${"".padEnd(8)} CLI, the Apps with PULUMI_SKIP_CHECKPOINTS=true ${ms(unsaved[operation].seconds)} ` +
            `(${ratio(unsaved[operation].seconds, cliApps).trim()} of the Apps' time; ` +
            "the difference is the file backend writing the whole checkpoint after every step)",
        );
      }
      const per = (name: string, value: Operation, fixed: Operation) =>
        `${name} ${(((value.seconds - fixed.seconds) * 1000) / n).toFixed(2)} ms`;
      perResource.push([
        String(n),
        `${per("up", apps.up, empty.up)}, ${per("no-op", apps.noop, empty.noop)}, ${per("destroy", apps.destroy, empty.destroy)}`,
        `${per("up", trivial.up, empty.up)}, ${per("no-op", trivial.noop, empty.noop)}, ${per("destroy", trivial.destroy, empty.destroy)}`,
        perShare.join(", "),
      ]);
      section.print(
        `  CLI per resource beyond its fixed cost: ${per("up", apps.up, empty.up)}, ${per("no-op", apps.noop, empty.noop)}, ` +
          `${per("destroy", apps.destroy, empty.destroy)}; trivial: ${per("up", trivial.up, empty.up)}, ` +
          `${per("no-op", trivial.noop, empty.noop)}, ${per("destroy", trivial.destroy, empty.destroy)}`,
      );
    }
    section.text(
      `The real Pulumi CLI ${cli.version} (PulumiCliEngine: the Automation API's inline program, the CLI's engine, its dynamic-provider ` +
        `host, a file backend) at \`--parallel ${PARALLEL}\`, running \`up\`, a no-op \`up\` and \`destroy\` of N Apps against the ` +
        `emulator (in its own process), next to LocalEngine (parallel=${PARALLEL}) and the same API calls made directly with undici ` +
        `(one after another, and ${PARALLEL} in flight). "CLI, trivial" is the same count of a \`pulumi.dynamic.Resource\` whose create ` +
        "returns at once (no HTTP): the CLI's engine, the SDK and the dynamic-provider host with no provider work, so that this " +
        'package\'s share is separable. "CLI, `PULUMI_SKIP_CHECKPOINTS`" is the Apps with the file backend writing no checkpoint after ' +
        `each step. Medians of ${ROUNDS} rounds, each measuring everything in turn.`,
    );
    section.table(
      ["CLI fixed cost (a program that declares nothing)", "up", "no-op up", "destroy"],
      [["real CLI", tableMs(empty.up.seconds), tableMs(empty.noop.seconds), tableMs(empty.destroy.seconds)]],
    );
    section.table(
      [
        "N",
        "operation",
        "real CLI",
        "CLI, trivial resource",
        "CLI, `PULUMI_SKIP_CHECKPOINTS`",
        "LocalEngine",
        "raw calls, seq",
        `raw calls, ${PARALLEL} at once`,
        "CLI/LocalEngine",
        `CLI/raw x${PARALLEL}`,
        "trivial/CLI",
        "skip checkpoints/CLI",
      ],
      table,
    );
    section.table(
      ["N", "CLI per resource beyond its fixed cost (Apps)", "trivial resource", "the Apps beyond the trivial resource, per resource"],
      perResource,
    );
    section.write();
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
