/**
 * Emulator throughput, from one run:
 * - `GET /v1/apps/{guid}` and `POST /v1/apps` requests per second, next to a bare Fastify + node:sqlite
 *   server doing the same work (same apps table, auth by an API key lookup, same JSON shape), and the
 *   ratio emulator/bare;
 * - the time of the first and the last page of `GET /v1/apps` over a long list, and their ratio;
 * - the cost of the last of 10,000 creates of one App name (each takes the next free slug suffix) against the first.
 * Loopback HTTP with keep-alive, SQLite files (the CLI's default storage), bounded in count and time.
 * Prints figures only: timings are never pass/fail.
 *   npm run bench   (or: node test/bench/emulator.mts [requests] [concurrency] [long-list-length])
 * Under `npm run bench` (test/bench/report.mts) it also writes its section of docs/benchmarks.md (section.mts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
const PAGE_REQUESTS = 200;
const PAGE_LIMIT = 100;
const DEADLINE_MS = 60_000;
const KEY = "gms_bench_key_0001";
const LONG_KEY = "gms_bench_key_long";

interface Rate {
  done: number;
  perSecond: number;
  failures: number;
}

/** `REQUESTS` calls of `send` (or as many as fit in the deadline), `CONCURRENCY` at a time. */
async function measure(send: (i: number) => Promise<number>): Promise<Rate> {
  let next = 0;
  let failures = 0;
  const deadline = Date.now() + DEADLINE_MS;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS && Date.now() < deadline) {
        const status = await send(next++);
        if (status !== 200) failures++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const done = Math.min(next, REQUESTS);
  return { done, perSecond: done / seconds, failures };
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
 * The same work as the emulator's App routes without its layers: one `node:sqlite` file with the
 * emulator's workspaces / api_keys / apps tables, auth by key lookup, allowance count, slug range,
 * insert and read back, cached statements, the same JSON shape.
 */
async function startBareServer(path: string, apiKey: string): Promise<{ url: string; close: () => Promise<void> }> {
  const sql = new DatabaseSync(path);
  sql.exec("PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
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

  app.get<{ Params: { guid: string } }>("/v1/apps/:guid", async (request, reply) => {
    const row = get(
      "SELECT * FROM apps WHERE guid = ? AND workspace_id = ? AND deleted_at IS NULL",
      request.params.guid,
      request.caller.workspaceId,
    );
    return row ? present(row) : reply.status(404).send({ detail: "App not found" });
  });
  app.post<{ Body: { name?: unknown; description?: unknown } }>("/v1/apps", async (request, reply) => {
    const { name, description } = request.body ?? {};
    if (typeof name !== "string") return reply.status(422).send({ detail: "name is required" });
    const caller = request.caller;
    sql.exec("BEGIN IMMEDIATE");
    try {
      const limits = JSON.parse(
        String(get("SELECT limits FROM workspaces WHERE id = ? AND deleted_at IS NULL", caller.workspaceId)!.limits),
      );
      const used = Number(get("SELECT count(*) AS n FROM apps WHERE workspace_id = ? AND deleted_at IS NULL", caller.workspaceId)!.n);
      if (used >= (limits.apps ?? 100)) {
        sql.exec("ROLLBACK");
        return reply.status(429).send({ detail: "App limit reached" });
      }
      const base = slugify(name);
      const taken = new Set(
        prepared("SELECT slug FROM apps WHERE workspace_id = ? AND slug >= ? AND slug < ?")
          .all(caller.workspaceId, base, `${base}.`)
          .map((row) => row.slug),
      );
      let slug = base;
      for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
      const now = new Date().toISOString();
      const id = prepared(
        `INSERT INTO apps (guid, workspace_id, name, description, slug, created_at, updated_at, created_by_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        randomUUID(),
        caller.workspaceId,
        name,
        typeof description === "string" ? description : null,
        slug,
        now,
        now,
        caller.userId,
      ).lastInsertRowid;
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

const format = (rate: Rate) =>
  `${String(rate.done).padStart(6)} req ${rate.perSecond.toFixed(0).padStart(6)} req/s${rate.failures ? ` (${rate.failures} failures)` : ""}`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gms-bench-"));
  const emulator = await startEmulator({
    db: join(dir, "emulator.db"),
    fixtures: {
      workspaces: [
        { name: "Bench", slug: "bench", apiKey: KEY, limits: { apps: 1_000_000 } },
        { name: "Long list", slug: "long-list", apiKey: LONG_KEY, limits: { apps: 1_000_000 } },
      ],
    },
  });
  const bare = await startBareServer(join(dir, "bare.db"), KEY);
  const servers = { emulator: client(emulator.url, KEY), bare: client(bare.url, KEY) };
  const longList = client(emulator.url, LONG_KEY);
  const section = new Section();
  try {
    section.print(
      `node ${process.version}, SQLite file storage, ${REQUESTS} requests per route at concurrency ${CONCURRENCY}, ` +
        `long list of ${LONG_LIST} Apps`,
    );
    const rates: Record<string, Record<keyof typeof servers, Rate>> = {};
    for (const [name, server] of Object.entries(servers) as [keyof typeof servers, (typeof servers)[keyof typeof servers]][]) {
      const created = await server.call("POST", "/v1/apps", { name: "Target" });
      const { guid } = created.json as { guid: string };
      // Warm-up: JIT and connections.
      for (let i = 0; i < 200; i++) await server.status("GET", `/v1/apps/${guid}`);
      (rates["GET /v1/apps/{guid}"] ??= {} as Record<keyof typeof servers, Rate>)[name] = await measure(() =>
        server.status("GET", `/v1/apps/${guid}`),
      );
      (rates["POST /v1/apps"] ??= {} as Record<keyof typeof servers, Rate>)[name] = await measure((i) =>
        server.status("POST", "/v1/apps", { name: `App ${i}` }),
      );
    }
    for (const [route, rate] of Object.entries(rates)) {
      section.print(
        `${route.padEnd(20)} emulator ${format(rate.emulator)}   bare ${format(rate.bare)}   ` +
          `emulator/bare ${(rate.emulator.perSecond / rate.bare.perSecond).toFixed(2)}`,
      );
    }

    // The long list, seeded through the store (each create still checks the allowance and the slug).
    const caller = emulator.store.workspaces.authenticate(LONG_KEY)!;
    const seeding = process.hrtime.bigint();
    for (let i = 0; i < LONG_LIST; i++) emulator.store.apps.create(caller, { name: `Listed ${i}` });
    const seedMs = Number(process.hrtime.bigint() - seeding) / 1e6;
    section.print(
      `seeded ${LONG_LIST} Apps through AppStore.create in ${seedMs.toFixed(0)} ms (${((seedMs / LONG_LIST) * 1e3).toFixed(1)} µs each)`,
    );
    // Apps of one name: each takes the next free slug suffix. The cost of the last creates against the first.
    const sameName = (count: number) => {
      const times: number[] = [];
      for (let i = 0; i < count; i++) {
        const started = process.hrtime.bigint();
        emulator.store.apps.create(caller, { name: "Same name" });
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
    const page = (skip: number) => () => longList.status("GET", `/v1/apps?skip=${skip}&limit=${PAGE_LIMIT}`);
    for (let i = 0; i < 20; i++) await page(0)();
    const first = await meanLatency(page(0));
    const last = await meanLatency(page(lastSkip));
    const failures = first.failures + last.failures;
    section.print(
      `GET /v1/apps limit=${PAGE_LIMIT}  first page (skip=0) ${first.ms.toFixed(2)} ms   last page (skip=${lastSkip}) ${last.ms.toFixed(2)} ms   ` +
        `last/first ${(last.ms / first.ms).toFixed(2)}   (mean of ${PAGE_REQUESTS} sequential requests each${failures ? `, ${failures} failures` : ""})`,
    );

    section.text(
      `Node ${process.version}, SQLite file storage, loopback HTTP with keep-alive. Requests per second of the emulator next to a bare ` +
        `Fastify + node:sqlite server doing the same work (same apps table, auth by an API key lookup, same JSON shape), ` +
        `${REQUESTS} requests per route at concurrency ${CONCURRENCY} (or as many as fit in ${DEADLINE_MS / 1000} s).`,
    );
    const cell = (rate: Rate) => `${rate.perSecond.toFixed(0)}${rate.failures ? ` (${rate.failures} failures)` : ""}`;
    section.table(
      ["route", "emulator req/s", "bare req/s", "emulator/bare", "requests each"],
      Object.entries(rates).map(([route, rate]) => [
        `\`${route}\``,
        cell(rate.emulator),
        cell(rate.bare),
        tableRatio(rate.emulator.perSecond, rate.bare.perSecond),
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
    await Promise.all([servers.emulator.close(), servers.bare.close(), longList.close()]);
    await emulator.close();
    await bare.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
