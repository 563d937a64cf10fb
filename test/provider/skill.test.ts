import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

const withoutProvider = ({ __provider, ...rest }: Record<string, unknown>) => rest;
const METADATA = [{ name: "engine", required: true, value: "bing", type: "string" }];

describe("Skill through the dynamic-provider host", () => {
  let bed: Testbed;
  let skill: Registration;
  let configuredGuid: string;

  beforeAll(async () => {
    bed = await startTestbed();
    // The fixture workspace has one pre-configured Skill, "web-search" of type "web".
    configuredGuid = (await bed.api("GET", "/skills")).body.data.find((s: { name: string }) => s.name === "web-search").guid;
    skill = bed.capture(`new gms.Skill("search", { name: "web-search", type: "web", metadata: ${JSON.stringify(METADATA)} });`)[0]!;
  });
  afterAll(() => bed?.close());

  const checked = async (inputs: Record<string, unknown>) => {
    const result = await bed.host.check(urnOf(skill), {}, { ...skill.inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };

  it("registers as gms:Skill with a tiny __provider that requires the installed package", () => {
    expect(skill.type).toBe("pulumi-nodejs:dynamic/gms:Skill");
    expect(skill.inputs.__provider).toContain('require("pulumi-gms/');
  });

  it(
    "creates under a configured Skill's name, then a no-op diff costs no " +
      "request, name updates in place, refresh shows drift, delete is idempotent",
    async () => {
      const inputs = await checked({});
      const created = await bed.counting(() => bed.host.create(urnOf(skill), inputs));
      // Every Skill made under one name shares it: the matching ones are listed first, so a lost answer can tell the new one apart.
      expect(created.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /v1/skills", "POST /v1/skills"]);
      const { id, properties } = created.result;
      expect(id).not.toBe(configuredGuid);
      expect(withoutProvider(properties)).toEqual({
        guid: id,
        name: "web-search",
        type: "web",
        metadata: METADATA,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });

      const same = await bed.counting(() => bed.host.diff(urnOf(skill), id, properties, inputs));
      expect(same.result).toEqual({ changes: "none", replaces: [], deleteBeforeReplace: false });
      expect(same.requests).toHaveLength(0);

      const news = await checked({ name: "web-search-eu" });
      expect(await bed.host.diff(urnOf(skill), id, properties, news)).toEqual({
        changes: "some",
        replaces: [],
        deleteBeforeReplace: false,
      });
      const updated = await bed.counting(() => bed.host.update(urnOf(skill), id, properties, news));
      expect(updated.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["PUT 200"]);
      expect(updated.result.properties.name).toBe("web-search-eu");
      expect((await bed.api("GET", `/skills/${id}`)).body).toMatchObject({ name: "web-search-eu", type: "web", metadata: METADATA });
      Object.assign(properties, updated.result.properties);

      for (const [field, value] of [
        ["type", "calculator"],
        ["metadata", [{ name: "engine", required: true, value: "duckduckgo", type: "string" }]],
      ] as const) {
        const changed = await checked({ name: "web-search-eu", [field]: value });
        const diff = await bed.counting(() => bed.host.diff(urnOf(skill), id, properties, changed));
        expect(diff.result).toEqual({ changes: "some", replaces: [field], deleteBeforeReplace: false });
        expect(diff.requests).toHaveLength(0);
      }

      await bed.api("PUT", `/skills/${id}`, { name: "renamed by hand" });
      const refreshed = await bed.counting(() => bed.host.read(urnOf(skill), id, properties, news));
      expect(refreshed.requests.map((r) => r.method)).toEqual(["GET"]);
      expect(refreshed.result.id).toBe(id);
      expect(refreshed.result.properties.name).toBe("renamed by hand");
      expect(refreshed.result.inputs).toMatchObject({ name: "renamed by hand", type: "web", metadata: METADATA });
      expect(await bed.host.diff(urnOf(skill), id, refreshed.result.properties, news)).toEqual({
        changes: "some",
        replaces: [],
        deleteBeforeReplace: false,
      });

      const deleted = await bed.counting(() => bed.host.delete(urnOf(skill), id, refreshed.result.properties));
      expect(deleted.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["DELETE 200"]);
      expect((await bed.api("GET", `/skills/${id}`)).status).toBe(404);
      await expect(bed.host.delete(urnOf(skill), id, refreshed.result.properties)).resolves.toBeUndefined();
      expect((await bed.host.read(urnOf(skill), id, refreshed.result.properties)).id).toBe("");
    },
  );

  it("explains that Skills are configured outside the interface when create is refused, listing what exists", async () => {
    const inputs = await checked({ name: "translator", type: "translation" });
    const attempt = await bed.counting(() => bed.host.create(urnOf(skill), inputs).catch((error: Error) => error));
    expect(attempt.requests.map((r) => `${r.method} ${r.path} ${r.status}`).sort()).toEqual([
      "GET /v1/skills 200",
      "GET /v1/skills 200",
      "GET /v1/skills/types 200",
      "POST /v1/skills 404",
    ]);
    const message = (attempt.result as Error).message;
    expect(message).toContain(`Cannot create Skill "translator" (type "translation"): the service answered 404 Type not found.`);
    expect(message).toContain("configured outside the public interface");
    expect(message).toContain("only under the name of a Skill that is already configured");
    expect(message).toContain(`Configured Skills: "web-search" (type web, guid ${configuredGuid})`);
    expect(message).toContain("Available Skill types: web.");
    expect(message).toContain("adopt");
    expect((await bed.api("GET", "/skills")).body.data.map((s: { name: string }) => s.name)).toEqual(["web-search"]);
  });

  it("adopts a configured Skill by GUID, renaming it; a replace-only mismatch is a clear error", async () => {
    const mismatch = await checked({ adopt: configuredGuid, type: "calculator" });
    await expect(bed.host.create(urnOf(skill), mismatch)).rejects.toThrow(
      `Cannot adopt Skill ${configuredGuid}: type differs from the program and cannot be changed in place`,
    );

    const inputs = await checked({ adopt: configuredGuid, name: "Web search", metadata: undefined });
    const adopted = await bed.counting(() => bed.host.create(urnOf(skill), inputs));
    expect(adopted.result.id).toBe(configuredGuid);
    expect(adopted.requests.map((r) => r.method)).toEqual(["GET", "PUT"]);
    // Metadata left out of the program is left alone, and still shown.
    expect(adopted.result.properties).toMatchObject({ guid: configuredGuid, name: "Web search", type: "web", metadata: METADATA });
    expect((await bed.api("GET", `/skills/${configuredGuid}`)).body.name).toBe("Web search");
    expect(await bed.host.diff(urnOf(skill), configuredGuid, adopted.result.properties, inputs)).toMatchObject({ changes: "none" });
  });

  it("reports bad input in check, naming the field, before any request", async () => {
    const bad = await bed.counting(() =>
      bed.host.check(
        urnOf(skill),
        {},
        { ...skill.inputs, name: "", type: 7, metadata: [{ name: "engine", value: "bing", colour: "red" }], colour: "blue" },
      ),
    );
    expect(bad.requests).toHaveLength(0);
    expect(bad.result.failures.map((f) => f.property).sort()).toEqual(["colour", "metadata.0", "metadata.0.required", "name", "type"]);
    const missing = await bed.host.check(urnOf(skill), {}, { __provider: skill.inputs.__provider });
    expect(missing.failures).toEqual([
      { property: "name", reason: "name is required" },
      { property: "type", reason: "type is required" },
    ]);
  });
});
