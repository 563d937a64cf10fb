/**
 * LocalEngine against its floor, from one run:
 * - `up`, no-op `up` and `destroy` of N Apps (N = 100 and 300 by default) through LocalEngine (the real
 *   program process and dynamic-provider host), next to the same API calls made directly with undici:
 *   one after another (the sequential floor) and with as many in flight as the engine's parallelism
 *   (the concurrent floor), and the ratios. A no-op `up` makes no request at all; its floor is shown as
 *   the N reads a refresh would make, for scale;
 * - the fixed cost of an operation: `up` of a program that declares nothing, and what each operation costs
 *   per resource beyond it, next to the floor's cost per request;
 * - the bytes of state each operation wrote (journal and file);
 * - the SDK's own floor: the program alone under the SDK's mocks (no engine, host or service), which the
 *   Pulumi CLI pays for the program at least.
 * The emulator runs in its own process (the CLI, SQLite file), so that neither side shares its event loop.
 * Prints figures only: timings are never pass/fail.
 * Each figure is the median of a few rounds (3 by default), a round measuring the floors and the engine in
 * turn, so that a slow spell of a shared machine weighs on both sides of a ratio alike.
 *   npm run bench   (or: node test/bench/engine.mts [N,N,...] [parallel] [rounds])
 * Under `npm run bench` (test/bench/report.mts) it also writes its section of docs/benchmarks.md (section.mts).
 * test/bench/cli.mts imports its helpers (the emulator, the floor, LocalEngine's runs) to set the real Pulumi CLI beside them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Pool } from "undici";
import { LocalEngine, installPackageCopy } from "../../dist/testing/index.js";
import { childEnv } from "../../dist/testing/program-process.js";
import type * as SectionModule from "./section.mts";

// section.mts by a path TypeScript does not resolve (Node strips the types at run time; see cli.mts).
const sectionModule = "./section.mts";
const { Section, tableMs, tableRatio } = (await import(sectionModule)) as typeof SectionModule;

export const KEY = "gms_bench_engine_key";
const root = join(import.meta.dirname, "..", "..");

export async function startEmulator(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const fixtures = join(dir, "fixtures.json");
  writeFileSync(fixtures, JSON.stringify({ workspaces: [{ name: "Bench", slug: "bench", apiKey: KEY, limits: { apps: 1_000_000 } }] }));
  const child = spawn(
    process.execPath,
    [join(root, "dist/cli/main.js"), "emulator", "--port", "0", "--db", join(dir, "emulator.db"), "--fixtures", fixtures],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  for await (const line of createInterface({ input: child.stdout! })) {
    const match = /listening on (\S+)/.exec(line);
    if (match) return { url: match[1]!, child };
  }
  throw new Error("the emulator exited before listening");
}

export const seconds = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

/** `count` calls of `call(i)`, `inFlight` at a time; seconds taken. */
export async function timed(count: number, inFlight: number, call: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: Math.min(inFlight, Math.max(count, 1)) }, async () => {
      while (next < count) await call(next++);
    }),
  );
  return seconds(started);
}

/** The raw floor: the requests an operation on N Apps must make, with undici alone. */
export async function floor(url: string, n: number, inFlight: number, tag: string) {
  const pool = new Pool(new URL(url).origin, { connections: Math.max(inFlight, 1) });
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  const base = new URL(url).pathname.replace(/\/$/, "");
  const call = async (method: string, path: string, body?: unknown): Promise<{ guid: string }> => {
    const response = await pool.request({
      method: method as "GET",
      path: `${base}${path}`,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.body.json()) as { guid: string };
    if (response.statusCode !== 200) throw new Error(`${method} ${path}: ${response.statusCode} ${JSON.stringify(json)}`);
    return json;
  };
  const guids: string[] = [];
  const create = await timed(n, inFlight, async (i) => {
    guids[i] = (await call("POST", "/apps", { name: `raw ${tag} ${i}`, description: "bench" })).guid;
  });
  const read = await timed(n, inFlight, async (i) => void (await call("GET", `/apps/${guids[i]}`)));
  const remove = await timed(n, inFlight, async (i) => void (await call("DELETE", `/apps/${guids[i]}`)));
  await pool.close();
  return { create, read, remove };
}

function program(dir: string, n: number): void {
  writeFileSync(
    join(dir, "index.ts"),
    `import * as gms from "pulumi-gms";
for (let i = 0; i < ${n}; i++) new gms.App(\`app-\${i}\`, { name: \`bench \${i}\`, description: "bench" });
`,
  );
}

/**
 * The SDK's own floor: the same program in one process under the SDK's own mocks (`setMocks`: every
 * registration answered at once; no engine, no provider host, no service), the SDK as shipped, from the
 * process's start to its end. The Pulumi CLI, whose language host runs the SDK as shipped, pays at least
 * this for the program; LocalEngine's program process trims part of it (defer-sdk.ts, runner.ts).
 */
async function sdkAlone(dir: string, n: number): Promise<number> {
  writeFileSync(
    join(dir, "mocked.mjs"),
    `import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const pulumi = require("@pulumi/pulumi");
await pulumi.runtime.setMocks({ newResource: (args) => ({ id: args.name, state: args.inputs }), call: () => ({}) }, "bench", "dev", false);
const gms = require("pulumi-gms");
const apps = Array.from({ length: ${n} }, (_, i) => new gms.App(\`app-\${i}\`, { name: \`bench \${i}\`, description: "bench" }));
await Promise.all(apps.map((app) => new Promise((resolve) => app.id.apply(resolve))));
`,
  );
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [join(dir, "mocked.mjs")], { cwd: dir, stdio: "inherit", env: childEnv(undefined) });
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`the program under the SDK's mocks exited with ${code}`);
  return seconds(started);
}

export async function engineRun(url: string, n: number, parallel: number) {
  const dir = mkdtempSync(join(tmpdir(), "gms-bench-engine-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "bench-program", private: true, type: "module" }));
  installPackageCopy(dir);
  program(dir, n);
  const engine = new LocalEngine({
    programDir: dir,
    stateFile: join(dir, "state.json"),
    project: "bench",
    stack: "dev",
    config: { "gms:baseUrl": url, "gms:apiKey": { secret: KEY } },
    secretsPassphrase: "bench",
    parallel,
    log: () => undefined,
  } as ConstructorParameters<typeof LocalEngine>[0]);
  const measure = async (operation: "up" | "destroy") => {
    const started = process.hrtime.bigint();
    const result = (await engine[operation]()) as { stateBytesWritten?: number };
    return { seconds: seconds(started), bytes: result.stateBytesWritten };
  };
  const up = await measure("up");
  const noop = await measure("up");
  const destroy = await measure("destroy");
  const sdk = await sdkAlone(dir, n);
  rmSync(dir, { recursive: true, force: true });
  return { up, noop, destroy, sdk };
}

export const ms = (value: number) => `${(value * 1000).toFixed(0).padStart(6)} ms`;
export const ratio = (value: number, base: number) => `${(value / base).toFixed(2).padStart(6)}x`;
const kb = (bytes: number | undefined) => (bytes === undefined ? "       ?" : `${(bytes / 1024).toFixed(1).padStart(7)} KB`);

export type Operation = { seconds: number; bytes?: number };
export type EngineRun = Awaited<ReturnType<typeof engineRun>>;
export type Floor = Awaited<ReturnType<typeof floor>>;

/** The median of each figure over the rounds (the bytes written are the same in every round). */
export function median<T extends Record<string, Operation | number>>(rounds: T[]): T {
  const middle = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const result: Record<string, Operation | number> = {};
  for (const key of Object.keys(rounds[0]!)) {
    const values = rounds.map((round) => round[key]!);
    result[key] =
      typeof values[0] === "number"
        ? middle(values as number[])
        : { seconds: middle((values as Operation[]).map((value) => value.seconds)), bytes: (values[0] as Operation).bytes };
  }
  return result as T;
}

async function main(SIZES: number[], PARALLEL: number, ROUNDS: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gms-bench-"));
  const { url, child } = await startEmulator(dir);
  const section = new Section();
  try {
    section.print(
      `LocalEngine vs raw undici (emulator in its own process; engine parallel=${PARALLEL}, concurrent floor ${PARALLEL} in flight; ` +
        `median of ${ROUNDS} rounds, each measuring the floors and the engine in turn, so a slow spell of the machine moves both)`,
    );
    const empties: EngineRun[] = [];
    const runs = new Map(SIZES.map((n) => [n, { sequential: [] as Floor[], concurrent: [] as Floor[], engine: [] as EngineRun[] }]));
    for (let round = 0; round < ROUNDS; round++) {
      empties.push(await engineRun(url, 0, PARALLEL));
      for (const n of SIZES) {
        const of = runs.get(n)!;
        of.sequential.push(await floor(url, n, 1, `seq ${n} ${round}`));
        of.concurrent.push(await floor(url, n, PARALLEL, `par ${n} ${round}`));
        of.engine.push(await engineRun(url, n, PARALLEL));
      }
    }
    const empty = median(empties);
    section.print(
      `fixed cost: up of an empty program ${ms(empty.up.seconds)}, no-op ${ms(empty.noop.seconds)}, destroy ${ms(empty.destroy.seconds)}` +
        ` (the empty program alone under the SDK's mocks ${ms(empty.sdk)})`,
    );
    section.text(
      `LocalEngine (\`pulumi-gms/testing\`: the real program process and dynamic-provider host) running \`up\`, a no-op \`up\` and ` +
        `\`destroy\` of N Apps against the emulator (in its own process, SQLite file), at parallel=${PARALLEL}, next to the same API ` +
        `calls made directly with undici one after another (floor seq) and ${PARALLEL} in flight (floor x${PARALLEL}). A no-op \`up\` ` +
        `makes no request; its floor is the N reads a refresh would make, for scale. "The SDK alone" is the program run under the ` +
        `SDK's own mocks (no engine, host or service), which the Pulumi CLI pays at least. Medians of ${ROUNDS} rounds, each ` +
        "measuring the floors and the engine in turn.",
    );
    section.table(
      ["fixed cost (a program that declares nothing)", "up", "no-op up", "destroy", "the program alone under the SDK's mocks"],
      [["LocalEngine", tableMs(empty.up.seconds), tableMs(empty.noop.seconds), tableMs(empty.destroy.seconds), tableMs(empty.sdk)]],
    );
    const rows: string[][] = [];
    for (const n of SIZES) {
      const of = runs.get(n)!;
      const [sequential, concurrent, engine] = [median(of.sequential), median(of.concurrent), median(of.engine)];
      section.print(`N=${n}`);
      const row = (name: string, value: Operation, seq: number, par: number, fixed: Operation) => {
        rows.push([
          String(n),
          name,
          tableMs(value.seconds),
          tableMs(seq),
          tableRatio(value.seconds, seq),
          tableMs(par),
          tableRatio(value.seconds, par),
          tableMs(engine.sdk),
          tableRatio(value.seconds, engine.sdk),
          `${(((value.seconds - fixed.seconds) * 1000) / n).toFixed(2)} ms (floor ${((seq * 1000) / n).toFixed(2)})`,
          value.bytes === undefined ? "?" : `${(value.bytes / 1024).toFixed(1)} KB`,
        ]);
        section.print(
          `  ${name.padEnd(8)} engine ${ms(value.seconds)}  floor seq ${ms(seq)} ${ratio(value.seconds, seq)}  ` +
            `floor x${PARALLEL} ${ms(par)} ${ratio(value.seconds, par)}  state written ${kb(value.bytes)}`,
        );
      };
      row("up", engine.up, sequential.create, concurrent.create, empty.up);
      row("no-op up", engine.noop, sequential.read, concurrent.read, empty.noop);
      row("destroy", engine.destroy, sequential.remove, concurrent.remove, empty.destroy);
      section.print(
        `  the SDK alone (the program under the SDK's own mocks, one process) ${ms(engine.sdk)}: ` +
          `up ${ratio(engine.up.seconds, engine.sdk).trim()} of it, no-op up ${ratio(engine.noop.seconds, engine.sdk).trim()}`,
      );
      // Where a ratio comes from: the operation's fixed cost (the program process and the provider host loading
      // the SDK), then a cost per resource next to the sequential floor's cost per request.
      const per = (name: string, value: Operation, fixed: Operation, seq: number) =>
        `${name} ${(((value.seconds - fixed.seconds) * 1000) / n).toFixed(2)} ms (floor ${((seq * 1000) / n).toFixed(2)})`;
      section.print(
        `  per resource beyond the fixed cost: ${per("up", engine.up, empty.up, sequential.create)}, ` +
          `${per("no-op", engine.noop, empty.noop, sequential.read)}, ${per("destroy", engine.destroy, empty.destroy, sequential.remove)}`,
      );
    }
    section.table(
      [
        "N",
        "operation",
        "LocalEngine",
        "floor seq",
        "LocalEngine/floor seq",
        `floor x${PARALLEL}`,
        `LocalEngine/floor x${PARALLEL}`,
        "the SDK alone",
        "LocalEngine/SDK alone",
        "per resource beyond the fixed cost",
        "state written",
      ],
      rows,
    );
    section.write();
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main)
  await main((process.argv[2] ?? "100,300").split(",").map(Number), Number(process.argv[3] ?? 10), Number(process.argv[4] ?? 3));
