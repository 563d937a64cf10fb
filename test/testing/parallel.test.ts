/**
 * LocalEngine runs steps in parallel by dependency, as `pulumi up` does, and still reports them in the
 * program's order. The emulator delays every write by a seeded random 80-240 ms, so that steps finish
 * in another order than they started; when each request started and ended is taken from its log.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { type EngineResult, LocalEngine, installPackageCopy } from "../../src/testing";

interface Timed {
  method: string;
  path: string;
  start: number;
  end: number;
}

/** The most requests of `method` in flight at one moment. */
function maxInFlight(requests: Timed[], method: string): number {
  const edges = requests
    .filter((request) => request.method === method)
    .flatMap((request) => [
      { at: request.start, delta: 1 },
      { at: request.end, delta: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.delta - b.delta);
  let current = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (current += edge.delta));
  return most;
}

const INDEPENDENT = ["p0", "p1", "p2", "p3", "p4", "p5"];

describe("LocalEngine in parallel", () => {
  let dir: string;
  let emulator: RunningEmulator;
  const requests: Timed[] = [];
  const log: string[] = [];
  const engine = (parallel?: number) =>
    new LocalEngine({
      programDir: dir,
      stateFile: join(dir, "state.json"),
      project: "parallel",
      stack: "dev",
      config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey } },
      secretsPassphrase: "parallel",
      log: (line) => log.push(line),
      ...(parallel === undefined ? {} : { parallel }),
    });
  const program = (description: string) =>
    writeFileSync(
      join(dir, "index.ts"),
      `import * as gms from "pulumi-gms";
const apps = ${JSON.stringify(INDEPENDENT)}.map((name) => new gms.App(name, { name, description: ${JSON.stringify(description)} }));
new gms.App("tail", { name: "tail", description: apps[0].slug });
`,
    );
  /** The names of the Apps a request of `method` was about, by the request's App GUID. */
  const byGuid = new Map<string, string>();
  const requestOf = (method: string, name: string) => {
    const guid = [...byGuid].find(([, app]) => app === name)?.[0];
    return requests.find((request) => request.method === method && (method === "POST" ? false : request.path === `/v1/apps/${guid}`));
  };
  const stepNames = (result: EngineResult) => result.steps.map((step) => `${step.op} ${step.name}`);
  const printed = () => log.filter((line) => /^ {2}[+~-] /.test(line)).map((line) => line.split(" ").slice(4, 6).join(" "));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gms-parallel-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "parallel-program", private: true, type: "module" }));
    installPackageCopy(dir);
    program("first");
    emulator = await startEmulator({
      port: 0,
      faults: "seed=5,latency=80-240,methods=POST+PUT+DELETE",
      onRequestComplete: (entry) => {
        const end = Date.now();
        requests.push({ method: entry.method, path: entry.path, start: end - entry.durationMs, end });
      },
    });
  });

  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const count = (sql: string) => (emulator.store.db.get(sql) as { n: number }).n;
  /**
   * Runs `operation` with the service's answers held (their writes committed) until `ready` holds of what it made,
   * so that the requests it has sent by then are in flight together at a moment the test holds.
   */
  const heldUntil = async <T>(ready: () => boolean, operation: Promise<T>): Promise<T> => {
    const release = emulator.faults.hold();
    try {
      for (const deadline = Date.now() + 60_000; !ready() && Date.now() < deadline; )
        await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      release();
    }
    return operation;
  };

  it("creates independent resources at once and a dependent after what it depends on; steps and lines in program order", async () => {
    // However slowly a busy machine runs the engine, the first three creates are in flight together: the service
    // holds its answers until it has made three Apps.
    const result = await heldUntil(() => count("SELECT count(*) AS n FROM apps") >= 3, engine().up());
    const order = [...INDEPENDENT, "tail"];
    expect(stepNames(result)).toEqual(order.map((name) => `create ${name}`));
    expect(printed()).toEqual(order.map((name) => `${name} created`));
    expect(maxInFlight(requests, "POST")).toBeGreaterThanOrEqual(3);
    expect(requests.filter((request) => request.method === "POST")).toHaveLength(7);
    const apps = (await (await fetch(`${emulator.url}/apps`, { headers: { authorization: `Bearer ${emulator.apiKey}` } })).json()) as {
      data: { guid: string; name: string; description: string; created_at: string }[];
    };
    for (const app of apps.data) byGuid.set(app.guid, app.name);
    const created = (name: string) => Date.parse(apps.data.find((app) => app.name === name)!.created_at);
    // The dependent was sent only once its dependency was answered (its description is p0's slug), so it
    // was stored at least the smallest injected delay after p0.
    expect(apps.data.find((app) => app.name === "tail")?.description).toBe("p0");
    expect(created("tail") - created("p0")).toBeGreaterThanOrEqual(80);
    expect(result.stateBytesWritten).toBeGreaterThan(0);
  });

  it("a no-op up writes no state and sends nothing", async () => {
    requests.length = 0;
    const result = await engine().up();
    expect(result.counts.same).toBe(7);
    expect(result.stateBytesWritten).toBe(0);
    expect(requests.filter((request) => request.method !== "GET")).toEqual([]);
  });

  it("parallel: 1 runs one step at a time", async () => {
    requests.length = 0;
    log.length = 0;
    program("second");
    const result = await engine(1).up();
    expect(stepNames(result)).toEqual([...INDEPENDENT.map((name) => `update ${name}`), "same tail"]);
    expect(maxInFlight(requests, "PUT")).toBe(1);
    expect(requests.filter((request) => request.method === "PUT")).toHaveLength(6);
  });

  it("destroy deletes in parallel, each resource only after what depends on it; steps in reverse program order", async () => {
    requests.length = 0;
    log.length = 0;
    const deleted = () => count("SELECT count(*) AS n FROM apps WHERE deleted_at IS NOT NULL");
    // Four deletes in flight together (the tail's and independent ones'), their answers held until the service has made them.
    const result = await heldUntil(() => deleted() >= 4, engine().destroy());
    const order = ["tail", ...[...INDEPENDENT].reverse()];
    expect(stepNames(result)).toEqual(order.map((name) => `delete ${name}`));
    expect(printed()).toEqual(order.map((name) => `${name} deleted`));
    expect(maxInFlight(requests, "DELETE")).toBeGreaterThanOrEqual(3);
    expect(requestOf("DELETE", "p0")!.start).toBeGreaterThanOrEqual(requestOf("DELETE", "tail")!.end);
  });

  it("refuses a parallelism below 1 before starting anything", async () => {
    await expect(engine(0).up()).rejects.toThrow("parallel must be a whole number of at least 1 (got 0)");
  });
});
