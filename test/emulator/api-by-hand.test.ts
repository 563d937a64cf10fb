/**
 * docs/emulator.md's "Calling the API by hand" runs as written: its `sh` blocks after the one that starts the emulator
 * (each calls curl, itself or through the page's `gms` function) in order, as one bash script, against an emulator of
 * the test's own on a free port, reached through the GMS_BASE_URL and GMS_API_KEY that the first block exports (that
 * block's address and key are checked against its own emulator command). Then the API shows what the page made (the
 * App, the connection with its nickname, the Model linked to it, the Workflow of the App), the OpenAPI document was
 * saved, and the connection's key never shows in what was printed. Every curl of the page is in those blocks.
 * (The first block's loop that waits until the emulator answers is test/docs.test.ts's.) Skipped, saying why, without
 * bash, curl or jq (required under CI=true).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { callOverHttp } from "./harness";

const FILE = "emulator/api-by-hand.test.ts";
const page = readFileSync(join(__dirname, "..", "..", "docs", "emulator.md"), "utf8");
const HEADING = "## Calling the API by hand\n";
const section = page.slice(page.indexOf(HEADING), page.indexOf("\n## ", page.indexOf(HEADING) + HEADING.length));
const shBlocks = (markdown: string) => [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map(([, body]) => body!);
const [setup, ...calls] = shBlocks(section);
/** The fake provider key the page sends: no answer may print it. */
const PAGE_SECRET = "sk-not-a-real-key";

const tools = ["bash", "curl", "jq"].filter((tool) => spawnSync(tool, ["--version"]).status !== 0);
if (tools.length > 0) {
  const reason = `${tools.join(", ")} not found`;
  if (process.env.CI === "true") throw new Error(`${FILE}: the page's tools are required under CI=true: ${reason}`);
  console.log(`${FILE}: skipping the page's curl blocks: ${reason}`);
}

describe("docs/emulator.md, Calling the API by hand", () => {
  it("starts with a block that starts the emulator and exports its address and key, which the others use", () => {
    expect(section.startsWith(HEADING)).toBe(true);
    const port = /pulumi-gms emulator --port (\d+)/.exec(setup!)?.[1];
    const key = /GMS_EMULATOR_API_KEY=(\S+)/.exec(setup!)?.[1];
    expect(setup).toContain(`export GMS_BASE_URL=http://127.0.0.1:${port}/v1 GMS_API_KEY=${key}`);
    expect(calls.length).toBeGreaterThanOrEqual(6);
    for (const block of calls) expect(block).toMatch(/\b(curl|gms) /);
  });

  it("holds every curl of the page in those blocks, but the first block's wait until the emulator answers", () => {
    const everyCurl = shBlocks(page).filter((block) => block !== setup && block.includes("curl"));
    expect(everyCurl.length).toBeGreaterThan(0);
    for (const block of everyCurl) expect(calls).toContain(block);
    expect(setup!.split("\n").filter((line) => line.includes("curl"))).toEqual([
      expect.stringMatching(/^until curl -sf http:\/\/127\.0\.0\.1:\d+\/v1\/openapi\.json >\/dev\/null; do sleep 0\.2; done$/),
    ]);
  });
});

describe.skipIf(tools.length > 0)("docs/emulator.md's curl blocks, run against the emulator", () => {
  const apiKey = "gms_api_by_hand_key";
  let emulator: RunningEmulator;
  let dir: string;
  let run: { status: number | null; stdout: string; stderr: string };
  const api = (path: string) => callOverHttp({ url: emulator.url, apiKey }, "GET", path);

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, apiKey });
    dir = mkdtempSync(join(tmpdir(), "gms-api-by-hand-"));
    const script = ["set -euo pipefail", ...calls].join("\n");
    // Not spawnSync: the emulator answers from this process's event loop.
    const child = spawn("bash", ["-c", script], { cwd: dir, env: { ...process.env, GMS_BASE_URL: emulator.url, GMS_API_KEY: apiKey } });
    run = { status: null, stdout: "", stderr: "" };
    child.stdout.on("data", (chunk: Buffer) => (run.stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (run.stderr += chunk.toString("utf8")));
    run.status = await new Promise((resolve) => child.on("close", resolve));
  }, 120_000);
  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("run to the end, printing the lists and never the provider key", () => {
    const printed = `${run.stdout}${run.stderr}`;
    expect(run.status, printed).toBe(0);
    expect(printed).not.toContain(PAGE_SECRET);
    expect(run.stdout).toMatch(/"name":"Support"/);
    expect(run.stdout).toMatch(/"nickname":"OpenAI"/);
    expect(run.stdout).toMatch(/"llm":"gpt-4o-mini"/);
    expect(run.stdout).toMatch(/"name":"Triage"/);
    expect(run.stdout).toContain("/apps");
  });

  it("made the App, the connection, the Model linked to it and the App's Workflow", async () => {
    const apps = (await api("/apps")).body.data as { guid: string; name: string; description: string }[];
    expect(apps.map(({ name, description }) => ({ name, description }))).toEqual([{ name: "Support", description: "Answers tickets" }]);
    const connections = (await api("/providers")).body as { guid: string; name: string; nickname: string }[];
    expect(connections.map(({ name, nickname }) => ({ name, nickname }))).toEqual([{ name: "Main", nickname: "OpenAI" }]);
    const models = (await api("/models")).body as { llm: string; provider_guid: string }[];
    expect(models.map(({ llm, provider_guid }) => ({ llm, provider_guid }))).toEqual([
      { llm: "gpt-4o-mini", provider_guid: connections[0]!.guid },
    ]);
    const workflows = (await api(`/apps/${apps[0]!.guid}/workflows`)).body as { name: string; app: string }[];
    expect(workflows.map(({ name, app }) => ({ name, app }))).toEqual([{ name: "Triage", app: apps[0]!.guid }]);
  });

  it("saved the OpenAPI document", () => {
    const document = JSON.parse(readFileSync(join(dir, "openapi.json"), "utf8")) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/apps", "/providers", "/models", "/workflows"]));
  });
});
