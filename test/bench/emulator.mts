/**
 * Emulator throughput, from one run:
 * - `GET /v1/apps/{guid}` and `POST /v1/apps` (every POST of one name, so each takes the next free slug suffix)
 *   requests per second, next to a bare Fastify + node:sqlite server doing the same work (same apps table and
 *   usage counter, auth by an API key lookup, the body validated, the next slug found by the same index lookups,
 *   same JSON shape), each server's CPU time per request, and both ratios (emulator/bare in requests per second,
 *   bare/emulator in CPU per request). Each server runs in its own process (this file with `--serve`), loaded over
 *   plain keep-alive sockets, so that neither shares the load generator's event loop and the load generator is not
 *   what sets the pace; rounds alternate which side goes first, and a side's rate is its requests over its seconds
 *   across every round, so a slow spell weighs on both sides alike;
 * - the time of the first and the last page of `GET /v1/apps` over a long list, and their ratio;
 * - the cost of the last of 10,000 creates of one App name (each takes the next free slug suffix) against the first.
 * Loopback HTTP with keep-alive, SQLite files (the CLI's default storage), bounded in count and time.
 * Prints figures only: timings are never pass/fail.
 *   npm run bench   (or: node test/bench/emulator.mts [requests] [concurrency] [long-list-length] [rounds])
 * `GMS_BENCH_SERVER_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"` passes Node flags to both server processes
 * (profiles are written when they stop).
 * Under `npm run bench` (test/bench/report.mts) it also writes its section of docs/benchmarks.md (section.mts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type Socket } from "node:net";
import { createInterface } from "node:readline";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance } from "fastify";
import { Pool } from "undici";
import { startEmulator } from "../../dist/emulator/index.js";
import type * as SectionModule from "./section.mts";

// section.mts by a path TypeScript does not resolve (Node strips the types at run time; see cli.mts).
const sectionModule = "./section.mts";
const { Section, tableRatio } = (await import(sectionModule)) as typeof SectionModule;

const REQUESTS = Number(process.argv[2] ?? 5000);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const LONG_LIST = Number(process.argv[4] ?? 20_000);
const ROUNDS = Number(process.argv[5] ?? 3);
const PAGE_REQUESTS = 200;
const PAGE_LIMIT = 100;
const DEADLINE_MS = 60_000;
const KEY = "gms_bench_key_0001";
const LONG_KEY = "gms_bench_key_long";
/** The name of every App the POSTs create. */
const POST_NAME = "Same name";

interface Rate {
  done: number;
  seconds: number;
  perSecond: number;
  failures: number;
  /** CPU time (user + system) the server's process spent, in microseconds. */
  serverCpuUs: number;
}

/** Rates added up: every request over every second. */
const total = (rates: Rate[]): Rate => {
  const sum = (field: "done" | "seconds" | "failures" | "serverCpuUs") => rates.reduce((sum, rate) => sum + rate[field], 0);
  return {
    done: sum("done"),
    seconds: sum("seconds"),
    perSecond: sum("done") / sum("seconds"),
    failures: sum("failures"),
    serverCpuUs: sum("serverCpuUs"),
  };
};

/**
 * One keep-alive HTTP/1.1 connection sending prepared request bytes, one request at a time, reading back the status
 * and a `Content-Length` body. The load generator of the throughput figures: far lighter than a full client, so
 * that the servers, not the client sharing their machine, set the pace (what autocannon and wrk do).
 */
class RawConnection {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (status: number) => void; reject: (error: Error) => void } | undefined;

  private readonly socket: Socket;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
      this.settle();
    });
    const fail = (error: Error) => {
      this.waiting?.reject(error);
      this.waiting = undefined;
    };
    socket.on("error", fail);
    socket.on("close", () => fail(new Error("the server closed the connection")));
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => resolve(new RawConnection(socket)));
      socket.once("error", reject);
    });
  }

  /** Sends `request` and resolves with the status of its complete answer. */
  exchange(request: Buffer): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(request);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private settle(): void {
    const end = this.buffered.indexOf("\r\n\r\n");
    if (end < 0 || !this.waiting) return;
    const head = this.buffered.toString("latin1", 0, end);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) {
      this.waiting.reject(new Error(`an answer without Content-Length: ${head.split("\r\n")[0]}`));
      this.waiting = undefined;
      return;
    }
    const size = end + 4 + Number(length[1]);
    if (this.buffered.length < size) return;
    this.buffered = this.buffered.subarray(size);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting.resolve(Number(head.slice(9, 12)));
  }
}

/** The bytes of one request to `url`'s server, with the bench's key (and a JSON body). */
function requestBytes(url: string, method: "GET" | "POST", path: string, body?: unknown): Buffer {
  const payload = body === undefined ? "" : JSON.stringify(body);
  const lines = [
    `${method} ${path} HTTP/1.1`,
    `host: ${new URL(url).host}`,
    `authorization: Bearer ${KEY}`,
    "content-type: application/json",
    ...(body === undefined ? [] : [`content-length: ${Buffer.byteLength(payload)}`]),
  ];
  return Buffer.from(`${lines.join("\r\n")}\r\n\r\n${payload}`);
}

/**
 * `REQUESTS` requests (or as many as fit in the deadline), one at a time on each of the `CONCURRENCY` connections,
 * and the CPU time the server's process spent meanwhile.
 */
async function measure(connections: RawConnection[], request: Buffer, server: ServerProcess): Promise<Rate> {
  let next = 0;
  let failures = 0;
  const deadline = Date.now() + DEADLINE_MS;
  const cpuBefore = await server.cpuUs();
  const started = process.hrtime.bigint();
  await Promise.all(
    connections.map(async (connection) => {
      while (next < REQUESTS && Date.now() < deadline) {
        next++;
        if ((await connection.exchange(request)) !== 200) failures++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const serverCpuUs = (await server.cpuUs()) - cpuBefore;
  const done = Math.min(next, REQUESTS);
  return { done, seconds, perSecond: done / seconds, failures, serverCpuUs };
}

/** Mean milliseconds of `PAGE_REQUESTS` sequential calls of `send`. */
async function meanLatency(send: () => Promise<number>): Promise<{ ms: number; failures: number }> {
  let failures = 0;
  let done = 0;
  const deadline = Date.now() + DEADLINE_MS;
  const started = process.hrtime.bigint();
  while (done < PAGE_REQUESTS && Date.now() < deadline) {
    if ((await send()) !== 200) failures++;
    done++;
  }
  return { ms: Number(process.hrtime.bigint() - started) / 1e6 / done, failures };
}

/** A client for one server: GET and POST on `/v1/apps`. */
function client(url: string, key: string) {
  const pool = new Pool(new URL(url).origin, { connections: CONCURRENCY });
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const call = async (method: "GET" | "POST", path: string, body?: unknown): Promise<{ status: number; json: unknown }> => {
    const response = await pool.request({ method, path, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: response.statusCode, json: await response.body.json() };
  };
  const status = async (method: "GET" | "POST", path: string, body?: unknown): Promise<number> => {
    const response = await pool.request({ method, path, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    await response.body.dump();
    return response.statusCode;
  };
  return { call, status, close: () => pool.close() };
}

/**
 * The same work as the emulator's App routes without its layers: one `node:sqlite` file with the emulator's
 * workspaces / api_keys / apps tables and a per-workspace count of live Apps kept by a trigger (the emulator's
 * `feature_usage`), auth by key lookup, the body validated (Fastify's JSON schema), allowance check, the next
 * free slug (the suffix after the last one handed out, checked with two lookups in the (workspace, slug) index,
 * else a range scan), insert and read back in one transaction, cached statements, the same JSON shape.
 */
async function startBareServer(path: string, apiKey: string): Promise<{ url: string; close: () => Promise<void> }> {
  const sql = new DatabaseSync(path);
  sql.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON");
  const columns =
    "created_at TEXT NOT NULL, updated_at TEXT NOT NULL, created_by_id TEXT NOT NULL, last_updated_by_id TEXT, deleted_at TEXT";
  sql.exec(`
    CREATE TABLE workspaces (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
      slug TEXT NOT NULL, limits TEXT, ${columns});
    CREATE TABLE api_keys (key TEXT PRIMARY KEY, workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
      user_id TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE TABLE apps (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL UNIQUE,
      workspace_id INTEGER NOT NULL REFERENCES workspaces(id), name TEXT NOT NULL, description TEXT, slug TEXT NOT NULL, ${columns});
    CREATE INDEX apps_workspace ON apps (workspace_id, deleted_at);
    CREATE INDEX apps_slug ON apps (workspace_id, slug);
    CREATE TABLE usage (workspace_id INTEGER PRIMARY KEY REFERENCES workspaces(id), apps INTEGER NOT NULL);
    CREATE TRIGGER apps_usage AFTER INSERT ON apps WHEN NEW.deleted_at IS NULL BEGIN
      INSERT INTO usage (workspace_id, apps) VALUES (NEW.workspace_id, 1) ON CONFLICT (workspace_id) DO UPDATE SET apps = apps + 1;
    END;
  `);
  const statements = new Map<string, StatementSync>();
  const prepared = (text: string): StatementSync => {
    let statement = statements.get(text);
    if (!statement) statements.set(text, (statement = sql.prepare(text)));
    return statement;
  };
  const get = (text: string, ...params: SQLInputValue[]) => prepared(text).get(...params) as Record<string, SQLInputValue> | undefined;
  const stamp = new Date().toISOString();
  const userId = randomUUID();
  const workspaceId = Number(
    prepared("INSERT INTO workspaces (guid, name, slug, limits, created_at, updated_at, created_by_id) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
      randomUUID(),
      "Bench",
      "bench",
      JSON.stringify({ apps: 1_000_000 }),
      stamp,
      stamp,
      userId,
    ).lastInsertRowid,
  );
  prepared("INSERT INTO api_keys (key, workspace_id, user_id, created_at) VALUES (?, ?, ?, ?)").run(apiKey, workspaceId, userId, stamp);

  const present = (row: Record<string, SQLInputValue>) => ({
    guid: row.guid,
    name: row.name,
    description: row.description ?? null,
    slug: row.slug,
    created_at: row.created_at,
    updated_at: row.updated_at,
    created_by_id: row.created_by_id,
    last_updated_by_id: row.last_updated_by_id ?? null,
  });
  const slugify = (name: string) =>
    name
      .normalize("NFKD")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "") || "untitled";
  const nextSuffix = new Map<string, number>();
  const uniqueSlug = (workspace: number, base: string): string => {
    const slugOf = (n: number) => (n === 1 ? base : `${base}-${n}`);
    const taken = (n: number) => get("SELECT 1 AS n FROM apps WHERE workspace_id = ? AND slug = ?", workspace, slugOf(n)) !== undefined;
    const key = `${workspace}\n${base}`;
    const hint = nextSuffix.get(key);
    let free: number;
    if (hint !== undefined && !taken(hint) && taken(hint - 1)) free = hint;
    else {
      const used = new Set(
        prepared("SELECT slug FROM apps WHERE workspace_id = ? AND slug >= ? AND slug < ?")
          .all(workspace, base, `${base}.`)
          .map((row) => row.slug),
      );
      free = 1;
      while (used.has(slugOf(free))) free++;
    }
    nextSuffix.set(key, free + 1);
    return slugOf(free);
  };

  const app: FastifyInstance = Fastify();
  app.decorateRequest("caller", null as unknown as { workspaceId: number; userId: string });
  app.addHook("onRequest", async (request, reply) => {
    const match = /^Bearer (.+)$/.exec(request.headers.authorization ?? "");
    const row =
      match &&
      get(
        `SELECT k.workspace_id, k.user_id FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
         WHERE k.key = ? AND w.deleted_at IS NULL`,
        match[1]!,
      );
    if (!row) return reply.status(401).send({ detail: "Invalid API key" });
    request.caller = {
      workspaceId: Number(row.workspace_id),
      userId: String(row.user_id),
    };
  });

  app.get<{ Params: { guid: string } }>(
    "/v1/apps/:guid",
    { schema: { params: { type: "object", properties: { guid: { type: "string", format: "uuid" } }, required: ["guid"] } } },
    async (request, reply) => {
      const row = get(
        "SELECT * FROM apps WHERE guid = ? AND workspace_id = ? AND deleted_at IS NULL",
        request.params.guid,
        request.caller.workspaceId,
      );
      return row ? present(row) : reply.status(404).send({ detail: "App not found" });
    },
  );
  const body = {
    type: "object",
    properties: { name: { type: "string", minLength: 1 }, description: { type: ["string", "null"] } },
    required: ["name"],
  };
  app.post<{ Body: { name: string; description?: string | null } }>("/v1/apps", { schema: { body } }, async (request, reply) => {
    const { name, description } = request.body;
    const caller = request.caller;
    sql.exec("BEGIN IMMEDIATE");
    try {
      const limits = JSON.parse(
        String(get("SELECT limits FROM workspaces WHERE id = ? AND deleted_at IS NULL", caller.workspaceId)!.limits),
      );
      const used = Number(get("SELECT apps FROM usage WHERE workspace_id = ?", caller.workspaceId)?.apps ?? 0);
      if (used >= (limits.apps ?? 100)) {
        sql.exec("ROLLBACK");
        return reply.status(429).send({ detail: "App limit reached" });
      }
      const slug = uniqueSlug(caller.workspaceId, slugify(name));
      const now = new Date().toISOString();
      const id = prepared(
        `INSERT INTO apps (guid, workspace_id, name, description, slug, created_at, updated_at, created_by_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(randomUUID(), caller.workspaceId, name, description ?? null, slug, now, now, caller.userId).lastInsertRowid;
      const row = get("SELECT * FROM apps WHERE id = ?", id)!;
      sql.exec("COMMIT");
      return present(row);
    } catch (error) {
      sql.exec("ROLLBACK");
      throw error;
    }
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return {
    url,
    close: async () => {
      await app.close();
      sql.close();
    },
  };
}

type Side = "emulator" | "bare";

/**
 * `--serve emulator|bare <dir>`: this file as one server's process. It prints its URL on a line of its own and
 * stops when its standard input ends (the benchmark closes it, or has gone).
 */
async function serve(side: Side, dir: string): Promise<void> {
  const server =
    side === "bare"
      ? await startBareServer(join(dir, "bare.db"), KEY)
      : await startEmulator({
          db: join(dir, "emulator.db"),
          fixtures: { workspaces: [{ name: "Bench", slug: "bench", apiKey: KEY, limits: { apps: 1_000_000 } }] },
        });
  console.log(`listening on ${server.url}`);
  // The benchmark asks for this process's CPU time around each measurement.
  process.on("message", () => {
    const { user, system } = process.cpuUsage();
    process.send!({ cpuUs: user + system });
  });
  process.stdin.resume();
  process.stdin.on("end", () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

/** One server in its own process (this file with `--serve`): where it listens, its CPU time so far, how to stop it. */
interface ServerProcess {
  url: string;
  cpuUs(): Promise<number>;
  stop(): Promise<void>;
}

async function startServerProcess(side: Side, dir: string): Promise<ServerProcess> {
  const flags = (process.env.GMS_BENCH_SERVER_FLAGS ?? "").split(/\s+/).filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...flags, import.meta.filename, "--serve", side, dir], {
    stdio: ["pipe", "pipe", "inherit", "ipc"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const cpuUs = () =>
    new Promise<number>((resolve) => {
      child.once("message", (message) => resolve((message as { cpuUs: number }).cpuUs));
      child.send("cpu");
    });
  for await (const line of createInterface({ input: child.stdout! })) {
    const match = /^listening on (\S+)/.exec(line);
    if (match) {
      return {
        url: match[1]!,
        cpuUs,
        stop: () => {
          child.disconnect();
          child.stdin!.end();
          return exited;
        },
      };
    }
  }
  throw new Error(`the ${side} server exited before listening`);
}

/** The bare server's CPU time per request over the emulator's. */
const cpuRatio = (rate: Record<Side, Rate>) => rate.bare.serverCpuUs / rate.bare.done / (rate.emulator.serverCpuUs / rate.emulator.done);

const format = (rate: Rate) =>
  `${String(rate.done).padStart(6)} req ${rate.perSecond.toFixed(0).padStart(6)} req/s ${(rate.serverCpuUs / rate.done).toFixed(0).padStart(4)} µs CPU/req` +
  `${rate.failures ? ` (${rate.failures} failures)` : ""}`;

/** GET and POST against both servers, `ROUNDS` rounds alternating which side goes first; each side's rates per route. */
async function throughput(dir: string): Promise<Record<string, Record<Side, Rate[]>>> {
  const servers = { emulator: await startServerProcess("emulator", dir), bare: await startServerProcess("bare", dir) };
  const connections: Record<Side, RawConnection[]> = { emulator: [], bare: [] };
  try {
    const requests = {} as Record<Side, Record<string, Buffer>>;
    for (const side of ["emulator", "bare"] as const) {
      const url = servers[side].url;
      const setup = client(url, KEY);
      const created = await setup.call("POST", "/v1/apps", { name: "Target" });
      await setup.close();
      const { guid } = created.json as { guid: string };
      requests[side] = {
        "GET /v1/apps/{guid}": requestBytes(url, "GET", `/v1/apps/${guid}`),
        "POST /v1/apps": requestBytes(url, "POST", "/v1/apps", { name: POST_NAME }),
      };
      for (let i = 0; i < CONCURRENCY; i++) connections[side].push(await RawConnection.open(url));
      // Warm-up: JIT and connections, both routes (the POSTs' Apps are of another name than the measured ones).
      const warmUp = [requests[side]["GET /v1/apps/{guid}"]!, requestBytes(url, "POST", "/v1/apps", { name: "Warm-up" })];
      for (const request of warmUp) {
        await Promise.all(
          connections[side].map(async (connection) => {
            for (let i = 0; i < 50; i++) await connection.exchange(request);
          }),
        );
      }
    }
    const rates: Record<string, Record<Side, Rate[]>> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const order: Side[] = round % 2 === 0 ? ["emulator", "bare"] : ["bare", "emulator"];
      for (const route of Object.keys(requests.emulator)) {
        for (const side of order) {
          const rate = await measure(connections[side], requests[side][route]!, servers[side]);
          ((rates[route] ??= { emulator: [], bare: [] })[side] as Rate[]).push(rate);
        }
      }
    }
    return rates;
  } finally {
    for (const connection of [...connections.emulator, ...connections.bare]) connection.close();
    await Promise.all([servers.emulator.stop(), servers.bare.stop()]);
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gms-bench-"));
  const section = new Section();
  let emulator: Awaited<ReturnType<typeof startEmulator>> | undefined;
  let longList: ReturnType<typeof client> | undefined;
  try {
    section.print(
      `node ${process.version}, SQLite file storage, each server in its own process, ${ROUNDS} rounds of ${REQUESTS} requests ` +
        `per route and server at concurrency ${CONCURRENCY}, every POST of one name; long list of ${LONG_LIST} Apps`,
    );
    const rounds = await throughput(dir);
    const rates = Object.fromEntries(
      Object.entries(rounds).map(([route, sides]) => [route, { emulator: total(sides.emulator), bare: total(sides.bare) }]),
    );
    for (const [route, rate] of Object.entries(rates)) {
      section.print(`${route.padEnd(20)} emulator ${format(rate.emulator)}   bare ${format(rate.bare)}`);
    }
    // The ratios, each of figures measured in this run: requests per second, and the servers' CPU time per request
    // (bare/emulator, so that both read as "the emulator's speed as a share of the bare server's").
    for (const [route, rate] of Object.entries(rates)) {
      const perRound = rounds[route]!.emulator.map((each, i) => (each.perSecond / rounds[route]!.bare[i]!.perSecond).toFixed(2));
      section.print(
        `${route.padEnd(20)} emulator/bare ${(rate.emulator.perSecond / rate.bare.perSecond).toFixed(2)} in requests per second ` +
          `(rounds: ${perRound.join(", ")}), ${cpuRatio(rate).toFixed(2)} in server CPU per request`,
      );
    }

    emulator = await startEmulator({
      db: join(dir, "long-list.db"),
      fixtures: { workspaces: [{ name: "Long list", slug: "long-list", apiKey: LONG_KEY, limits: { apps: 1_000_000 } }] },
    });
    longList = client(emulator.url, LONG_KEY);
    // The long list, seeded through the store (each create still checks the allowance and the slug).
    const store = emulator.store;
    const caller = store.workspaces.authenticate(LONG_KEY)!;
    const seeding = process.hrtime.bigint();
    for (let i = 0; i < LONG_LIST; i++) store.apps.create(caller, { name: `Listed ${i}` });
    const seedMs = Number(process.hrtime.bigint() - seeding) / 1e6;
    section.print(
      `seeded ${LONG_LIST} Apps through AppStore.create in ${seedMs.toFixed(0)} ms (${((seedMs / LONG_LIST) * 1e3).toFixed(1)} µs each)`,
    );
    // Apps of one name: each takes the next free slug suffix. The cost of the last creates against the first.
    const sameName = (count: number) => {
      const times: number[] = [];
      for (let i = 0; i < count; i++) {
        const started = process.hrtime.bigint();
        store.apps.create(caller, { name: "Same name" });
        times.push(Number(process.hrtime.bigint() - started) / 1e3);
      }
      return times;
    };
    const SAME = 10_000;
    const same = sameName(SAME);
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const firstCreates = mean(same.slice(1, 101));
    const lastCreates = mean(same.slice(-100));
    section.print(
      `${SAME} Apps of one name through AppStore.create: creates 2-101 ${firstCreates.toFixed(1)} µs each, creates ` +
        `${SAME - 99}-${SAME} ${lastCreates.toFixed(1)} µs each, last/first ${(lastCreates / firstCreates).toFixed(2)}`,
    );
    const lastSkip = Math.max(0, LONG_LIST - PAGE_LIMIT);
    const lister = longList;
    const page = (skip: number) => () => lister.status("GET", `/v1/apps?skip=${skip}&limit=${PAGE_LIMIT}`);
    for (let i = 0; i < 20; i++) await page(0)();
    const first = await meanLatency(page(0));
    const last = await meanLatency(page(lastSkip));
    const failures = first.failures + last.failures;
    section.print(
      `GET /v1/apps limit=${PAGE_LIMIT}  first page (skip=0) ${first.ms.toFixed(2)} ms   last page (skip=${lastSkip}) ${last.ms.toFixed(2)} ms   ` +
        `last/first ${(last.ms / first.ms).toFixed(2)}   (mean of ${PAGE_REQUESTS} sequential requests each${failures ? `, ${failures} failures` : ""})`,
    );

    section.text(
      `Node ${process.version}, SQLite file storage, loopback HTTP with keep-alive, each server in its own process. Requests per ` +
        `second of the emulator next to a bare Fastify + node:sqlite server doing the same work (same apps table and usage count, ` +
        `auth by an API key lookup, the body validated, the next slug suffix found by the same index lookups, same JSON shape), ` +
        `${ROUNDS} rounds of ${REQUESTS} requests per route and server at concurrency ${CONCURRENCY} (or as many as fit in ` +
        `${DEADLINE_MS / 1000} s), every POST of one name (each takes the next free slug suffix); rounds alternate which server ` +
        `goes first, and each rate is every request of the rounds over their seconds. The load comes from plain keep-alive ` +
        `sockets (one request at a time on each), so that the servers set the pace; each server's CPU time per request is ` +
        `its process's user + system time over the requests, and its ratio is bare/emulator.`,
    );
    const cell = (rate: Rate) => `${rate.perSecond.toFixed(0)}${rate.failures ? ` (${rate.failures} failures)` : ""}`;
    const cpu = (rate: Rate) => `${(rate.serverCpuUs / rate.done).toFixed(0)} µs`;
    section.table(
      [
        "route",
        "emulator req/s",
        "bare req/s",
        "emulator/bare",
        "per round",
        "CPU/request emulator",
        "bare",
        "bare/emulator",
        "requests each",
      ],
      Object.entries(rates).map(([route, rate]) => [
        `\`${route}\``,
        cell(rate.emulator),
        cell(rate.bare),
        tableRatio(rate.emulator.perSecond, rate.bare.perSecond),
        rounds[route]!.emulator.map((each, i) => tableRatio(each.perSecond, rounds[route]!.bare[i]!.perSecond)).join(", "),
        cpu(rate.emulator),
        cpu(rate.bare),
        `${cpuRatio(rate).toFixed(2)}x`,
        `${rate.emulator.done} / ${rate.bare.done}`,
      ]),
    );
    section.text(
      `A long list of ${LONG_LIST} Apps, seeded through \`AppStore.create\` (each create checks the allowance and the slug), ` +
        `then ${SAME} Apps of one name (each takes the next free slug suffix), then pages of \`GET /v1/apps\` ` +
        `(limit ${PAGE_LIMIT}, mean of ${PAGE_REQUESTS} sequential requests each${failures ? `, ${failures} failures` : ""}).`,
    );
    section.table(
      ["figure", "value"],
      [
        [
          `seeding ${LONG_LIST} Apps through AppStore.create`,
          `${seedMs.toFixed(0)} ms (${((seedMs / LONG_LIST) * 1e3).toFixed(1)} µs each)`,
        ],
        [`Apps of one name: creates 2-101`, `${firstCreates.toFixed(1)} µs each`],
        [`Apps of one name: creates ${SAME - 99}-${SAME}`, `${lastCreates.toFixed(1)} µs each`],
        ["Apps of one name: last/first", tableRatio(lastCreates, firstCreates)],
        ["`GET /v1/apps` first page (skip=0)", `${first.ms.toFixed(2)} ms`],
        [`\`GET /v1/apps\` last page (skip=${lastSkip})`, `${last.ms.toFixed(2)} ms`],
        ["`GET /v1/apps` last/first", tableRatio(last.ms, first.ms)],
      ],
    );
    section.write();
  } finally {
    await longList?.close();
    await emulator?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const serving = process.argv.indexOf("--serve");
(serving >= 0 ? serve(process.argv[serving + 1] as Side, process.argv[serving + 2]!) : main()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
