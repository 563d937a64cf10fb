/**
 * Keys stay secret: the engine stores them as secrets whatever the program passed, and no key appears in
 * outputs (except the write-only `key` input itself), in the provider host's stderr or in any error, even
 * though the service's Model create response echoes the submitted key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactSecrets } from "../../src/provider/errors";
import { json, startScriptedServer } from "../client/scripted-server";
import { type Registration, type Testbed, startTestbed, urnOf } from "./testbed";

const MODEL_KEY = "sk-model-secret-5b1f7c2e";
const CONNECTION_KEY = "sk-connection-secret-91d4a0e3";
const KEYS = [MODEL_KEY, CONNECTION_KEY];

/** Every text a key must not appear in: everything but the write-only `key` property itself. */
const withoutKey = ({ key, ...rest }: Record<string, unknown>) => JSON.stringify(rest);
const expectNoKey = (text: string) => {
  for (const key of KEYS) expect(text).not.toContain(key);
};
const failureOf = async (operation: Promise<unknown>): Promise<Error> => {
  const error = await operation.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
};

describe("keys through the dynamic-provider host", () => {
  let bed: Testbed;
  let model: Registration;
  let connection: Registration;
  let secretOutputs: Record<string, string[]>;

  beforeAll(async () => {
    bed = await startTestbed();
    const registered = bed.capture(`
      const secretOutputs = {};
      // A transformation sees the options the resource class hands to the SDK.
      const record = (args) => { secretOutputs[args.name] = args.opts.additionalSecretOutputs; return undefined; };
      new gms.Model("gpt", { llm: "gpt-4o", provider: "openai", key: "${MODEL_KEY}", url: "https://llm.example.com/v1" }, { transformations: [record] });
      new gms.ProviderConnection("openai", { provider: "openai", key: "${CONNECTION_KEY}", name: "OpenAI" }, { transformations: [record] });
      new gms.App("probe", { name: JSON.stringify(secretOutputs) });
    `);
    model = registered.find((r) => r.name === "gpt")!;
    connection = registered.find((r) => r.name === "openai")!;
    secretOutputs = JSON.parse(registered.find((r) => r.name === "probe")!.inputs.name as string);
  });
  afterAll(() => bed?.close());

  const checked = async (registration: Registration, inputs: Record<string, unknown> = {}) => {
    const result = await bed.host.check(urnOf(registration), {}, { ...registration.inputs, ...inputs });
    expect(result.failures).toEqual([]);
    return result.inputs;
  };

  it("stores keys as secrets although the program passed plain strings", () => {
    expect(model.secrets).toEqual(["key"]);
    expect(connection.secrets).toEqual(["key"]);
    expect(secretOutputs.gpt).toContain("key");
    expect(secretOutputs.openai).toContain("key");
  });

  it("keeps the key the Model create response echoes out of create, read and update outputs", async () => {
    // The service really does echo the key: the provider has to drop it.
    const echoed = await bed.api("POST", "/models", { llm: "probe", provider: "openai", key: MODEL_KEY });
    expect(echoed.body.key).toBe(MODEL_KEY);
    await bed.api("DELETE", `/models/${echoed.body.guid}`);

    const inputs = await checked(model);
    const created = await bed.host.create(urnOf(model), inputs);
    expect(created.properties.key).toBe(MODEL_KEY);
    expectNoKey(withoutKey(created.properties));

    const read = await bed.host.read(urnOf(model), created.id, created.properties, inputs);
    expect(read.properties.key).toBe(MODEL_KEY);
    expectNoKey(withoutKey(read.properties));
    expectNoKey(withoutKey(read.inputs!));

    const updated = await bed.host.update(urnOf(model), created.id, created.properties, await checked(model, { llm: "gpt-4o-mini" }));
    expect(updated.properties.key).toBe(MODEL_KEY);
    expectNoKey(withoutKey(updated.properties));

    const connectionInputs = await checked(connection);
    const connected = await bed.host.create(urnOf(connection), connectionInputs);
    expectNoKey(withoutKey(connected.properties));
    expectNoKey(withoutKey((await bed.host.read(urnOf(connection), connected.id, connected.properties, connectionInputs)).properties));
  });

  it("names no key in check failures", async () => {
    const modelFailures = await bed.host.check(
      urnOf(model),
      {},
      { ...model.inputs, provider: "", url: "ftp://llm.example.com", default: "no" },
    );
    expect(modelFailures.failures.map((f) => f.property).sort()).toEqual(["default", "provider", "url"]);
    expectNoKey(JSON.stringify(modelFailures.failures));
    const connectionFailures = await bed.host.check(urnOf(connection), {}, { ...connection.inputs, provider: "", metadata: "x" });
    expect(connectionFailures.failures.map((f) => f.property).sort()).toEqual(["metadata", "provider"]);
    expectNoKey(JSON.stringify(connectionFailures.failures));
  });

  it("names no key in the errors of failed creates, adopts and updates", async () => {
    const refusedModel = await failureOf(bed.host.create(urnOf(model), await checked(model, { provider: "no-such-provider" })));
    expect(refusedModel.message).toContain("400 Invalid provider 'no-such-provider'");
    expectNoKey(refusedModel.message);

    const refusedConnection = await failureOf(
      bed.host.create(urnOf(connection), await checked(connection, { provider: "no-such-provider" })),
    );
    expect(refusedConnection.message).toContain("400 Invalid provider 'no-such-provider'");
    expectNoKey(refusedConnection.message);

    const other = await bed.api("POST", "/providers", { provider: "openai", key: "sk-other", name: "Legacy" });
    const mismatch = await failureOf(bed.host.create(urnOf(connection), await checked(connection, { adopt: other.body.guid })));
    expect(mismatch.message).toContain(`Cannot adopt ProviderConnection ${other.body.guid}: name differs`);
    expectNoKey(mismatch.message);

    const otherModel = await bed.api("POST", "/models", { llm: "command", provider: "cohere", key: "sk-other" });
    const modelMismatch = await failureOf(bed.host.create(urnOf(model), await checked(model, { adopt: otherModel.body.guid })));
    expect(modelMismatch.message).toContain(`Cannot adopt Model ${otherModel.body.guid}: provider differs`);
    expectNoKey(modelMismatch.message);

    const createdModel = await bed.host.create(urnOf(model), await checked(model));
    await bed.api("DELETE", `/models/${createdModel.id}`);
    const goneModel = await failureOf(
      bed.host.update(urnOf(model), createdModel.id, createdModel.properties, await checked(model, { llm: "gpt-4.1" })),
    );
    expect(goneModel.message).toBe(
      `Model ${createdModel.id} no longer exists in the workspace (deleted outside Pulumi?): ` +
        `run \`pulumi refresh\` to drop it from the state, then \`pulumi up\` creates it again`,
    );
    expectNoKey(goneModel.message);

    const createdConnection = await bed.host.create(urnOf(connection), await checked(connection));
    await bed.api("DELETE", `/providers/${createdConnection.id}`);
    const goneConnection = await failureOf(
      bed.host.update(urnOf(connection), createdConnection.id, createdConnection.properties, await checked(connection, { default: true })),
    );
    expect(goneConnection.message).toContain(`ProviderConnection ${createdConnection.id} no longer exists in the workspace`);
    expectNoKey(goneConnection.message);

    // The host prints read and delete failures to its stderr (create and update failures go to the engine).
    const unreadable = await failureOf(bed.host.read(urnOf(model), "not-a-guid", createdModel.properties, await checked(model)));
    expect(unreadable.message).toContain("GET /models/not-a-guid: 400");
    expectNoKey(unreadable.message);
    const undeletable = await failureOf(bed.host.delete(urnOf(connection), "not-a-guid", createdConnection.properties));
    expect(undeletable.message).toContain("Cannot delete ProviderConnection not-a-guid: the service answered 400");
    expectNoKey(undeletable.message);
  });

  it("rolls back a create that fails after the service took the key, says whether that worked, and names no key", async () => {
    const guid = "6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f";
    const stamp = "2024-01-01T00:00:00Z";
    // What POST /models answers, the submitted key included (the spec's quirk).
    const modelCreated = json(200, {
      ...{
        id: 7,
        guid,
        llm: "gpt-4o",
        workspaceId: 1,
        workspaceModelProviderId: null,
        providerId: 1,
        url: null,
        default: false,
        deleted: false,
      },
      ...{ createdAt: stamp, updatedAt: stamp, createdById: "user-1", lastUpdatedById: null, key: MODEL_KEY },
    });
    // A server error that echoes the submitted key; `retry-after: 0` keeps the client's retries of GET, PUT and DELETE quick.
    const echoing = (key: string) => json(500, { detail: `upstream refused ${key}` }, { "retry-after": "0" });
    const broken = echoing(MODEL_KEY);
    const deleted = json(200, { message: `Model ${guid} deleted` });
    const answered = "the service answered 500 upstream refused [secret] (after 4 attempts).";
    const attempts = (step: typeof broken) => [step, step, step, step];

    for (const [undo, outcome] of [
      [deleted, `The Model it had created (${guid}) was deleted again.`],
      [
        broken,
        `Deleting the Model it had created (${guid}) failed too (the service answered 500 upstream refused [secret] (after 4 attempts)): Pulumi records it`,
      ],
    ] as const) {
      const service = await startScriptedServer([modelCreated, ...attempts(broken), undo]);
      try {
        const inputs = await checked(model, { connection: { baseUrl: service.baseUrl, apiKey: "gms_elsewhere_key" } });
        const failed = await failureOf(bed.host.create(urnOf(model), inputs));
        expect(failed.message).toContain(
          `Cannot create Model "gpt-4o" on provider "openai": reading the new Model back failed: ${answered}`,
        );
        expect(failed.message).toContain(outcome);
        expectNoKey(failed.message);
        expect(service.requests.map((request) => request.method)).toEqual([
          "POST",
          "GET",
          "GET",
          "GET",
          "GET",
          ...(undo === deleted ? ["DELETE"] : ["DELETE", "DELETE", "DELETE", "DELETE"]),
        ]);
      } finally {
        await service.close();
      }
    }

    const connectionCreated = json(200, {
      guid,
      name: "OpenAI",
      nickname: "OpenAI",
      url: null,
      default: false,
      created_at: stamp,
      updated_at: stamp,
      created_by_id: "user-1",
      last_updated_by_id: null,
    });
    const service = await startScriptedServer([
      connectionCreated,
      ...attempts(echoing(CONNECTION_KEY)),
      json(200, { message: `Model provider ${guid} deleted` }),
    ]);
    try {
      const inputs = await checked(connection, {
        nickname: "Primary",
        connection: { baseUrl: service.baseUrl, apiKey: "gms_elsewhere_key" },
      });
      const failed = await failureOf(bed.host.create(urnOf(connection), inputs));
      expect(failed.message).toContain(`Cannot create ProviderConnection for provider "openai": setting its nickname failed: ${answered}`);
      expect(failed.message).toContain(`The ProviderConnection it had created (${guid}) was deleted again.`);
      expectNoKey(failed.message);
      expect(service.requests.map((request) => `${request.method} ${request.url}`)).toEqual([
        "POST /v1/providers",
        ...Array(4).fill(`PUT /v1/providers/${guid}`),
        `DELETE /v1/providers/${guid}`,
      ]);
    } finally {
      await service.close();
    }
  });

  it("blanks a key should the service ever echo it in an error, as a whole token only", () => {
    expect(redactSecrets(`refused key ${MODEL_KEY} twice: ${MODEL_KEY}.`, [MODEL_KEY])).toBe("refused key [secret] twice: [secret].");
    expect(redactSecrets(`{"key":"${MODEL_KEY}"} (${MODEL_KEY})`, [MODEL_KEY])).toBe('{"key":"[secret]"} ([secret])');
    // A key that happens to be part of longer words in unrelated text leaves them alone.
    expect(redactSecrets("provider openai-compatible at openai.example and openai2", ["openai"])).toBe(
      "provider openai-compatible at [secret].example and openai2",
    );
  });

  it("never writes a key to the host's stderr", () => {
    const stderr = bed.host.stderr.join("");
    // The read and delete failures above were printed there, so the capture is live.
    expect(stderr).toContain("GET /models/not-a-guid: 400");
    expect(stderr).toContain("Cannot delete ProviderConnection not-a-guid: the service answered 400");
    expectNoKey(stderr);
  });
});

/**
 * A value the program wrapped in `pulumi.secret` is secret to the engine whatever field holds it, but the
 * engine unwraps it for the provider: the resource class tells the provider which inputs they are, and the
 * provider blanks their values from what it passes on.
 */
describe("values the program made secret", () => {
  const TOKEN = "tok-3f9a7c1e55d2b8";
  const UNSERVED = `http://127.0.0.1:9/handbook.txt?token=${TOKEN}`;
  let bed: Testbed;
  let source: Registration;
  let plain: Registration;
  let faq: string;

  beforeAll(async () => {
    bed = await startTestbed();
    const workspace = (await bed.api("GET", "/workspaces/current")).body;
    const contexts = (await bed.api("GET", `/workspaces/${workspace.guid}/context`)).body as { guid: string; name: string }[];
    faq = contexts.find((context) => context.name === "FAQ")!.guid;
    const registered = bed.capture(`
      new gms.ContextSource("secret-url", { context: ${JSON.stringify(faq)}, url: pulumi.secret(${JSON.stringify(UNSERVED)}), process: true });
      new gms.ContextSource("plain-url", { context: ${JSON.stringify(faq)}, url: ${JSON.stringify(UNSERVED)} });
    `);
    source = registered.find((r) => r.name === "secret-url")!;
    plain = registered.find((r) => r.name === "plain-url")!;
  });
  afterAll(() => bed?.close());

  it("are named beside the inputs, and only when there are any", () => {
    expect(source.secrets).toContain("url");
    expect(source.inputs.__secretInputs).toEqual(["url"]);
    expect(plain.inputs).not.toHaveProperty("__secretInputs");
  });

  it("never appear in a failed create, update, read or delete, while a plain value does", async () => {
    const failed = async (registration: Registration, extra: Record<string, unknown>) => {
      const checked = await bed.host.check(urnOf(registration), {}, { ...registration.inputs, ...extra });
      expect(checked.failures).toEqual([]);
      expect(checked.inputs.__secretInputs).toEqual(registration.inputs.__secretInputs);
      return failureOf(bed.host.create(urnOf(registration), checked.inputs));
    };
    const waiting = { waitForIndexing: { timeoutSeconds: 20 } };
    const secretFailure = await failed(source, waiting);
    expect(secretFailure.message).toMatch(/^Cannot create ContextSource for \[secret\]: processing \[secret\] failed: fetch failed/);
    expect(secretFailure.message).not.toContain(TOKEN);
    // The same failure of a plain URL names it: the blanking follows what the program made secret.
    expect((await failed(plain, { process: true, ...waiting })).message).toContain(TOKEN);

    // A source created without processing, then updated to wait for processing that fails: the update's error.
    const inputs = (await bed.host.check(urnOf(source), {}, { ...source.inputs, process: false })).inputs;
    const created = await bed.host.create(urnOf(source), inputs);
    expect(created.properties.__secretInputs).toEqual(["url"]);
    const updated = { ...inputs, name: "Renamed", process: true, ...waiting };
    const updateFailure = await failureOf(bed.host.update(urnOf(source), created.id, created.properties, updated));
    expect(updateFailure.message).toContain("[secret]");
    expect(updateFailure.message).not.toContain(TOKEN);

    const read = await bed.host.read(urnOf(source), created.id, created.properties, inputs);
    expect(read.inputs?.__secretInputs).toEqual(["url"]);
    await bed.host.delete(urnOf(source), created.id, created.properties);
    expect(bed.host.stderr.join("")).not.toContain(TOKEN);
  });
});
