/**
 * The quickstart's objects as the service shows them, for the suites that run it on either engine
 * (test/examples/quickstart.test.ts on LocalEngine, test/pulumi-cli/quickstart.test.ts on the real CLI).
 */
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { installPackageCopy } from "../../src/testing";
import { callOverHttp } from "../emulator/harness";
import { ROUTES } from "./programs-harness";

export const QUICKSTART = join(__dirname, "..", "..", "examples", "quickstart");

/**
 * A copy of examples/quickstart in a fresh folder (`work/quickstart`) with the built package installed as a
 * copy, and the emulator on a SQLite file there, seeded with the example's fixtures, logging into `requests`.
 */
export async function startQuickstart(prefix: string, requests: RequestLogEntry[]) {
  const work = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const programDir = join(work, "quickstart");
  cpSync(QUICKSTART, programDir, { recursive: true, filter: (source) => !source.startsWith(join(QUICKSTART, "node_modules")) });
  installPackageCopy(programDir);
  const emulator = await startEmulator({
    port: 0,
    db: join(work, "gms.db"),
    fixtures: join(QUICKSTART, "fixtures.yaml"),
    onRequestComplete: (entry) => requests.push(entry),
  });
  return { work, programDir, emulator };
}

export type ListItem = { guid: string; name: string; [key: string]: unknown };

/** The emulator's API as the suites call it, and a list route's items (a bare array or the `{data, ...}` envelope). */
export function serviceOf(emulator: () => RunningEmulator) {
  const api = (method: string, path: string, body?: unknown) => callOverHttp(emulator(), method, path, body);
  const list = async (path: string): Promise<ListItem[]> => {
    const { status, body } = await api("GET", path);
    expect(status, path).toBe(200);
    return Array.isArray(body) ? body : body.data;
  };
  return { api, list };
}

/**
 * After destroy: every list route of a kind the quickstart touches holds only the fixtures' own objects, and
 * every GUID the program ever had (`seen`, by kind: `App`, `Workflow`, ...; `count` of them) answers 404.
 */
export async function expectNothingOfTheQuickstart(emulator: () => RunningEmulator, seen: Map<string, Set<string>>, count: number) {
  const { api, list } = serviceOf(emulator);
  expect((await list("/apps")).map((app) => app.name)).toEqual(["Support"]);
  expect(await list("/providers")).toEqual([]);
  expect(await list("/models")).toEqual([]);
  expect(await list("/datasets")).toEqual([]);
  expect(await list("/evals")).toEqual([]);
  expect(await list("/experiments")).toEqual([]);
  expect((await list("/skills")).map((skill) => skill.name)).toEqual(["web-search"]);
  const workspace = (await api("GET", "/workspaces/current")).body as { guid: string };
  const contexts = await list(`/workspaces/${workspace.guid}/context`);
  expect(contexts.map((context) => context.name)).toEqual(["Handbook"]);
  expect(await list(`/contexts/${contexts[0]!.guid}/context_sources`)).toEqual([]);

  expect([...seen.values()].reduce((sum, guids) => sum + guids.size, 0)).toBe(count);
  for (const [kind, guids] of seen) {
    for (const guid of guids)
      expect((await api("GET", ROUTES[kind]!(guid, { context: contexts[0]!.guid }))).status, `${kind} ${guid}`).toBe(404);
  }
}
