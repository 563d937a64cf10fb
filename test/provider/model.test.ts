import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { numericId } from "./fine-tune-fixture";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

const withoutProvider = ({ __provider, ...rest }: Record<string, unknown>) => rest;
const KEY = "sk-model-test-8d03be";

describe("Model through the dynamic-provider host", () => {
  let bed: Testbed;
  let model: Registration;

  beforeAll(async () => {
    bed = await startTestbed();
    model = bed.capture(
      `new gms.Model("gpt", { llm: "gpt-4o", provider: "openai", key: "${KEY}", url: "https://llm.example.com/v1" });`,
    )[0]!;
  });
  afterAll(() => bed?.close());

  const checked = async (inputs: Record<string, unknown>) => {
    const result = await bed.host.check(urnOf(model), {}, { ...model.inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };

  it("registers as gms:Model with the key secret although the program passed a plain string", () => {
    expect(model.type).toBe("pulumi-nodejs:dynamic/gms:Model");
    expect(model.inputs.__provider).toContain('require("pulumi-gms/');
    expect(model.secrets).toEqual(["key"]);
  });

  it(
    "creates (POST, then GET for the public record), then a no-op diff costs no " +
      "request, llm updates in place, refresh shows drift, delete is idempotent",
    async () => {
      const inputs = await checked({});
      const created = await bed.counting(() => bed.host.create(urnOf(model), inputs));
      const { id, properties } = created.result;
      expect(created.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/models", `GET /v1/models/${id}`]);
      expect(withoutProvider(properties)).toEqual({
        guid: id,
        llm: "gpt-4o",
        provider: "openai",
        key: KEY,
        url: "https://llm.example.com/v1",
        default: false,
        providerGuid: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });

      const same = await bed.counting(() => bed.host.diff(urnOf(model), id, properties, inputs));
      expect(same.result).toEqual({ changes: "none", replaces: [], deleteBeforeReplace: false });
      expect(same.requests).toHaveLength(0);

      const news = await checked({ llm: "gpt-4o-mini" });
      expect(await bed.host.diff(urnOf(model), id, properties, news)).toEqual({
        changes: "some",
        replaces: [],
        deleteBeforeReplace: false,
      });
      const updated = await bed.counting(() => bed.host.update(urnOf(model), id, properties, news));
      expect(updated.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["PUT 200"]);
      expect(updated.result.properties).toMatchObject({ llm: "gpt-4o-mini", key: KEY, url: "https://llm.example.com/v1" });
      expect((await bed.api("GET", `/models/${id}`)).body.llm).toBe("gpt-4o-mini");
      Object.assign(properties, updated.result.properties);

      for (const [field, value] of [
        ["provider", "anthropic"],
        ["key", "sk-rotated"],
        ["url", null],
        ["default", true],
      ] as const) {
        const changed = await checked({ llm: "gpt-4o-mini", [field]: value });
        const diff = await bed.counting(() => bed.host.diff(urnOf(model), id, properties, changed));
        expect(diff.result).toEqual({ changes: "some", replaces: [field], deleteBeforeReplace: false });
        expect(diff.requests).toHaveLength(0);
      }

      await bed.api("PUT", `/models/${id}`, { llm: "gpt-4.1" });
      const refreshed = await bed.counting(() => bed.host.read(urnOf(model), id, properties, news));
      expect(refreshed.requests.map((r) => r.method)).toEqual(["GET"]);
      expect(refreshed.result.id).toBe(id);
      expect(refreshed.result.properties).toMatchObject({
        llm: "gpt-4.1",
        key: KEY,
        url: "https://llm.example.com/v1",
        provider: "openai",
      });
      expect(refreshed.result.inputs).toMatchObject({ llm: "gpt-4.1", key: KEY });
      expect(await bed.host.diff(urnOf(model), id, refreshed.result.properties, news)).toEqual({
        changes: "some",
        replaces: [],
        deleteBeforeReplace: false,
      });

      const deleted = await bed.counting(() => bed.host.delete(urnOf(model), id, refreshed.result.properties));
      expect(deleted.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["DELETE 200"]);
      expect((await bed.api("GET", `/models/${id}`)).status).toBe(404);
      await expect(bed.host.delete(urnOf(model), id, refreshed.result.properties)).resolves.toBeUndefined();
      expect((await bed.host.read(urnOf(model), id, refreshed.result.properties)).id).toBe("");
    },
  );

  it("reports the ProviderConnection the service linked the Model to, and its numeric id while the link lasts", async () => {
    const connection = await bed.api("POST", "/providers", { provider: "anthropic", key: "sk-connection" });
    const connectionId = await numericId(bed.emulator, "providers", connection.body.guid);
    const inputs = await checked({ provider: "anthropic", llm: "claude" });
    const created = await bed.host.create(urnOf(model), inputs);
    // The numeric id comes from the create answer; no public read shows it.
    expect(created.properties).toMatchObject({
      provider: "anthropic",
      providerGuid: connection.body.guid,
      workspaceModelProviderId: connectionId,
    });
    expect(await bed.api("GET", `/models/${created.id}`)).not.toHaveProperty("body.workspaceModelProviderId");

    // Kept from state across a refresh and an update, whose answers do not show it, and it causes no diff.
    const refreshed = await bed.host.read(urnOf(model), created.id, created.properties, inputs);
    expect(refreshed.properties).toEqual(created.properties);
    expect((await bed.host.diff(urnOf(model), created.id, refreshed.properties, inputs)).changes).toBe("none");
    const renamed = await checked({ provider: "anthropic", llm: "claude-2" });
    const updated = await bed.host.update(urnOf(model), created.id, refreshed.properties, renamed);
    expect(updated.properties).toMatchObject({
      llm: "claude-2",
      providerGuid: connection.body.guid,
      workspaceModelProviderId: connectionId,
    });

    // Deleting the connection un-links the Model: refresh shows it, and the id of the gone connection goes too.
    await bed.api("DELETE", `/providers/${connection.body.guid}`);
    const unlinked = await bed.host.read(urnOf(model), created.id, updated.properties, renamed);
    expect(unlinked.properties.providerGuid).toBeNull();
    expect(unlinked.properties).not.toHaveProperty("workspaceModelProviderId");
    await bed.host.delete(urnOf(model), created.id, unlinked.properties);
  });

  it("names the connection by GUID too; without the create answer (a lost one, an adopted Model) the numeric id is left out", async () => {
    const connection = await bed.api("POST", "/providers", { provider: "cohere", key: "sk-cohere-connection" });
    const connectionId = await numericId(bed.emulator, "providers", connection.body.guid);
    const byGuid = await checked({ provider: connection.body.guid, llm: "command-r" });
    const created = await bed.host.create(urnOf(model), byGuid);
    expect(created.properties).toMatchObject({
      provider: connection.body.guid,
      providerGuid: connection.body.guid,
      workspaceModelProviderId: connectionId,
    });
    // The GUID names the Model's provider while the Model is linked to that connection: no drift, no replacement.
    const refreshed = await bed.host.read(urnOf(model), created.id, created.properties, byGuid);
    expect(refreshed.properties).toEqual(created.properties);
    expect((await bed.host.diff(urnOf(model), created.id, refreshed.properties, byGuid)).changes).toBe("none");
    await bed.host.delete(urnOf(model), created.id, created.properties);

    // The lookup matches the provider type whatever its case.
    const inputs = await checked({ provider: "Cohere", llm: "command-r-plus" });
    bed.emulator.faults.set({ lost: 1, methods: ["POST"] });
    let found: { id: string; properties: Record<string, unknown> };
    try {
      found = await bed.host.create(urnOf(model), inputs);
      expect(bed.emulator.faults.stats().lost).toBe(1);
    } finally {
      bed.emulator.faults.set(undefined);
    }
    // The lookup found the Model the lost POST made (no second one) and read its public record: linked, but with no numeric id.
    const models = (await bed.api("GET", "/models")).body as { guid: string; llm: string }[];
    expect(models.filter((candidate) => candidate.llm === "command-r-plus").map((candidate) => candidate.guid)).toEqual([found.id]);
    expect(found.properties).toMatchObject({ llm: "command-r-plus", provider: "Cohere", providerGuid: connection.body.guid });
    expect(found.properties).not.toHaveProperty("workspaceModelProviderId");
    await bed.host.delete(urnOf(model), found.id, found.properties);

    const existing = await bed.api("POST", "/models", { llm: "command-light", provider: "cohere", key: "sk-made-by-hand" });
    expect(existing.body.workspaceModelProviderId).toBe(connectionId);
    const adopted = await bed.host.create(
      urnOf(model),
      await checked({ provider: "cohere", llm: "command-light", adopt: existing.body.guid }),
    );
    expect(adopted.properties).toMatchObject({ guid: existing.body.guid, providerGuid: connection.body.guid });
    expect(adopted.properties).not.toHaveProperty("workspaceModelProviderId");
    await bed.host.delete(urnOf(model), adopted.id, adopted.properties);
    await bed.api("DELETE", `/providers/${connection.body.guid}`);
  });

  it("keeps a provider type written in another case as declared: the service answers it in its own case", async () => {
    const inputs = await checked({ provider: "OpenAI", llm: "gpt-4o-cased" });
    const created = await bed.host.create(urnOf(model), inputs);
    expect((await bed.api("GET", `/models/${created.id}`)).body.provider_name).toBe("openai");
    expect(created.properties.provider).toBe("OpenAI");
    expect((await bed.host.diff(urnOf(model), created.id, created.properties, inputs)).changes).toBe("none");
    const refreshed = await bed.host.read(urnOf(model), created.id, created.properties, inputs);
    expect(refreshed.properties.provider).toBe("OpenAI");
    expect((await bed.host.diff(urnOf(model), created.id, refreshed.properties, inputs)).changes).toBe("none");
    await bed.host.delete(urnOf(model), created.id, refreshed.properties);
  });

  it("adopts an existing Model by GUID, updating llm; a replace-only mismatch is a clear error", async () => {
    const existing = await bed.api("POST", "/models", { llm: "gpt-3.5", provider: "openai", key: "sk-made-by-hand" });
    expect(existing.status).toBe(200);
    const inputs = await checked({ adopt: existing.body.guid });
    const adopted = await bed.counting(() => bed.host.create(urnOf(model), inputs));
    expect(adopted.result.id).toBe(existing.body.guid);
    expect(adopted.requests.map((r) => r.method)).toEqual(["GET", "PUT"]);
    expect((await bed.api("GET", `/models/${existing.body.guid}`)).body.llm).toBe("gpt-4o");
    // The write-only inputs come from the program; the service cannot tell whether they match.
    expect(adopted.result.properties).toMatchObject({
      guid: existing.body.guid,
      llm: "gpt-4o",
      key: KEY,
      url: "https://llm.example.com/v1",
    });

    const other = await bed.api("POST", "/models", { llm: "command", provider: "cohere", key: "sk-made-by-hand", default: true });
    const mismatch = await checked({ adopt: other.body.guid });
    await expect(bed.host.create(urnOf(model), mismatch)).rejects.toThrow(
      `Cannot adopt Model ${other.body.guid}: provider, default differ from the program and cannot be changed in place`,
    );
    expect((await bed.api("GET", `/models/${other.body.guid}`)).body.llm).toBe("command");
  });

  it("explains a provider type the service refuses", async () => {
    const inputs = await checked({ provider: "no-such-provider" });
    const failed = bed.counting(() => bed.host.create(urnOf(model), inputs));
    await expect(failed).rejects.toThrow(
      `Cannot create Model "gpt-4o" on provider "no-such-provider": the service answered 400 Invalid provider 'no-such-provider'`,
    );
  });

  it("reports bad input in check, naming the field, before any request", async () => {
    const bad = await bed.counting(() =>
      bed.host.check(
        urnOf(model),
        {},
        { ...model.inputs, llm: "", provider: "", key: 42, url: "not a url", default: "no", providerGuid: "x-set-by-hand", colour: "blue" },
      ),
    );
    expect(bad.requests).toHaveLength(0);
    expect(bad.result.failures.map((f) => f.property).sort()).toEqual(["colour", "default", "key", "llm", "provider", "url"]);
    const missing = await bed.host.check(urnOf(model), {}, { __provider: model.inputs.__provider });
    expect(missing.failures).toEqual([
      { property: "llm", reason: "llm is required" },
      { property: "provider", reason: "provider is required" },
      { property: "key", reason: "key is required" },
    ]);
  });
});
