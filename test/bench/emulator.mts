/**
 * Emulator throughput: requests per second on `GET /v1/apps/{guid}` and `POST /v1/apps`, over loopback
 * HTTP with keep-alive, against a SQLite file (the CLI's default storage). Bounded in count and time.
 *   npm run bench            (or: node test/bench/emulator.mts [requests] [concurrency])
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { startEmulator } from "../../dist/emulator/index.js";

const REQUESTS = Number(process.argv[2] ?? 5000);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const KEY = "gms_bench_key_0001";

async function measure(label: string, send: (i: number) => Promise<number>): Promise<void> {
  let next = 0;
  let failures = 0;
  const deadline = Date.now() + 60_000;
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
  console.log(
    `${label.padEnd(24)} ${String(done).padStart(6)} requests  ${(done / seconds).toFixed(0).padStart(6)} req/s  ` +
      `${((seconds / done) * 1e3 * CONCURRENCY).toFixed(2)} ms/request at concurrency ${CONCURRENCY}  failures ${failures}`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gms-bench-"));
  const emulator = await startEmulator({
    db: join(dir, "bench.db"),
    fixtures: { workspaces: [{ name: "Bench", slug: "bench", apiKey: KEY, limits: { apps: 1_000_000 } }] },
  });
  const origin = new URL(emulator.url).origin;
  const pool = new Pool(origin, { connections: CONCURRENCY });
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  try {
    const created = await pool.request({ method: "POST", path: "/v1/apps", headers, body: JSON.stringify({ name: "Target" }) });
    const { guid } = (await created.body.json()) as { guid: string };
    console.log(`node ${process.version}, SQLite file storage, ${REQUESTS} requests per route`);
    // Warm-up: JIT and connections.
    for (let i = 0; i < 200; i++) await (await pool.request({ method: "GET", path: `/v1/apps/${guid}`, headers })).body.dump();

    await measure("GET /v1/apps/{guid}", async () => {
      const response = await pool.request({ method: "GET", path: `/v1/apps/${guid}`, headers });
      await response.body.dump();
      return response.statusCode;
    });
    await measure("POST /v1/apps", async (i) => {
      const response = await pool.request({ method: "POST", path: "/v1/apps", headers, body: JSON.stringify({ name: `App ${i}` }) });
      await response.body.dump();
      return response.statusCode;
    });
  } finally {
    await pool.close();
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
