import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { ACME_KEY, MISSING_GUID, OTHER_KEY, TEST_FIXTURES, callOverHttp, createTestEmulator } from "./harness";

const WORKSPACE_FIELDS = ["created_at", "created_by_id", "deleted", "guid", "name", "slug", "updated_at"].sort();
const RELATED = ["apps", "context", "providers", "usage"] as const;

describe("workspaces routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  let acme: { guid: string; created_by_id: string };
  beforeEach(async () => {
    emulator = createTestEmulator();
    acme = (await emulator.call("GET", "/v1/workspaces/current")).body;
  });
  afterEach(() => emulator.close());

  const create = async (name: string, slug: string) => {
    const reply = await emulator.call("POST", "/v1/workspaces", { name, slug });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  };

  it("answers the workspace the API key selects", async () => {
    const current = await emulator.call("GET", "/v1/workspaces/current");
    expect(current.status).toBe(200);
    expect(Object.keys(current.body).sort()).toEqual(WORKSPACE_FIELDS);
    expect(current.body).toMatchObject({ name: "Acme", slug: "acme", deleted: false });
    expect(current.body.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(current.body.created_at)).not.toBeNaN();
    const other = await emulator.call("GET", "/v1/workspaces/current/", undefined, { apiKey: OTHER_KEY });
    expect(other.body).toMatchObject({ name: "Other", slug: "other" });
    expect(other.body.guid).not.toBe(current.body.guid);
  });

  it("creates a workspace the caller belongs to, refusing a taken slug", async () => {
    const created = await create("Research", "research");
    expect(Object.keys(created).sort()).toEqual(WORKSPACE_FIELDS);
    expect(created).toMatchObject({ name: "Research", slug: "research", deleted: false, created_by_id: acme.created_by_id });
    expect((await emulator.call("GET", `/v1/workspaces/${created.guid}`)).body).toEqual(created);
    // The key still selects its own workspace.
    expect((await emulator.call("GET", "/v1/workspaces/current")).body.guid).toBe(acme.guid);

    for (const slug of ["research", "other"]) {
      const taken = await emulator.call("POST", "/v1/workspaces", { name: "Again", slug });
      expect(taken.status, slug).toBe(400);
      expect(taken.body).toEqual({ detail: `Workspace slug '${slug}' is already taken` });
    }
    for (const [missing, body] of [
      ["name", { slug: "x" }],
      ["slug", { name: "X" }],
    ] as const) {
      const reply = await emulator.call("POST", "/v1/workspaces", body);
      expect(reply.status, missing).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["body", missing]);
    }
  });

  it("lists the caller's workspaces in the envelope with skip and limit", async () => {
    const only = await emulator.call("GET", "/v1/workspaces");
    expect(only.status).toBe(200);
    expect(only.body).toMatchObject({ total_count: 1, has_next_page: false });
    expect(only.body.data).toEqual([acme]);

    const research = await create("Research", "research");
    const all = await emulator.call("GET", "/v1/workspaces/");
    expect(all.body.data.map((w: { slug: string }) => w.slug)).toEqual(["acme", "research"]);
    const first = await emulator.call("GET", "/v1/workspaces?limit=1");
    expect(first.body).toMatchObject({ total_count: 2, has_next_page: true, data: [{ slug: "acme" }] });
    const second = await emulator.call("GET", "/v1/workspaces?skip=1&limit=1");
    expect(second.body).toMatchObject({ total_count: 2, has_next_page: false, data: [{ guid: research.guid }] });
    // Other's user sees only its own.
    expect(
      (await emulator.call("GET", "/v1/workspaces", undefined, { apiKey: OTHER_KEY })).body.data.map((w: { slug: string }) => w.slug),
    ).toEqual(["other"]);
  });

  it("renames with a required name", async () => {
    const research = await create("Research", "research");
    const renamed = await emulator.call("PUT", `/v1/workspaces/${research.guid}`, { name: "R&D" });
    expect(renamed.status).toBe(200);
    expect(Object.keys(renamed.body).sort()).toEqual(WORKSPACE_FIELDS);
    expect(renamed.body).toMatchObject({ guid: research.guid, name: "R&D", slug: "research" });
    expect((await emulator.call("GET", `/v1/workspaces/${research.guid}`)).body.name).toBe("R&D");
    const missing = await emulator.call("PUT", `/v1/workspaces/${research.guid}`, {});
    expect(missing.status).toBe(400);
    expect(missing.body.detail[0].loc).toEqual(["body", "name"]);
  });

  it("soft deletes: a message, then 404 on every workspace route and gone from the list", async () => {
    const research = await create("Research", "research");
    const deleted = await emulator.call("DELETE", `/v1/workspaces/${research.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Workspace ${research.guid} deleted` });
    for (const [method, path, body] of [
      ["GET", ""],
      ["PUT", "", { name: "x" }],
      ["DELETE", ""],
      ...RELATED.map((route) => ["GET", `/${route}`] as const),
    ] as const) {
      const reply = await emulator.call(method, `/v1/workspaces/${research.guid}${path}`, body);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toEqual({ detail: "Workspace not found" });
    }
    expect((await emulator.call("GET", "/v1/workspaces")).body.data.map((w: { guid: string }) => w.guid)).toEqual([acme.guid]);
  });

  it("stops accepting the key of a deleted workspace", async () => {
    expect((await emulator.call("DELETE", `/v1/workspaces/${acme.guid}`)).status).toBe(200);
    const reply = await emulator.call("GET", "/v1/workspaces/current");
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({ detail: "Invalid API key" });
  });

  it("answers 404 for a workspace the caller does not belong to, 400 for a malformed GUID", async () => {
    const other = (await emulator.call("GET", "/v1/workspaces/current", undefined, { apiKey: OTHER_KEY })).body;
    for (const guid of [other.guid, MISSING_GUID]) {
      for (const [method, path, body] of [
        ["GET", ""],
        ["PUT", "", { name: "x" }],
        ["DELETE", ""],
        ...RELATED.map((route) => ["GET", `/${route}`] as const),
      ] as const) {
        const reply = await emulator.call(method, `/v1/workspaces/${guid}${path}`, body);
        expect(reply.status, `${method} ${guid}${path}`).toBe(404);
        expect(reply.body).toEqual({ detail: "Workspace not found" });
      }
    }
    expect((await emulator.call("GET", "/v1/workspaces/current", undefined, { apiKey: OTHER_KEY })).body.name).toBe("Other");
    for (const path of ["", ...RELATED.map((route) => `/${route}`)]) {
      const reply = await emulator.call("GET", `/v1/workspaces/not-a-uuid${path}`);
      expect(reply.status, path).toBe(400);
      expect(reply.body.detail[0].loc).toEqual(["path", "guid"]);
    }
  });

  it("lists the workspace's Apps as a compact bare array", async () => {
    const apps = await emulator.call("GET", `/v1/workspaces/${acme.guid}/apps`);
    expect(apps.status).toBe(200);
    expect(apps.body).toEqual([
      { guid: await emulator.appGuid("Support"), name: "Support", slug: "support" },
      { guid: await emulator.appGuid("Sales"), name: "Sales", slug: "sales" },
    ]);
    await emulator.call("DELETE", `/v1/apps/${await emulator.appGuid("Sales")}`);
    expect((await emulator.call("GET", `/v1/workspaces/${acme.guid}/apps`)).body.map((app: { name: string }) => app.name)).toEqual([
      "Support",
    ]);
    const research = await create("Research", "research");
    expect((await emulator.call("GET", `/v1/workspaces/${research.guid}/apps`)).body).toEqual([]);
  });

  it("lists the workspace's Contexts as a compact bare array", async () => {
    const contexts = await emulator.call("GET", `/v1/workspaces/${acme.guid}/context`);
    expect(contexts.status).toBe(200);
    expect(contexts.body.map((context: { name: string }) => context.name)).toEqual(["Handbook", "FAQ"]);
    for (const context of contexts.body) {
      expect(Object.keys(context).sort()).toEqual(["guid", "name"]);
      expect(context.guid).toMatch(/^[0-9a-f-]{36}$/);
    }
    const research = await create("Research", "research");
    expect((await emulator.call("GET", `/v1/workspaces/${research.guid}/context`)).body).toEqual([]);
  });

  it("lists the workspace's Provider connections as a compact bare array", async () => {
    expect((await emulator.call("GET", `/v1/workspaces/${acme.guid}/providers`)).body).toEqual([]);
    const named = await emulator.call("POST", "/v1/providers", { provider: "openai", key: "sk-test-123", name: "Main" });
    expect(named.status).toBe(200);
    const unnamed = await emulator.call("POST", "/v1/providers", { provider: "anthropic", key: "sk-ant-456" });
    const providers = await emulator.call("GET", `/v1/workspaces/${acme.guid}/providers`);
    expect(providers.status).toBe(200);
    expect(providers.body).toEqual([
      { guid: named.body.guid, name: "Main", nickname: named.body.nickname },
      { guid: unnamed.body.guid, name: null, nickname: unnamed.body.nickname },
    ]);
    expect(JSON.stringify(providers.body)).not.toMatch(/sk-/);
    const research = await create("Research", "research");
    expect((await emulator.call("GET", `/v1/workspaces/${research.guid}/providers`)).body).toEqual([]);
  });

  it("reports feature usage with real counts for the workspace in the path", async () => {
    const usageOf = async (guid: string) => {
      const reply = await emulator.call("GET", `/v1/workspaces/${guid}/usage`);
      expect(reply.status).toBe(200);
      return reply.body as { feature: string; used: number; limit: number }[];
    };
    const apps = (entries: { feature: string }[]) => entries.find((entry) => entry.feature === "apps");

    const usage = await usageOf(acme.guid);
    for (const entry of usage) expect(Object.keys(entry).sort()).toEqual(["feature", "limit", "used"]);
    expect(usage.map((entry) => entry.feature)).toContain("providers");
    expect(apps(usage)).toEqual({ feature: "apps", used: 2, limit: 5 });

    const { body: created } = await emulator.call("POST", "/v1/apps", { name: "Counted" });
    expect(apps(await usageOf(acme.guid))).toEqual({ feature: "apps", used: 3, limit: 5 });
    await emulator.call("DELETE", `/v1/apps/${created.guid}`);
    expect(apps(await usageOf(acme.guid))).toEqual({ feature: "apps", used: 2, limit: 5 });

    const research = await create("Research", "research");
    expect(apps(await usageOf(research.guid))).toEqual({ feature: "apps", used: 0, limit: 100 });
  });
});

describe("a workspace its key holder deleted, across a restart", () => {
  let dir: string;
  let db: string;
  const running: RunningEmulator[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "gms-workspaces-"));
    db = join(dir, "gms.db");
  });
  afterEach(async () => {
    for (const emulator of running.splice(0)) await emulator.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (options: Parameters<typeof startEmulator>[0]) => {
    const emulator = await startEmulator({ db, port: 0, ...options });
    running.push(emulator);
    return emulator;
  };
  const stop = async (emulator: RunningEmulator) => {
    running.splice(running.indexOf(emulator), 1);
    await emulator.close();
  };
  const as = (emulator: RunningEmulator, apiKey: string) => ({ url: emulator.url, apiKey });
  /** Deletes the workspace `apiKey` selects, with that key, and checks the key stopped working. */
  const deleteOwnWorkspace = async (emulator: RunningEmulator, apiKey: string) => {
    const current = await callOverHttp(as(emulator, apiKey), "GET", "/workspaces/current");
    expect((await callOverHttp(as(emulator, apiKey), "DELETE", `/workspaces/${current.body.guid}`)).status).toBe(200);
    expect((await callOverHttp(as(emulator, apiKey), "GET", "/workspaces/current")).status).toBe(401);
    return current.body.guid as string;
  };

  it("is restored from the same fixtures file, with its key and its records, and nothing duplicated", async () => {
    const fixtures = join(dir, "fixtures.yaml");
    writeFileSync(fixtures, JSON.stringify(TEST_FIXTURES)); // JSON is YAML
    const first = await start({ fixtures });
    const created = await callOverHttp(as(first, ACME_KEY), "POST", "/apps", { name: "Made before the delete" });
    expect(created.status).toBe(200);
    const appsBefore = (await callOverHttp(as(first, ACME_KEY), "GET", "/apps")).body;
    const guid = await deleteOwnWorkspace(first, ACME_KEY);
    await stop(first);

    const second = await start({ fixtures });
    expect(second.apiKeys).toEqual([ACME_KEY, OTHER_KEY]);
    expect(second.generatedApiKey).toBeUndefined();
    const current = await callOverHttp(as(second, ACME_KEY), "GET", "/workspaces/current");
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({ guid, slug: "acme", name: "Acme" });
    expect((await callOverHttp(as(second, ACME_KEY), "GET", "/apps")).body).toEqual(appsBefore);
    expect(second.store.db.get("SELECT count(*) AS n FROM workspaces WHERE slug = 'acme'")).toEqual({ n: 1 });
    // The other workspace was never touched.
    expect((await callOverHttp(as(second, OTHER_KEY), "GET", "/workspaces/current")).status).toBe(200);
  });

  it("restores the default workspace (no fixtures) and its generated key", async () => {
    const first = await start({});
    const key = first.apiKey;
    // The one key the caller cannot know: generated, then recalled from the database.
    expect(first.generatedApiKey).toBe(key);
    const guid = await deleteOwnWorkspace(first, key);
    await stop(first);

    const second = await start({});
    expect(second.apiKey).toBe(key);
    expect(second.generatedApiKey).toBe(key);
    const current = await callOverHttp(as(second, key), "GET", "/workspaces/current");
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({ guid, slug: "default" });
  });

  it("restores the default workspace when started with the deleted workspace's key, or with a new one", async () => {
    const given = "gms_given_default_key";
    const first = await start({ apiKey: given });
    expect(first.generatedApiKey).toBeUndefined();
    const guid = await deleteOwnWorkspace(first, given);
    await stop(first);

    const second = await start({ apiKey: given });
    expect(second.apiKey).toBe(given);
    expect((await callOverHttp(as(second, given), "GET", "/workspaces/current")).body).toMatchObject({ guid, slug: "default" });
    await deleteOwnWorkspace(second, given);
    await stop(second);

    // A key given later is added to the restored workspace, whose records stay reachable.
    const third = await start({ apiKey: "gms_later_default_key" });
    expect((await callOverHttp(as(third, "gms_later_default_key"), "GET", "/workspaces/current")).body).toMatchObject({ guid });
    expect((await callOverHttp(as(third, given), "GET", "/workspaces/current")).body).toMatchObject({ guid });
    expect(third.store.db.get("SELECT count(*) AS n FROM workspaces")).toEqual({ n: 1 });
  });
});
