import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

const withoutProvider = ({ __provider, ...rest }: Record<string, unknown>) => rest;
const KEY = "sk-connection-test-2f9c41";

describe("ProviderConnection through the dynamic-provider host", () => {
  let bed: Testbed;
  let connection: Registration;
  let unnamed: Registration;

  beforeAll(async () => {
    bed = await startTestbed();
    const registered = bed.capture(`
      new gms.ProviderConnection("openai", {
        provider: "openai",
        key: "${KEY}",
        url: "https://llm.example.com/v1",
        name: "OpenAI",
        nickname: "primary",
        model: "gpt-4o",
        metadata: [{ name: "organization", value: "acme" }],
      });
      new gms.ProviderConnection("anthropic", { provider: "anthropic", key: "${KEY}" });
    `);
    // Registrations arrive in the order their inputs resolve, not in program order.
    connection = registered.find((r) => r.name === "openai")!;
    unnamed = registered.find((r) => r.name === "anthropic")!;
  });
  afterAll(() => bed?.close());

  const checked = async (inputs: Record<string, unknown>, registration = connection) => {
    const result = await bed.host.check(urnOf(registration), {}, { ...registration.inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };

  it("registers as gms:ProviderConnection with the key secret although the program passed a plain string", () => {
    expect(connection.type).toBe("pulumi-nodejs:dynamic/gms:ProviderConnection");
    expect(connection.inputs.__provider).toContain('require("pulumi-gms/');
    expect(connection.secrets).toEqual(["key"]);
    expect(unnamed.secrets).toEqual(["key"]);
  });

  it(
    "creates (POST, then PUT for the nickname), then a no-op diff costs no request, " +
      "nickname and default update in place, refresh shows drift, delete is idempotent",
    async () => {
      const inputs = await checked({});
      const created = await bed.counting(() => bed.host.create(urnOf(connection), inputs));
      const { id, properties } = created.result;
      // Create takes no nickname: a declared one that differs from the service's choice costs one PUT.
      expect(created.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/providers", `PUT /v1/providers/${id}`]);
      expect(withoutProvider(properties)).toMatchObject({
        guid: id,
        provider: "openai",
        key: KEY,
        url: "https://llm.example.com/v1",
        name: "OpenAI",
        nickname: "primary",
        default: false,
        model: "gpt-4o",
        metadata: [{ name: "organization", value: "acme" }],
      });
      expect(properties.createdAt).toEqual(expect.any(String));
      // The initial Model was created on the connection.
      const models = (await bed.api("GET", "/models")).body as { llm: string; provider_guid: string | null }[];
      expect(models).toContainEqual(expect.objectContaining({ llm: "gpt-4o", provider_guid: id }));

      const same = await bed.counting(() => bed.host.diff(urnOf(connection), id, properties, inputs));
      expect(same.result).toEqual({ changes: "none", replaces: [], deleteBeforeReplace: false });
      expect(same.requests).toHaveLength(0);

      for (const [field, value] of [
        ["nickname", "backup"],
        ["default", true],
      ] as const) {
        const news = await checked({ [field]: value, ...(field === "default" ? { nickname: "backup" } : {}) });
        const diff = await bed.host.diff(urnOf(connection), id, properties, news);
        expect(diff).toEqual({ changes: "some", replaces: [], deleteBeforeReplace: false });
        const updated = await bed.counting(() => bed.host.update(urnOf(connection), id, properties, news));
        expect(updated.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["PUT 200"]);
        expect(updated.result.properties[field]).toEqual(value);
        expect((await bed.api("GET", `/providers/${id}`)).body[field]).toEqual(value);
        Object.assign(properties, updated.result.properties);
      }
      // Write-only values are carried over from the program, not lost by an update.
      expect(properties).toMatchObject({ key: KEY, provider: "openai", model: "gpt-4o" });

      for (const [field, value] of [
        ["provider", "anthropic"],
        ["key", "sk-rotated"],
        ["url", "https://other.example.com/v1"],
        ["name", "Renamed"],
        ["model", "gpt-4o-mini"],
        ["metadata", [{ name: "organization", value: "other" }]],
      ] as const) {
        const news = await checked({ [field]: value, nickname: "backup", default: true });
        const diff = await bed.counting(() => bed.host.diff(urnOf(connection), id, properties, news));
        expect(diff.result).toEqual({ changes: "some", replaces: [field], deleteBeforeReplace: false });
        expect(diff.requests).toHaveLength(0);
      }

      await bed.api("PUT", `/providers/${id}`, { nickname: "changed by hand", default: false });
      const current = await checked({ nickname: "backup", default: true });
      const refreshed = await bed.counting(() => bed.host.read(urnOf(connection), id, properties, current));
      expect(refreshed.requests.map((r) => r.method)).toEqual(["GET"]);
      expect(refreshed.result.id).toBe(id);
      expect(refreshed.result.properties).toMatchObject({
        nickname: "changed by hand",
        default: false,
        key: KEY,
        provider: "openai",
        model: "gpt-4o",
      });
      expect(refreshed.result.inputs).toMatchObject({ nickname: "changed by hand", default: false, key: KEY });
      const drift = await bed.host.diff(urnOf(connection), id, refreshed.result.properties, current);
      expect(drift).toEqual({ changes: "some", replaces: [], deleteBeforeReplace: false });

      const deleted = await bed.counting(() => bed.host.delete(urnOf(connection), id, refreshed.result.properties));
      expect(deleted.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["DELETE 200"]);
      expect((await bed.api("GET", `/providers/${id}`)).status).toBe(404);
      await expect(bed.host.delete(urnOf(connection), id, refreshed.result.properties)).resolves.toBeUndefined();
      expect((await bed.host.read(urnOf(connection), id, refreshed.result.properties)).id).toBe("");
    },
  );

  it("leaves an undeclared nickname to the service and still sends it on every PUT", async () => {
    const inputs = await checked({}, unnamed);
    const { result: created, requests } = await bed.counting(() => bed.host.create(urnOf(unnamed), inputs));
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/providers"]);
    expect(created.properties).toMatchObject({ nickname: "anthropic", name: null, url: null, default: false });
    expect(created.properties).not.toHaveProperty("model");

    const news = await checked({ default: true }, unnamed);
    expect(await bed.host.diff(urnOf(unnamed), created.id, created.properties, news)).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
    const updated = await bed.counting(() => bed.host.update(urnOf(unnamed), created.id, created.properties, news));
    expect(updated.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["PUT 200"]);
    expect((await bed.api("GET", `/providers/${created.id}`)).body).toMatchObject({ nickname: "anthropic", default: true });

    // A nickname changed by hand is not drift when the program does not declare one.
    await bed.api("PUT", `/providers/${created.id}`, { nickname: "by hand", default: true });
    const refreshed = await bed.host.read(urnOf(unnamed), created.id, updated.result.properties, news);
    expect(await bed.host.diff(urnOf(unnamed), created.id, refreshed.properties, news)).toMatchObject({ changes: "none" });
    await bed.host.delete(urnOf(unnamed), created.id, refreshed.properties);
  });

  it("adopts an existing connection by GUID, updating nickname and default; a replace-only mismatch is a clear error", async () => {
    const existing = await bed.api("POST", "/providers", {
      provider: "openai",
      key: "sk-made-by-hand",
      name: "OpenAI",
      url: "https://llm.example.com/v1",
    });
    expect(existing.status).toBe(200);
    const inputs = await checked({ adopt: existing.body.guid, model: undefined, metadata: undefined });
    const adopted = await bed.counting(() => bed.host.create(urnOf(connection), inputs));
    expect(adopted.result.id).toBe(existing.body.guid);
    expect(adopted.requests.map((r) => r.method)).toEqual(["GET", "PUT"]);
    expect((await bed.api("GET", `/providers/${existing.body.guid}`)).body).toMatchObject({
      nickname: "primary",
      default: false,
      name: "OpenAI",
    });
    expect(adopted.result.properties).toMatchObject({ guid: existing.body.guid, nickname: "primary", key: KEY, provider: "openai" });

    const other = await bed.api("POST", "/providers", { provider: "openai", key: "sk-made-by-hand", name: "Legacy" });
    const mismatch = await checked({ adopt: other.body.guid });
    const failed = bed.counting(() => bed.host.create(urnOf(connection), mismatch));
    await expect(failed).rejects.toThrow(
      `Cannot adopt ProviderConnection ${other.body.guid}: url, name differ from the program and cannot be changed in place`,
    );
    expect((await bed.api("GET", `/providers/${other.body.guid}`)).body.nickname).toBe("Legacy");

    const missing = await checked({ adopt: "00000000-0000-4000-8000-000000000000" });
    await expect(bed.host.create(urnOf(connection), missing)).rejects.toThrow(
      /Cannot adopt ProviderConnection 00000000-0000-4000-8000-000000000000: no such object/,
    );
  });

  it("explains a provider type the service refuses", async () => {
    const inputs = await checked({ provider: "no-such-provider" });
    const failed = await bed.host.create(urnOf(connection), inputs).catch((error: Error) => error);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toContain(
      `Cannot create ProviderConnection for provider "no-such-provider": the service answered 400 Invalid provider 'no-such-provider'`,
    );
    expect((failed as Error).message).toContain("provider type the service supports");
    expect((failed as Error).message).toContain("and that url is an http(s) URL the service accepts.");
    expect((failed as Error).message).not.toContain(KEY);
    // The url is only blamed when the program set one.
    const withoutUrl = await bed.host
      .create(urnOf(connection), await checked({ provider: "no-such-provider", url: null }))
      .catch((error: Error) => error);
    expect((withoutUrl as Error).message).toMatch(/for example openai or anthropic\)\.$/);
  });

  it("reports bad input in check, naming the field, before any request", async () => {
    const bad = await bed.counting(() =>
      bed.host.check(
        urnOf(connection),
        {},
        {
          ...connection.inputs,
          provider: "",
          key: "",
          url: "ftp://example.com",
          nickname: "",
          default: "yes",
          metadata: [{ value: 1 }],
          colour: "blue",
        },
      ),
    );
    expect(bad.requests).toHaveLength(0);
    expect(bad.result.failures.map((f) => f.property).sort()).toEqual([
      "colour",
      "default",
      "key",
      "metadata.0.name",
      "nickname",
      "provider",
      "url",
    ]);
    expect(JSON.stringify(bad.result.failures)).not.toContain(KEY);
    const missing = await bed.host.check(urnOf(connection), {}, { __provider: connection.inputs.__provider });
    expect(missing.failures).toEqual([
      { property: "provider", reason: "provider is required" },
      { property: "key", reason: "key is required" },
    ]);
  });

  it("needs provider and key to create only: an existing connection's program may leave them out, a replacement may not", async () => {
    const inputs = await checked({});
    const { id, properties } = await bed.host.create(urnOf(connection), inputs);
    try {
      // As after `pulumi import`: the stored inputs lack the write-only values the service never returns.
      const { provider: _provider, key: _key, ...imported } = properties;
      const { provider: _p, key: _k, ...declared } = connection.inputs;
      const kept = await bed.counting(() => bed.host.check(urnOf(connection), imported, declared));
      expect(kept.result.failures).toEqual([]);
      expect(kept.requests).toHaveLength(0);
      expect(await bed.host.diff(urnOf(connection), id, imported, kept.result.inputs)).toMatchObject({ changes: "none" });
      // A replace-only change would make a new connection, which cannot be made without them: the diff says so, naming both.
      const replacing = bed.counting(() =>
        bed.host.diff(urnOf(connection), id, imported, { ...kept.result.inputs, url: "https://other.example.com/v1" }),
      );
      await expect(replacing).rejects.toThrow(/needs provider and key: .*Declare provider and key in the program/);
      const creating = await bed.counting(() => bed.host.create(urnOf(connection), kept.result.inputs).catch((error: Error) => error));
      expect((creating.result as Error).message).toMatch(/Creating a ProviderConnection needs provider and key/);
      expect(creating.requests).toHaveLength(0);
    } finally {
      await bed.host.delete(urnOf(connection), id, properties);
    }
  });

  it("lets unknown values through check and diff during preview", async () => {
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    const result = await bed.host.check(urnOf(connection), {}, { ...connection.inputs, key: unknown, nickname: unknown });
    expect(result.failures).toEqual([]);
    const diff = await bed.host.diff(urnOf(connection), "x", { ...connection.inputs }, result.inputs);
    expect(diff).toMatchObject({ changes: "some", replaces: ["key"] });
  });
});
