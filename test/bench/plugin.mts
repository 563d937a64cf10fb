/**
 * The release's provider plugin against the package's, from one run:
 * - cold start, from spawning the process to its port line (what the engine waits for before its first call): the
 *   release's executable (`npm run dist`, unpacked from its tarball: a Node.js single executable application with
 *   V8's code cache of its one-file bundle) against `node dist/plugin/main.js` on this Node.js (the package as npm
 *   installs it: @pulumi/pulumi and the rest loaded file by file, no compile cache). Pairs run interleaved, one of
 *   each in turn, so that a slow spell of a shared machine weighs on both; the medians and their ratio.
 * Prints figures only: timings are never pass/fail. Without release/ it prints why its figures are skipped.
 *   npm run bench   (or, after npm run build and npm run dist: node test/bench/plugin.mts [pairs])
 * Under `npm run bench` (test/bench/report.mts) it also writes its section of docs/benchmarks.md (section.mts).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { extractPlugin, pluginRelease } from "../release/artefacts.mts";
import { Section, tableMs, tableRatio } from "./section.mts";

const PAIRS = Number(process.argv[2] ?? 15);
const root = join(import.meta.dirname, "..", "..");

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
      {
        name: `node dist/plugin/main.js (Node.js ${process.version})`,
        command: process.execPath,
        args: [join(root, "dist", "plugin", "main.js")],
      },
    ];
    // One start of each first, unmeasured: the first reads the 130 MB executable from disk into the page cache.
    for (const contender of contenders) await coldStart(contender);
    const times = contenders.map(() => [] as number[]);
    for (let pair = 0; pair < PAIRS; pair++) {
      for (const [index, contender] of contenders.entries()) times[index]!.push(await coldStart(contender));
    }
    const figures = times.map((values) => {
      const order = sorted(values);
      return { median: order[Math.floor(order.length / 2)]!, min: order[0]!, max: order.at(-1)! };
    });
    const [packaged, fromNode] = figures as [(typeof figures)[0], (typeof figures)[0]];

    section.print(`plugin cold start, spawn to port line (median of ${PAIRS} interleaved pairs, after one unmeasured start of each)`);
    for (const [index, contender] of contenders.entries()) {
      const { median, min, max } = figures[index]!;
      section.print(`  ${contender.name.padEnd(48)} ${tableMs(median).padStart(7)}  (min ${tableMs(min)}, max ${tableMs(max)})`);
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
    // A second figure belongs here: `up` of 100 Apps on the real CLI with each plugin (installPlugin in
    // test/release/harness.ts installs the release's; the package's is `pulumi-resource-gms` on PATH), a row per plugin.
    section.write();
  } finally {
    extracted.remove();
  }
}

await main();
