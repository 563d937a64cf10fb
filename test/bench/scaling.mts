/**
 * The cost of one stack by its size, as a team's pipeline pays it: `pulumi up`, `preview`, `refresh` and `destroy` of
 * N `gms:index:App` in a Pulumi YAML project on the real CLI, served by the release's plugin (`npm run dist`, installed
 * from its tarball with `pulumi plugin install resource gms <version> --file`), with the state on a file backend and
 * in an S3 bucket (moto's S3 server from `.venv-s3/`, `npm run s3:install`), and at the sizes given again with
 * PULUMI_SKIP_CHECKPOINTS=true. What it shows beside each wall time:
 * - the requests the service answered during the operation (the emulator runs in this process and counts them): the
 *   provider's share, which grows as N;
 * - the checkpoint's size after `up` (the file, or the bucket's object);
 * - on S3, the writes of the checkpoint that moto's own request log shows during the operation: a PUT of the whole
 *   checkpoint, and a server-side copy of the one before to `<stack>.json.bak`, per write. The engine writes the whole
 *   checkpoint as each step begins and ends, so the bytes it writes grow as N² (docs/scaling.md says why and what to do).
 * Every operation is checked to have done its work (the stack holds N Apps after `up` and none after `destroy`;
 * `preview` and `refresh` with `--expect-no-changes`). One run of each operation (they are long; the ratios between
 * sizes are what to read). Prints figures only: timings are never pass/fail. Skipped with the reason printed without
 * the CLI and its YAML language host (`npm run pulumi:install`) or without release/ (`npm run dist`); the S3 runs
 * without `.venv-s3/`.
 *   npm run bench   (or, after npm run build and npm run dist:
 *                    node test/bench/scaling.mts [--sizes 100,400,1000] [--unsaved 1000] [--backends file,s3] [--parallel 10])
 * Under `npm run bench` (test/bench/report.mts) it also writes its section of docs/benchmarks.md (section.mts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startEmulator } from "../../dist/emulator/index.js";
import { cliEnvironment, findPulumiCli, type PulumiCli } from "../../dist/testing/index.js";
import { pluginRelease } from "../release/artefacts.mts";
import { Section } from "./section.mts";

const USAGE =
  "usage: node test/bench/scaling.mts [--sizes 100,400,1000] [--unsaved SIZES] [--backends file,s3] [--parallel 10]\n" +
  "  --sizes     the stack sizes (Apps) to measure, comma-separated (default 100,400,1000)\n" +
  "  --unsaved   the sizes measured again with PULUMI_SKIP_CHECKPOINTS=true (default: the largest of --sizes; none: '')\n" +
  "  --backends  file, s3 or both (default file,s3; s3 needs .venv-s3, from npm run s3:install)\n" +
  "  --parallel  the CLI's --parallel (default 10, as the other benchmarks)";

/** A comma-separated list of positive whole numbers, or exits naming the flag. */
function sizesOf(flag: string, value: string): number[] {
  if (value === "") return [];
  const sizes = value.split(",").map((each) => Number(each.trim()));
  if (sizes.some((size) => !Number.isInteger(size) || size < 1)) {
    console.error(`--${flag} ${value}: give whole numbers of Apps above 0, comma-separated (e.g. --${flag} 100,400)\n${USAGE}`);
    process.exit(2);
  }
  return sizes;
}

function settings() {
  const options = {
    sizes: { type: "string" },
    unsaved: { type: "string" },
    backends: { type: "string" },
    parallel: { type: "string" },
    help: { type: "boolean" },
  } as const;
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options }>>["values"];
  try {
    parsed = parseArgs({ options }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (parsed.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const sizes = sizesOf("sizes", parsed.sizes ?? "100,400,1000");
  if (sizes.length === 0) {
    console.error(`--sizes is empty: give at least one size\n${USAGE}`);
    process.exit(2);
  }
  const unsaved = sizesOf("unsaved", parsed.unsaved ?? String(Math.max(...sizes)));
  const backends = (parsed.backends ?? "file,s3").split(",").map((each) => each.trim());
  const wrong = backends.filter((backend) => backend !== "file" && backend !== "s3");
  if (wrong.length > 0 || backends.length === 0) {
    console.error(`--backends ${parsed.backends}: give file, s3 or file,s3\n${USAGE}`);
    process.exit(2);
  }
  const parallel = Number(parsed.parallel ?? 10);
  if (!Number.isInteger(parallel) || parallel < 1) {
    console.error(`--parallel ${parsed.parallel}: give a whole number above 0\n${USAGE}`);
    process.exit(2);
  }
  return { sizes, unsaved, backends: backends as ("file" | "s3")[], parallel };
}

const { sizes: SIZES, unsaved: UNSAVED, backends: BACKENDS, parallel: PARALLEL } = settings();
const root = join(import.meta.dirname, "..", "..");
const MOTO_SERVER = join(root, ".venv-s3", "bin", "moto_server");
const KEY = "gms_bench_scaling_key";
const PROJECT = "scaling";
const BUCKET = "gms-scaling";
const OPERATIONS = ["up", "destroy", "preview", "refresh"] as const;
type OperationName = (typeof OPERATIONS)[number];

/** The project: N Apps, nothing else. */
function projectYaml(n: number): string {
  const lines = [`name: ${PROJECT}`, "runtime: yaml", "resources:"];
  for (let i = 0; i < n; i++)
    lines.push(`  app-${i}:`, "    type: gms:index:App", "    properties:", `      name: scaling ${i}`, "      description: scaling");
  return `${lines.join("\n")}\n`;
}

/** Runs `pulumi args...` in `cwd`; its wall time and standard output. Rejects when it fails, with what it said. */
function pulumi(cli: PulumiCli, cwd: string, env: NodeJS.ProcessEnv, args: string[]) {
  return new Promise<{ seconds: number; stdout: string }>((resolve, reject) => {
    const begun = process.hrtime.bigint();
    const child = spawn(cli.bin, [...args, "--non-interactive", "--color", "never"], { cwd, env });
    let stdout = "";
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => {
      const seconds = Number(process.hrtime.bigint() - begun) / 1e9;
      if (code === 0) resolve({ seconds, stdout });
      else reject(new Error(`pulumi ${args.join(" ")} exited ${code}:\n${output.slice(-3000)}`));
    });
  });
}

/**
 * moto's S3 server on a port of its choosing, with the bucket made, and the checkpoint writes its request log shows.
 * moto logs each request as it answers it (`"PUT /<bucket>/<key> HTTP/1.1" 200`); a request of a key named for the
 * purpose, once logged, says that every request before it is counted.
 */
async function startMoto() {
  const child: ChildProcess = spawn(MOTO_SERVER, ["-H", "127.0.0.1", "-p", "0"], { stdio: ["ignore", "ignore", "pipe"] });
  const log: string[] = [];
  let said = "";
  let waiting: (() => void) | undefined;
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    said += chunk;
    const lines = said.split("\n");
    said = lines.pop()!;
    // moto colours a request line by its status: the colours go.
    log.push(...lines.map((line) => line.replace(/\u001b\[[0-9;]*m/g, "")));
    waiting?.();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const until = async (seen: () => string | undefined, what: string): Promise<string> => {
    for (let waited = 0; ; waited++) {
      const found = seen();
      if (found !== undefined) return found;
      if (child.exitCode !== null) throw new Error(`moto_server exited (${child.exitCode}) before ${what}: ${log.slice(-5).join("\n")}`);
      if (waited > 600) throw new Error(`moto_server did not log ${what} within a minute: ${log.slice(-5).join("\n")}`);
      await new Promise<void>((resolve) => {
        waiting = resolve;
        setTimeout(resolve, 100);
      });
    }
  };
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  try {
    const endpoint = await until(
      () => log.map((line) => /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1]).find(Boolean),
      "its address",
    );
    const made = await fetch(`${endpoint}/${BUCKET}`, { method: "PUT" });
    if (!made.ok) throw new Error(`moto_server refused to make bucket ${BUCKET}: ${made.status} ${await made.text()}`);
    // moto answers an object only to a caller with credentials; it does not check the signature.
    const as = {
      authorization: "AWS4-HMAC-SHA256 Credential=moto-bench/20261207/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0",
    };
    let marks = 0;
    let from = log.length;
    return {
      url: `s3://${BUCKET}?endpoint=${endpoint}&use_path_style=true&region=us-east-1`,
      env: { AWS_ACCESS_KEY_ID: "moto-bench", AWS_SECRET_ACCESS_KEY: "moto-bench", AWS_REGION: "us-east-1" },
      /** The size of the object at `key`. */
      async size(key: string): Promise<number> {
        const head = await fetch(`${endpoint}/${BUCKET}/${key}`, { method: "HEAD", headers: as });
        if (!head.ok) throw new Error(`HEAD ${key}: ${head.status}`);
        return Number(head.headers.get("content-length"));
      },
      /**
       * The PUTs moto logged (answered 200) since the last call, the request marking the moment logged first: every PUT,
       * and those of the checkpoint at `key` (`PutObject`) and of its copies to `<key>.bak` (`CopyObject`).
       */
      async puts(key: string): Promise<Puts> {
        const mark = `bench-mark-${++marks}`;
        await fetch(`${endpoint}/${BUCKET}/${mark}`, { headers: as });
        await until(
          () => (log.some((line, at) => at >= from && line.includes(`/${BUCKET}/${mark} `)) ? "" : undefined),
          `the request ${mark}`,
        );
        const lines = log.slice(from).filter((line) => / "PUT \S+ HTTP\/1\.1" 200 /.test(line));
        from = log.length;
        const of = (path: string) => lines.filter((line) => line.includes(`"PUT /${BUCKET}/${path} HTTP`)).length;
        return { all: lines.length, checkpoint: of(`${key}?x-id=PutObject`), copies: of(`${key}.bak?x-id=CopyObject`) };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
type Moto = Awaited<ReturnType<typeof startMoto>>;

/** The PUTs of an operation on S3: every one, the checkpoint's, and the server-side copies of it to `.bak`. */
interface Puts {
  all: number;
  checkpoint: number;
  copies: number;
}

interface Figure {
  seconds: number;
  /** The requests the service answered during it. */
  requests: number;
  /** On S3: the PUTs moto logged during it. */
  puts?: Puts;
}

interface Run {
  backend: "file" | "s3";
  n: number;
  unsaved: boolean;
  figures: Record<OperationName, Figure>;
  /** The checkpoint's bytes after `up`. */
  checkpointBytes: number;
}

const section = new Section();
const skip = (reason: string) => {
  section.print(`Scaling figures skipped: ${reason}`);
  section.text(`Skipped: ${reason}.`);
  section.write();
};

async function main(): Promise<void> {
  const lookup = findPulumiCli();
  if (!lookup.found) return skip(`no Pulumi CLI was found (${lookup.reason}); \`npm run pulumi:install\` builds one`);
  const { cli } = lookup;
  if (!existsSync(join(cli.dir, "pulumi-language-yaml")))
    return skip(`no pulumi-language-yaml beside ${cli.bin}; \`npm run pulumi:install\` builds it`);
  const release = pluginRelease();
  if (!release.present) return skip(`no release/${release.tarball.split("/").at(-1)}; \`npm run dist\` builds it`);
  const backends = BACKENDS.filter((backend) => backend !== "s3" || existsSync(MOTO_SERVER));
  const noS3 = BACKENDS.includes("s3") && !backends.includes("s3");
  if (noS3) section.print(`The S3 runs are skipped: ${MOTO_SERVER} is absent (npm run s3:install makes it)`);
  if (backends.length === 0) return skip(`no backend to run on (${MOTO_SERVER} is absent; npm run s3:install makes it)`);

  const dir = mkdtempSync(join(tmpdir(), "gms-bench-scaling-"));
  let requests = 0;
  const emulator = await startEmulator({
    db: join(dir, "emulator.db"),
    fixtures: { workspaces: [{ name: "Scaling", slug: "scaling", apiKey: KEY, limits: { apps: 1_000_000 } }] },
    onRequestComplete: () => void requests++,
  });
  let moto: Moto | undefined;
  try {
    const home = join(dir, "home");
    const base = { ...cliEnvironment(cli, { backendDir: join(dir, "unused"), passphrase: "bench scaling", pulumiHome: home }) };
    base.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
    mkdirSync(home);
    await pulumi(cli, dir, base, ["plugin", "install", "resource", "gms", release.version, "--file", release.tarball]);
    if (backends.includes("s3")) moto = await startMoto();
    section.print(
      `One stack of N gms:index:App: Pulumi YAML project, the release's plugin ${release.version}, real CLI ${cli.version} ` +
        `--parallel ${PARALLEL}, emulator in this process; one run of each operation; backends ${backends.join(", ")}; ` +
        `load average ${load()} (1, 5, 15 min) on ${cpus().length} CPUs`,
    );
    const runs: Run[] = [];
    const cases = backends.flatMap((backend) => [
      ...SIZES.map((n) => ({ backend, n, unsaved: false })),
      ...UNSAVED.map((n) => ({ backend, n, unsaved: true })),
    ]);
    for (const { backend, n, unsaved } of cases) {
      const stack = `n${n}${unsaved ? "-unsaved" : ""}`;
      const program = join(dir, backend, stack);
      mkdirSync(program, { recursive: true });
      writeFileSync(join(program, "Pulumi.yaml"), projectYaml(n));
      const backendDir = join(dir, backend, "state");
      mkdirSync(backendDir, { recursive: true });
      const env: NodeJS.ProcessEnv = {
        ...base,
        PULUMI_BACKEND_URL: backend === "s3" ? moto!.url : `file://${backendDir}`,
        ...(backend === "s3" ? moto!.env : {}),
        ...(unsaved ? { PULUMI_SKIP_CHECKPOINTS: "true" } : {}),
      };
      const run = (args: string[]) => pulumi(cli, program, env, [...args, "--stack", stack]);
      await pulumi(cli, program, env, ["stack", "init", stack]);
      await run(["config", "set", "gms:baseUrl", emulator.url]);
      await run(["config", "set", "--secret", "gms:apiKey", KEY]);
      const checkpointKey = `.pulumi/stacks/${PROJECT}/${stack}.json`;
      if (moto) await moto.puts(checkpointKey); // counts from here
      const apps = async () => {
        const exported = JSON.parse((await run(["stack", "export"])).stdout) as {
          deployment: { resources?: { type: string; id?: string }[] };
        };
        return (exported.deployment.resources ?? []).filter((resource) => resource.type === "gms:index:App" && resource.id).length;
      };
      const measure = async (operation: OperationName, args: string[]): Promise<Figure> => {
        process.stdout.write(`  ${backend} N=${n}${unsaved ? " PULUMI_SKIP_CHECKPOINTS=true" : ""}: ${operation} ...\n`);
        requests = 0;
        const { seconds } = await run([operation, ...args]);
        const figure: Figure = { seconds, requests };
        if (moto && backend === "s3") figure.puts = await moto.puts(checkpointKey);
        return figure;
      };
      const yes = ["--yes", "--skip-preview", "--parallel", String(PARALLEL)];
      const up = await measure("up", yes);
      const held = await apps();
      if (held !== n) throw new Error(`${backend} ${stack}: after up the stack holds ${held} Apps, not ${n}`);
      const checkpointBytes = backend === "s3" ? await moto!.size(checkpointKey) : statSync(join(backendDir, checkpointKey)).size;
      const preview = await measure("preview", ["--expect-no-changes", "--parallel", String(PARALLEL)]);
      const refresh = await measure("refresh", [...yes, "--expect-no-changes"]);
      const destroy = await measure("destroy", yes);
      const left = await apps();
      if (left !== 0) throw new Error(`${backend} ${stack}: after destroy the stack holds ${left} Apps`);
      if (moto) await moto.puts(checkpointKey); // the export's and the removal's requests are no operation's
      await run(["stack", "rm", "--yes"]);
      const result: Run = { backend, n, unsaved, figures: { up, destroy, preview, refresh }, checkpointBytes };
      runs.push(result);
      section.print(describe(result));
    }
    section.print(`load average at the end ${load()}`);
    report(runs, cli, release.version, noS3);
  } finally {
    await moto?.close();
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const seconds = (value: number) => `${value.toFixed(1)} s`;
/** The machine's load average (1, 5 and 15 minutes): how busy it was, as the figures are read. */
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(", ");
const size = (bytes: number) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} kB`);
const label = (run: Run) => `${run.n}${run.unsaved ? ", `PULUMI_SKIP_CHECKPOINTS=true`" : ""}`;
const puts = ({ puts }: Figure) => (puts ? `${puts.checkpoint} + ${puts.copies} copies (of ${puts.all})` : "");

function describe(run: Run): string {
  const parts = OPERATIONS.map((operation) => {
    const figure = run.figures[operation];
    return `${operation} ${seconds(figure.seconds)} (${figure.requests} requests${figure.puts ? `, checkpoint PUTs ${puts(figure)}` : ""})`;
  });
  const name = `${run.backend} N=${run.n}${run.unsaved ? " PULUMI_SKIP_CHECKPOINTS=true" : ""}`;
  return `${name}: ${parts.join(", ")}; checkpoint after up ${size(run.checkpointBytes)}`;
}

function report(runs: Run[], cli: PulumiCli, version: string, noS3: boolean): void {
  section.text(
    `\`pulumi up\`, \`destroy\`, \`preview\` and \`refresh\` of one stack of N \`gms:index:App\` (a Pulumi YAML project) on the ` +
      `real CLI ${cli.version} at \`--parallel ${PARALLEL}\`, served by the release's plugin ${version} (installed from its tarball), ` +
      "against the emulator in the benchmark's process, with the state on a file backend and in an S3 bucket (moto's S3 server). " +
      "Wall time of each CLI command, one run each (`up` and `destroy` with `--skip-preview`; `preview` and `refresh` with " +
      '`--expect-no-changes`, after the `up`). "Requests" are what the service answered during the operation: the provider\'s share, ' +
      'N for each operation but `preview` (which reads nothing). "Checkpoint PUTs" are the writes of the stack\'s checkpoint that ' +
      "moto's request log shows: a PUT of the whole checkpoint, and a server-side copy of the previous one to `.json.bak`, per write. " +
      "Why it grows, and what to do about it: [scaling.md](scaling.md)." +
      (noS3 ? " The S3 runs were skipped: moto's S3 server is not installed (`npm run s3:install`)." : ""),
  );
  for (const backend of ["file", "s3"] as const) {
    const mine = runs.filter((run) => run.backend === backend);
    if (mine.length === 0) continue;
    const head = [
      "N Apps",
      ...OPERATIONS.map((operation) => `\`${operation}\``),
      "requests (up/destroy/preview/refresh)",
      "checkpoint after `up`",
    ];
    if (backend === "s3") head.push("checkpoint PUTs + copies (of all PUTs): up", "destroy", "refresh");
    section.text(backend === "file" ? "On a file backend:" : "In an S3 bucket (moto's S3 server on loopback):");
    section.table(
      head,
      mine.map((run) => [
        label(run),
        ...OPERATIONS.map((operation) => seconds(run.figures[operation].seconds)),
        OPERATIONS.map((operation) => run.figures[operation].requests).join(" / "),
        size(run.checkpointBytes),
        ...(backend === "s3" ? [puts(run.figures.up), puts(run.figures.destroy), puts(run.figures.refresh)] : []),
      ]),
    );
  }
  section.write();
}

await main();
