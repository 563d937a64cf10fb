/**
 * The release's provider plugin against the package's, from one run:
 * - cold start, from spawning the process to its port line (what the engine waits for before its first call): the
 *   release's executable (`npm run dist`, unpacked from its tarball: a Node.js single executable application with
 *   V8's code cache of its one-file bundle) against `node dist/plugin/main.js` on this Node.js (the package as npm
 *   installs it: @pulumi/pulumi and the rest loaded file by file, no compile cache). Pairs run interleaved, one of
 *   each in turn, so that a slow spell of a shared machine weighs on both; the medians and their ratio.
 * - `pulumi up` of N `gms:index:App` (100 by default) in a Pulumi YAML project (`runtime: yaml`, the YAML language host
 *   beside the CLI) on the real CLI at `--parallel 10`, then its `destroy`, with each plugin: the release's tarball
 *   installed with `pulumi plugin install resource gms <version> --file` into its own PULUMI_HOME and run with
 *   PULUMI_IGNORE_AMBIENT_PLUGINS=true, against `dist/plugin/main.js` on PATH as `pulumi-resource-gms` (an ambient
 *   plugin, in a PULUMI_HOME with none installed). The emulator runs in this process (SQLite file). Each run is
 *   checked: the plugin processes the CLI started (read from /proc when the emulator answers the run's first request)
 *   are the claimed executable, and the emulator saw exactly N creates (N deletes). One unmeasured up and destroy of
 *   each first; then rounds of interleaved pairs (the two ups, then the two destroys, the first of each pair taking
 *   turns); the medians and their ratio.
 * Prints figures only: timings are never pass/fail. Without release/ it prints why its figures are skipped; without
 * the CLI or its YAML language host (`npm run pulumi:install` builds both), why the second figure is.
 *   npm run bench   (or, after npm run build and npm run dist: npx node test/bench/plugin.mts [pairs] [rounds] [N])
 * Under `npm run bench` (test/bench/report.mts) it also writes its section of docs/benchmarks.md (section.mts).
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, join } from "node:path";
import { startEmulator } from "../../dist/emulator/index.js";
import { cliEnvironment, findPulumiCli, type PulumiCli } from "../../dist/testing/index.js";
import { extractPlugin, type PluginRelease, pluginRelease } from "../release/artefacts.mts";
import { Section, tableMs, tableRatio } from "./section.mts";
import { BENCH_KEY, initStack, installedVersions, installRelease, pulumi, type YamlProject, yamlSandbox } from "./yaml-project.mts";

const PAIRS = Number(process.argv[2] ?? 15);
const ROUNDS = Number(process.argv[3] ?? 5);
const APPS = Number(process.argv[4] ?? 100);
const PARALLEL = 10;
const root = join(import.meta.dirname, "..", "..");
const pluginMain = join(root, "dist", "plugin", "main.js");

interface Contender {
  name: string;
  command: string;
  args: string[];
}

/** Seconds from spawning the plugin to its port line; the process is ended and gone before this returns. */
function coldStart({ command, args }: Contender): Promise<number> {
  return new Promise((resolve, reject) => {
    const begun = process.hrtime.bigint();
    // An engine address no one listens on: the plugin dials it only to send a log line, and a start sends none.
    const child = spawn(command, [...args, "127.0.0.1:1"], { cwd: root, stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    const onData = (chunk: string) => {
      out += chunk;
      if (!out.includes("\n")) return;
      const seconds = Number(process.hrtime.bigint() - begun) / 1e9;
      child.stdout.off("data", onData);
      const line = out.split("\n")[0]!;
      child.once("exit", () =>
        /^\d+$/.test(line) ? resolve(seconds) : reject(new Error(`${command}: the first line is not a port: ${line}`)),
      );
      child.kill("SIGTERM");
    };
    child.stdout.setEncoding("utf8").on("data", onData);
    child.once("error", reject);
    child.once("exit", (code) => {
      if (!out.includes("\n")) reject(new Error(`${command} exited with ${code} before printing its port`));
    });
  });
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const spread = (values: number[]) => {
  const order = sorted(values);
  return { median: order[Math.floor(order.length / 2)]!, min: order[0]!, max: order.at(-1)! };
};
type Spread = ReturnType<typeof spread>;
const ms = (seconds: number) => tableMs(seconds).padStart(7);

/** A process started by the CLI that is a `pulumi-resource-gms`: what ran, as /proc shows it. */
interface PluginProcess {
  pid: number;
  /** The executable the kernel ran (`/proc/<pid>/exe`): the plugin itself, or node for the script. */
  exe: string;
  argv: string[];
}

/** The `pulumi-resource-gms` processes among the descendants of `ancestor` (Linux's /proc). */
function pluginProcesses(ancestor: number): PluginProcess[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // `pid (comm) state ppid ...`; comm may hold spaces and parentheses, so read after the last ")".
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found: PluginProcess[] = [];
  const pending = [...(children.get(ancestor) ?? [])];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    pending.push(...(children.get(pid) ?? []));
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, -1);
      if (argv.slice(0, 2).some((arg) => basename(arg) === "pulumi-resource-gms"))
        found.push({ pid, exe: readlinkSync(`/proc/${pid}/exe`), argv });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** A plugin under test on the real CLI: its own PULUMI_HOME, file backend and project folder. */
interface CliPlugin extends YamlProject {
  /** How it reaches the engine, for the tables. */
  how: string;
  /** The process every run is checked to have started, for the tables. */
  served: string;
  /** Why a process the CLI started is not this plugin, or undefined when it is. */
  mismatch(process: PluginProcess): string | undefined;
}

/** Sets up both plugins' sandboxes: the release's installed from its tarball, the package's on PATH. */
async function cliPlugins(cli: PulumiCli, release: PluginRelease, url: string, parent: string): Promise<CliPlugin[]> {
  const sandbox = (name: string) => yamlSandbox(parent, name, APPS);
  const packaged = sandbox("release");
  const installed = join(packaged.sandbox.pulumiHome, "plugins", `resource-gms-v${release.version}`, "pulumi-resource-gms");
  const fromNode = sandbox("node");
  mkdirSync(join(fromNode.dir, "bin"));
  chmodSync(pluginMain, 0o755);
  symlinkSync(pluginMain, join(fromNode.dir, "bin", "pulumi-resource-gms"));
  const nodeEnv = cliEnvironment(cli, fromNode.sandbox, {
    ...process.env,
    PATH: [join(fromNode.dir, "bin"), process.env.PATH ?? ""].join(delimiter),
  });
  delete nodeEnv.PULUMI_IGNORE_AMBIENT_PLUGINS;
  const node = realpathSync(process.execPath);
  const script = realpathSync(pluginMain);
  const plugins: CliPlugin[] = [
    {
      name: "release executable",
      how: "`pulumi plugin install resource gms --file`, PULUMI_IGNORE_AMBIENT_PLUGINS=true",
      served: `<PULUMI_HOME>/plugins/resource-gms-v${release.version}/pulumi-resource-gms`,
      dir: packaged.dir,
      env: { ...cliEnvironment(cli, packaged.sandbox), PULUMI_IGNORE_AMBIENT_PLUGINS: "true" },
      mismatch: ({ exe }) => (exe === installed ? undefined : `ran ${exe}, not ${installed}`),
    },
    {
      name: `node dist/plugin/main.js (Node.js ${process.version})`,
      how: "`pulumi-resource-gms` on PATH, a symlink to dist/plugin/main.js",
      served: `node ${process.version} running <bin>/pulumi-resource-gms -> dist/plugin/main.js`,
      dir: fromNode.dir,
      env: nodeEnv,
      mismatch: ({ exe, argv }) => {
        const ran = argv[1] && existsSync(argv[1]) ? realpathSync(argv[1]) : argv[1];
        return exe === node && ran === script ? undefined : `ran ${exe} ${ran ?? ""}, not ${node} ${script}`;
      },
    },
  ];
  const [releasePlugin, nodePlugin] = plugins as [CliPlugin, CliPlugin];
  // What each PULUMI_HOME holds: the release's plugin in the first; none in the second, so its engine can only take PATH's.
  await installRelease(releasePlugin, cli, release);
  const inNode = await installedVersions(nodePlugin, cli);
  if (inNode.length > 0) throw new Error(`${nodePlugin.name}: pulumi plugin ls lists gms ${JSON.stringify(inNode)}, expected none`);
  for (const plugin of plugins) await initStack(plugin, cli, url);
  return plugins;
}

/** The second figure: `up` and `destroy` of N Apps on the real CLI with each plugin. */
async function cliFigures(section: Section, release: PluginRelease): Promise<void> {
  const lookup = findPulumiCli();
  const skip = (reason: string) => {
    section.print(`pulumi up figures skipped: ${reason}`);
    section.text(`The \`pulumi up\` of ${APPS} Apps with each plugin is skipped: ${reason}.`);
  };
  if (!lookup.found) return skip(lookup.reason);
  const { cli } = lookup;
  if (!existsSync(join(cli.dir, "pulumi-language-yaml")))
    return skip(`no pulumi-language-yaml beside ${cli.bin}; \`npm run pulumi:install\` builds it`);

  const dir = mkdtempSync(join(tmpdir(), "gms-bench-plugin-"));
  // What the emulator answers during the operation under way, and the plugin processes when it answers the first.
  let watch: { pid: number; creates: number; deletes: number; processes?: PluginProcess[] } | undefined;
  const emulator = await startEmulator({
    db: join(dir, "emulator.db"),
    fixtures: { workspaces: [{ name: "Bench", slug: "bench", apiKey: BENCH_KEY, limits: { apps: 1_000_000 } }] },
    onRequestComplete: ({ method, path, status }) => {
      if (!watch) return;
      watch.processes ??= pluginProcesses(watch.pid);
      if (status >= 300) return;
      if (method === "POST" && path === "/v1/apps") watch.creates++;
      if (method === "DELETE" && /^\/v1\/apps\/[^/]+$/.test(path)) watch.deletes++;
    },
  });
  try {
    const plugins = await cliPlugins(cli, release, emulator.url, dir);
    /** One `up` or `destroy`, checked to have run the claimed plugin and made N creates or deletes; its seconds. */
    const operation = async (plugin: CliPlugin, kind: "up" | "destroy"): Promise<number> => {
      const run = await pulumi(plugin, cli, [kind, "--yes", "--skip-preview", "--parallel", String(PARALLEL)], (pid) => {
        watch = { pid, creates: 0, deletes: 0 };
      });
      const seen = watch!;
      watch = undefined;
      const made = kind === "up" ? seen.creates : seen.deletes;
      if (made !== APPS)
        throw new Error(`${plugin.name}: ${kind} made ${made} ${kind === "up" ? "creates" : "deletes"}, not ${APPS}:\n${run.output}`);
      if (!seen.processes?.length) throw new Error(`${plugin.name}: no pulumi-resource-gms process under the CLI during its ${kind}`);
      for (const found of seen.processes) {
        const wrong = plugin.mismatch(found);
        if (wrong) throw new Error(`${plugin.name}: the CLI's pulumi-resource-gms (pid ${found.pid}) ${wrong}`);
      }
      return run.seconds;
    };
    // One unmeasured up and destroy of each first: the first run reads the CLI, the host and the plugin from disk.
    for (const plugin of plugins) {
      await operation(plugin, "up");
      await operation(plugin, "destroy");
    }
    const ups = plugins.map(() => [] as number[]);
    const destroys = plugins.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const index of order) ups[index]!.push(await operation(plugins[index]!, "up"));
      for (const index of order) destroys[index]!.push(await operation(plugins[index]!, "destroy"));
    }
    const up = ups.map(spread);
    const down = destroys.map(spread);
    const [upRelease, upNode] = up as [Spread, Spread];
    const [downRelease, downNode] = down as [Spread, Spread];

    section.print(
      `pulumi up and destroy of ${APPS} gms:index:App, Pulumi YAML project, real CLI ${cli.version} --parallel ${PARALLEL}, ` +
        `emulator in this process (median of ${ROUNDS} rounds of interleaved pairs, after one unmeasured up and destroy of each)`,
    );
    for (const [index, plugin] of plugins.entries()) {
      const [u, d] = [up[index]!, down[index]!];
      section.print(
        `  ${plugin.name.padEnd(48)} up ${ms(u.median)}  (min ${tableMs(u.min)}, max ${tableMs(u.max)})  ` +
          `destroy ${ms(d.median)}  (min ${tableMs(d.min)}, max ${tableMs(d.max)})`,
      );
      section.print(`  ${"".padEnd(48)} every run checked to be served by ${plugin.served}`);
    }
    section.print(
      `  release executable / node dist/plugin/main.js: up ${tableRatio(upRelease.median, upNode.median)}, ` +
        `destroy ${tableRatio(downRelease.median, downNode.median)}`,
    );
    section.text(
      `\`pulumi up --skip-preview --parallel ${PARALLEL}\` of ${APPS} \`gms:index:App\` in a Pulumi YAML project (\`runtime: yaml\`, ` +
        `the YAML language host beside the CLI), then its \`destroy\`, on the real CLI ${cli.version} with a file backend and a fresh ` +
        "PULUMI_HOME per plugin, against the emulator in the benchmark's process (SQLite file): the release's plugin installed from " +
        "its tarball, against `dist/plugin/main.js` on PATH. Wall time of each CLI command, from spawning it to its exit. Every run " +
        `is checked: the \`pulumi-resource-gms\` processes the CLI started are the claimed executable, and the emulator answered ${APPS} ` +
        `creates (deletes). Medians of ${ROUNDS} rounds, each running the two ups and then the two destroys (the first of each pair ` +
        "taking turns), after one unmeasured up and destroy of each.",
    );
    section.table(
      [
        "plugin",
        "how the engine finds it",
        "the process checked in every run",
        "up",
        "min",
        "max",
        "destroy",
        "min",
        "max",
        "up ratio to node",
        "destroy ratio to node",
      ],
      plugins.map((plugin, index) => {
        const [u, d] = [up[index]!, down[index]!];
        return [
          plugin.name,
          plugin.how,
          `\`${plugin.served}\``,
          tableMs(u.median),
          tableMs(u.min),
          tableMs(u.max),
          tableMs(d.median),
          tableMs(d.min),
          tableMs(d.max),
          tableRatio(u.median, upNode.median),
          tableRatio(d.median, downNode.median),
        ];
      }),
    );
  } finally {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const section = new Section();
  const release = pluginRelease();
  const tarballName = release.tarball.split("/").at(-1);
  if (!release.present) {
    const reason = `no release/${tarballName}; \`npm run dist\` builds it`;
    section.print(`Release plugin figures skipped: ${reason}`);
    section.text(`Skipped: ${reason}.`);
    section.write();
    return;
  }
  const extracted = extractPlugin(release);
  try {
    const contenders: Contender[] = [
      { name: "release executable", command: extracted.executable, args: [] },
      { name: `node dist/plugin/main.js (Node.js ${process.version})`, command: process.execPath, args: [pluginMain] },
    ];
    // One start of each first, unmeasured: the first reads the 130 MB executable from disk into the page cache.
    for (const contender of contenders) await coldStart(contender);
    const times = contenders.map(() => [] as number[]);
    for (let pair = 0; pair < PAIRS; pair++) {
      for (const [index, contender] of contenders.entries()) times[index]!.push(await coldStart(contender));
    }
    const figures = times.map(spread);
    const [packaged, fromNode] = figures as [Spread, Spread];

    section.print(`plugin cold start, spawn to port line (median of ${PAIRS} interleaved pairs, after one unmeasured start of each)`);
    for (const [index, contender] of contenders.entries()) {
      const { median, min, max } = figures[index]!;
      section.print(`  ${contender.name.padEnd(48)} ${ms(median)}  (min ${tableMs(min)}, max ${tableMs(max)})`);
    }
    section.print(`  release executable / node dist/plugin/main.js: ${tableRatio(packaged.median, fromNode.median)}`);
    section.text(
      "Cold start of the provider plugin, from spawning the process to its port line (what the engine waits for before its " +
        `first call): the release's executable (\`npm run dist\`, unpacked from ${tarballName}: a Node.js single executable ` +
        "application with V8's code cache of its one-file bundle) against `node dist/plugin/main.js` (the package as npm " +
        `installs it, no compile cache). Medians of ${PAIRS} pairs run interleaved, after one unmeasured start of each.`,
    );
    section.table(
      ["plugin", "median", "min", "max", "ratio to node dist/plugin/main.js"],
      contenders.map((contender, index) => {
        const { median, min, max } = figures[index]!;
        return [contender.name, tableMs(median), tableMs(min), tableMs(max), tableRatio(median, fromNode.median)];
      }),
    );
  } finally {
    extracted.remove();
  }
  await cliFigures(section, release);
  section.write();
}

await main();
