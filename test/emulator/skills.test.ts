import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MISSING_GUID, OTHER_KEY, createTestEmulator } from "./harness";

const SKILL_KEYS = ["created_at", "created_by_id", "guid", "last_updated_by_id", "metadata", "name", "type", "updated_at"];
const ENGINE = { name: "engine", required: true, value: "bing", type: "string" };

describe("skills routes", () => {
  let emulator: ReturnType<typeof createTestEmulator>;
  beforeEach(() => {
    emulator = createTestEmulator();
  });
  afterEach(() => emulator.close());

  const webSearch = async () =>
    (await emulator.call("GET", "/v1/skills")).body.data.find((skill: { name: string }) => skill.name === "web-search");

  it("accepts the older clients' meta_data for metadata on create", async () => {
    const legacy = [{ name: "engine", required: false, value: "ddg", type: "string" }];
    const created = await emulator.call("POST", "/v1/skills", { name: "web-search", type: "web", meta_data: legacy });
    expect(created.status).toBe(200);
    expect(created.body.metadata).toEqual(legacy);
  });

  it("lists the workspace's Skills with their metadata", async () => {
    const list = await emulator.call("GET", "/v1/skills");
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total_count: 1, has_next_page: false });
    expect(Object.keys(list.body.data[0]).sort()).toEqual(SKILL_KEYS);
    expect(list.body.data[0]).toMatchObject({ name: "web-search", type: "web", metadata: [ENGINE], last_updated_by_id: null });
    expect((await emulator.call("GET", "/v1/skills", undefined, { apiKey: OTHER_KEY })).body).toEqual({
      data: [],
      total_count: 0,
      has_next_page: false,
    });
  });

  it("ignores skip and limit, while has_next_page is computed as if they applied (the spec's quirk)", async () => {
    for (let i = 0; i < 2; i++) await emulator.call("POST", "/v1/skills", { name: "web-search", type: "web", metadata: [] });
    const firstPage = await emulator.call("GET", "/v1/skills?skip=0&limit=1");
    expect(firstPage.body.data).toHaveLength(3);
    expect(firstPage.body).toMatchObject({ total_count: 3, has_next_page: true });
    const pastTheEnd = await emulator.call("GET", "/v1/skills?skip=5&limit=1");
    expect(pastTheEnd.body.data).toHaveLength(3);
    expect(pastTheEnd.body).toMatchObject({ total_count: 3, has_next_page: false });
    expect((await emulator.call("GET", "/v1/skills?skip=1&limit=2")).body.has_next_page).toBe(false);
    expect((await emulator.call("GET", "/v1/skills?limit=-1")).status).toBe(400);
  });

  it("create answers 404 `Type not found` unless a Skill of the same name exists (the spec's quirk)", async () => {
    const refused = await emulator.call("POST", "/v1/skills", { name: "calculator", type: "web", metadata: [] });
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ detail: "Type not found" });
    // The submitted type is not resolved either: an unknown type passes when the name matches.
    const metadata = [
      { name: "depth", required: false, value: 3, type: "number" },
      { name: "safe", required: true, value: { on: true } },
    ];
    const created = await emulator.call("POST", "/v1/skills/", { name: "web-search", type: "brand-new", metadata });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(SKILL_KEYS);
    expect(created.body).toMatchObject({ name: "web-search", type: "brand-new", metadata });
    expect(created.body.guid).not.toBe((await webSearch()).guid);
    const withoutMetadata = await emulator.call("POST", "/v1/skills", { name: "web-search", type: "web" });
    expect(withoutMetadata.body.metadata).toBeNull();
    expect((await emulator.call("GET", "/v1/skills")).body.total_count).toBe(3);
    // Another workspace's Skill of that name does not count.
    expect((await emulator.call("POST", "/v1/skills", { name: "web-search", type: "web" }, { apiKey: OTHER_KEY })).status).toBe(404);
  });

  it("answers 400 for malformed create bodies", async () => {
    for (const body of [
      { type: "web" },
      { name: "web-search" },
      { name: "web-search", type: "web", metadata: {} },
      { name: "web-search", type: "web", metadata: [{ name: "x", required: "yes", value: 1 }] },
      { name: "web-search", type: "web", metadata: [{ name: 1, required: true, value: 1 }] },
      { name: "web-search", type: "web", metadata: [{ name: "x", value: 1 }] },
      { name: "web-search", type: "web", metadata: [{ name: "x", required: true }] },
      { name: "web-search", type: "web", metadata: [{ name: "x", required: true, value: 1, type: 5 }] },
    ]) {
      expect((await emulator.call("POST", "/v1/skills", body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await emulator.call("GET", "/v1/skills")).body.total_count).toBe(1);
  });

  it("lists the distinct Skill types with their metadata definitions", async () => {
    const types = await emulator.call("GET", "/v1/skills/types");
    expect(types.status).toBe(200);
    expect(types.body).toEqual([{ name: "web", metadata: [{ name: "engine", required: true, type: "string" }] }]);
    await emulator.call("POST", "/v1/skills", {
      name: "web-search",
      type: "web",
      metadata: [
        { name: "region", required: false, value: "eu" },
        { ...ENGINE, required: false },
      ],
    });
    await emulator.call("POST", "/v1/skills", { name: "web-search", type: "code", metadata: [] });
    expect((await emulator.call("GET", "/v1/skills/types")).body).toEqual([
      {
        name: "web",
        metadata: [
          { name: "engine", required: true, type: "string" },
          { name: "region", required: false, type: null },
        ],
      },
      { name: "code", metadata: [] },
    ]);
    expect((await emulator.call("GET", "/v1/skills/types", undefined, { apiKey: OTHER_KEY })).body).toEqual([]);
  });

  it("renames on PUT; type and metadata are not replaced even when sent", async () => {
    const skill = await webSearch();
    const updated = await emulator.call("PUT", `/v1/skills/${skill.guid}`, {
      name: "search",
      type: "code",
      metadata: [{ name: "x", required: false, value: 1 }],
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      guid: skill.guid,
      name: "search",
      type: "web",
      metadata: [ENGINE],
      last_updated_by_id: skill.created_by_id,
    });
    expect((await emulator.call("GET", `/v1/skills/${skill.guid}`)).body).toEqual(updated.body);
    expect((await emulator.call("PUT", `/v1/skills/${skill.guid}`, { type: "code" })).status).toBe(400);
    expect((await emulator.call("PUT", `/v1/skills/${skill.guid}`, { name: "" })).status).toBe(400);
  });

  it("prompts a Skill with a deterministic emulated answer", async () => {
    const skill = await webSearch();
    const answer = await emulator.call("POST", `/v1/skills/${skill.guid}/prompt`, { prompt: "weather in Oslo" });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ msg: "[web-search] weather in Oslo" });
  });

  it("accepts `prompt` as the only prompt field", async () => {
    const skill = await webSearch();
    for (const body of [{ prompt: "hi", stream: true }, { prompt: "hi", session: MISSING_GUID }, {}, { prompt: 3 }]) {
      expect((await emulator.call("POST", `/v1/skills/${skill.guid}/prompt`, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await emulator.call("POST", `/v1/skills/${MISSING_GUID}/prompt`, { prompt: "hi" })).body).toEqual({
      detail: "Skill not found",
    });
    expect((await emulator.call("POST", "/v1/skills/nope/prompt", { prompt: "hi" })).status).toBe(400);
  });

  it("soft deletes: answers the message, then 404 everywhere, gone from lists, no longer a namesake", async () => {
    const skill = await webSearch();
    const deleted = await emulator.call("DELETE", `/v1/skills/${skill.guid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Skill ${skill.guid} deleted` });
    for (const [method, path, body] of [
      ["GET", `/v1/skills/${skill.guid}`],
      ["PUT", `/v1/skills/${skill.guid}`, { name: "x" }],
      ["DELETE", `/v1/skills/${skill.guid}`],
      ["POST", `/v1/skills/${skill.guid}/prompt`, { prompt: "hi" }],
    ] as const) {
      const reply = await emulator.call(method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toEqual({ detail: "Skill not found" });
    }
    expect((await emulator.call("GET", "/v1/skills")).body).toEqual({ data: [], total_count: 0, has_next_page: false });
    expect((await emulator.call("GET", "/v1/skills/types")).body).toEqual([]);
    expect((await emulator.call("POST", "/v1/skills", { name: "web-search", type: "web" })).body).toEqual({ detail: "Type not found" });
  });

  it("loads pre-configured Skills past the limit, but create answers 429 when the allowance is used up", async () => {
    const limited = createTestEmulator({
      workspaces: [
        {
          name: "Tight",
          slug: "tight",
          apiKey: "gms_tight_key",
          limits: { skills: 1 },
          skills: [
            { name: "a", type: "t" },
            { name: "b", type: "t" },
          ],
        },
      ],
    });
    try {
      const options = { apiKey: "gms_tight_key" };
      const list = await limited.call("GET", "/v1/skills", undefined, options);
      expect(list.body.data.map((skill: { name: string; metadata: unknown }) => [skill.name, skill.metadata])).toEqual([
        ["a", null],
        ["b", null],
      ]);
      const refused = await limited.call("POST", "/v1/skills", { name: "a", type: "t" }, options);
      expect(refused.status).toBe(429);
      expect(refused.body.detail).toMatch(/Skill limit reached/);
    } finally {
      await limited.close();
    }
  });

  it("gives a fixture metadata entry without a value the value null", async () => {
    const configured = createTestEmulator({
      workspaces: [
        {
          name: "Cfg",
          slug: "cfg",
          apiKey: "gms_cfg_key",
          skills: [{ name: "s", type: "t", metadata: [{ name: "opt", required: false }] }],
        },
      ],
    });
    try {
      const list = await configured.call("GET", "/v1/skills", undefined, { apiKey: "gms_cfg_key" });
      expect(list.body.data[0].metadata).toEqual([{ name: "opt", required: false, value: null }]);
    } finally {
      await configured.close();
    }
  });

  it("scopes Skills to the workspace of the key and rejects malformed UUIDs", async () => {
    const skill = await webSearch();
    for (const [method, path, body] of [
      ["GET", `/v1/skills/${skill.guid}`],
      ["PUT", `/v1/skills/${skill.guid}`, { name: "x" }],
      ["DELETE", `/v1/skills/${skill.guid}`],
      ["POST", `/v1/skills/${skill.guid}/prompt`, { prompt: "hi" }],
    ] as const) {
      expect((await emulator.call(method, path, body, { apiKey: OTHER_KEY })).status, `${method} ${path}`).toBe(404);
    }
    expect((await emulator.call("GET", `/v1/skills/${skill.guid}`)).status).toBe(200);
    const malformed = await emulator.call("GET", "/v1/skills/not-a-uuid");
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail[0]).toMatchObject({ loc: ["path", "guid"] });
    expect((await emulator.call("GET", `/v1/skills/${MISSING_GUID}`)).body).toEqual({ detail: "Skill not found" });
  });
});
