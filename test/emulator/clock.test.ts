/**
 * The emulator's clock offset (`clockOffsetMs`, `--clock-offset`): a service whose clock differs from its
 * clients'. Every timestamp it writes and the `Date` header of every answer (successes, refusals, unknown
 * routes) follow the offset, bracketed exactly by this machine's clock read before and after each request.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";

const CLI = join(__dirname, "../../dist/cli/main.js");
const MINUTES = 60_000;

/** Sends a request, and the span of this machine's clock it ran in, shifted by `offsetMs`. */
async function timed(offsetMs: number, url: string, init?: RequestInit) {
  const before = Date.now() + offsetMs;
  const response = await fetch(url, init);
  const body = (await response.json()) as Record<string, unknown>;
  const after = Date.now() + offsetMs;
  return { response, body, before, after };
}

/** A `Date` header has whole seconds: it lies between the second `before` falls in and `after`. */
function expectDateHeader(response: Response, before: number, after: number): void {
  const date = Date.parse(response.headers.get("date") ?? "");
  expect(date).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
  expect(date).toBeLessThanOrEqual(after);
}

describe.each([
  ["behind", -7 * MINUTES],
  ["ahead", 11 * MINUTES],
])("an emulator whose clock is %s of this machine's", (_, offsetMs) => {
  let emulator: RunningEmulator;
  const headers = () => ({ authorization: `Bearer ${emulator.apiKey}`, "content-type": "application/json" });

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, clockOffsetMs: offsetMs });
  });
  afterAll(() => emulator?.close());

  it("stamps records by its clock: created_at on create, updated_at on update", async () => {
    const created = await timed(offsetMs, `${emulator.url}/apps`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ name: "Clock" }),
    });
    expect(created.response.status).toBe(200);
    for (const field of ["created_at", "updated_at"]) {
      expect(Date.parse(String(created.body[field]))).toBeGreaterThanOrEqual(created.before);
      expect(Date.parse(String(created.body[field]))).toBeLessThanOrEqual(created.after);
    }
    expectDateHeader(created.response, created.before, created.after);

    const updated = await timed(offsetMs, `${emulator.url}/apps/${created.body.guid}`, {
      method: "PUT",
      headers: headers(),
      body: JSON.stringify({ description: "later" }),
    });
    expect(updated.response.status).toBe(200);
    expect(Date.parse(String(updated.body.updated_at))).toBeGreaterThanOrEqual(updated.before);
    expect(Date.parse(String(updated.body.updated_at))).toBeLessThanOrEqual(updated.after);
    expect(updated.body.created_at).toBe(created.body.created_at);
  });

  it("dates every answer by its clock: a success, a refused key, an unknown route", async () => {
    for (const [url, init, status] of [
      [`${emulator.url}/workspaces/current`, { headers: headers() }, 200],
      [`${emulator.url}/apps`, { headers: { authorization: "Bearer gms_not_a_key" } }, 401],
      [`${emulator.url}/no-such-route`, { headers: headers() }, 404],
    ] as const) {
      const { response, before, after } = await timed(offsetMs, url, init);
      expect(response.status, url).toBe(status);
      expectDateHeader(response, before, after);
    }
  });
});

describe("pulumi-gms emulator --clock-offset", () => {
  it("runs the service's clock that far from this machine's, and refuses a value that is not whole milliseconds", async () => {
    const offsetMs = -5 * MINUTES;
    const child = spawn(process.execPath, [CLI, "emulator", "--port", "0", "--db", ":memory:", `--clock-offset=${offsetMs}`], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, GMS_EMULATOR_API_KEY: "gms_clock_key" },
    });
    try {
      let stdout = "";
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk;
          const match = stdout.match(/^gms-emulator listening on (http:\/\/\S+\/v1)$/m);
          if (match && stdout.includes("not printed")) resolve(match[1]!);
        });
        child.once("exit", () => reject(new Error(`exited early: ${stdout}`)));
      });
      expect(stdout).toContain("clock: -300000 ms behind this machine's\n");
      const { response, before, after } = await timed(offsetMs, `${url}/workspaces/current`, {
        headers: { authorization: "Bearer gms_clock_key" },
      });
      expect(response.status).toBe(200);
      expectDateHeader(response, before, after);
    } finally {
      child.kill("SIGTERM");
    }

    const refused = spawn(process.execPath, [CLI, "emulator", "--port", "0", "--clock-offset", "soon"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    refused.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    expect(await new Promise((resolve) => refused.once("close", resolve))).toBe(2);
    expect(stderr).toContain("--clock-offset must be a whole number of milliseconds");
  });
});
