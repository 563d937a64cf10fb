/**
 * The native SDK's classes under the Pulumi SDK's mocks, in this process: what each registers with the engine
 * (type token, inputs with their secrecy, additional secret outputs, provider reference), read off the wire
 * request the SDK sends to the (mock) resource monitor, and what each object exposes.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { pluginDownloadURL } from "../../src/manifest";
import * as native from "../../src/native";
import { LINK_TO } from "../../src/resources/model";
import { nativeClass } from "../../src/native/resource";
import { nativeToken } from "../../src/provider/tokens";
import { computed, updatable } from "../../src/provider/fields";
import type { Kind } from "../../src/provider/kind";
import { kinds } from "../../src/resources";

const SECRET_KEY = pulumi.runtime.specialSigKey;
type Props = Record<string, unknown>;

interface Registration {
  type: string;
  name: string;
  /** Secrets unwrapped, their names in `secrets`. */
  inputs: Props;
  secrets: string[];
  additionalSecretOutputs: string[];
  /** `urn::id` of the provider resource the registration names, or "" for the default provider. */
  provider: string;
  /** Set for a read (`Class.get`). */
  id?: string;
  /** The plugin version the registration asks for ("" for none). */
  version: string;
  /** Where the registration says the engine downloads the plugin ("" for nowhere). */
  pluginDownloadURL: string;
}

const registrations: Registration[] = [];
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as { version: string }).version;
const unwrap = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(unwrap);
  if (value && typeof value === "object") {
    const object = value as Props;
    if (object[SECRET_KEY] !== undefined) return unwrap(object.value);
    return Object.fromEntries(Object.entries(object).map(([key, inner]) => [key, unwrap(inner)]));
  }
  return value;
};
const isSecretValue = (value: unknown): boolean => Boolean(value && typeof value === "object" && (value as Props)[SECRET_KEY]);

/** Output names by token, so that the mock answers every output of every kind with a recognisable value. */
const outputsByToken = new Map<string, string[]>(Object.values(kinds).map((kind) => [nativeToken(kind.name), Object.keys(kind.outputs)]));

const resolved = <T>(output: pulumi.Output<T>): Promise<T> => new Promise((resolve) => output.apply(resolve));
const registrationOf = (name: string): Registration => {
  const found = registrations.filter((registration) => registration.name === name);
  expect(found, `registrations named ${name}`).toHaveLength(1);
  return found[0]!;
};
/** Waits until the resource is registered (its URN resolves once the monitor answered). */
const registered = async (resource: pulumi.Resource) => resolved(resource.urn);

beforeAll(async () => {
  const aso = new Map<string, string[]>();
  const versions = new Map<string, string>();
  const downloadUrls = new Map<string, string>();
  await pulumi.runtime.setMocks(
    {
      newResource: async (args) => {
        const inputs = args.inputs as Props;
        registrations.push({
          type: args.type,
          name: args.name,
          inputs: unwrap(inputs) as Props,
          secrets: Object.keys(inputs).filter((key) => isSecretValue(inputs[key])),
          additionalSecretOutputs: aso.get(`${args.type}::${args.name}`) ?? [],
          version: versions.get(`${args.type}::${args.name}`) ?? "",
          pluginDownloadURL: downloadUrls.get(`${args.type}::${args.name}`) ?? "",
          provider: args.provider ?? "",
          ...(args.id ? { id: args.id } : {}),
        });
        const outputs = Object.fromEntries((outputsByToken.get(args.type) ?? []).map((output) => [output, `${args.name}.${output}`]));
        return { id: `${args.name}-id`, state: { ...inputs, ...outputs } };
      },
      call: async () => ({}),
    },
    "gms-native-test",
    "dev",
    false,
  );
  // The mocks' `newResource` is not shown the options that travel beside the inputs: read them off the request.
  const monitor = pulumi.runtime.getMonitor() as unknown as {
    registerResource: (
      request: {
        getType(): string;
        getName(): string;
        getAdditionalsecretoutputsList(): string[];
        getVersion(): string;
        getPlugindownloadurl(): string;
      },
      callback: unknown,
    ) => void;
  };
  const registerResource = monitor.registerResource.bind(monitor);
  monitor.registerResource = (request, callback) => {
    aso.set(`${request.getType()}::${request.getName()}`, request.getAdditionalsecretoutputsList());
    versions.set(`${request.getType()}::${request.getName()}`, request.getVersion());
    downloadUrls.set(`${request.getType()}::${request.getName()}`, request.getPlugindownloadurl());
    registerResource(request, callback);
  };
});

describe("a native class per kind", () => {
  const classes = native as unknown as Record<string, native.NativeClass<Kind> | undefined>;

  it.each((Object.values(kinds) as Kind[]).map((kind) => [kind.name, kind] as const))(
    "%s registers gms:index:<Kind> with every declared input, secrets marked, and shows every output",
    async (kindName, kind) => {
      const Class = classes[kindName];
      expect(Class?.token).toBe(`gms:index:${kindName}`);
      const inputNames = Object.keys(kind.inputs);
      const args = Object.fromEntries(inputNames.map((input) => [input, `${input}-value`]));
      const resource = new Class!(`all-${kindName}`, args as never) as unknown as Record<string, pulumi.Output<unknown>> & pulumi.Resource;
      await registered(resource);

      const registration = registrationOf(`all-${kindName}`);
      expect(registration.type).toBe(`gms:index:${kindName}`);
      for (const input of inputNames) expect(registration.inputs[input], input).toBe(`${input}-value`);
      const declaredSecrets = inputNames.filter((input) => kind.inputs[input]!.secret);
      expect(registration.secrets.sort()).toEqual(declaredSecrets.sort());
      const secretOutputs = Object.keys(kind.outputs).filter((output) => kind.outputs[output]!.secret);
      expect(registration.additionalSecretOutputs.sort()).toEqual([...declaredSecrets, "connection", ...secretOutputs].sort());
      // Dynamic-only properties stay out of a native registration.
      expect(Object.keys(registration.inputs).filter((name) => name.startsWith("__"))).toEqual([]);
      expect(registration.provider).toBe("");
      // The plugin version the package was released with, so the engine takes that one of those installed, and where
      // it is released, so the engine downloads it where it is not.
      expect(registration.version).toBe(PACKAGE_VERSION);
      expect(registration.pluginDownloadURL).toBe(pluginDownloadURL);

      for (const output of Object.keys(kind.outputs)) {
        expect(pulumi.Output.isInstance(resource[output]), output).toBe(true);
        expect(await resolved(resource[output]!), output).toBe(`all-${kindName}.${output}`);
      }
      for (const input of inputNames) expect(await resolved(resource[input]!), input).toBe(`${input}-value`);
      expect(Class!.isInstance(resource)).toBe(true);
    },
  );

  it("exports exactly the ten kinds, each a distinct class named after its kind", () => {
    for (const kind of Object.values(kinds)) expect(classes[kind.name]?.name).toBe(kind.name);
    const withTokens = Object.entries(classes).filter(([, value]) => typeof value === "function" && "token" in value);
    expect(withTokens.map(([name]) => name).sort()).toEqual(Object.keys(kinds).sort());
    const app = new native.App("instance-check", { name: "x" });
    expect(native.App.isInstance(app)).toBe(true);
    expect(native.Workflow.isInstance(app)).toBe(false);
    expect(native.App.isInstance({ name: "x" })).toBe(false);
  });

  it("marks the connection and whatever the program made secret, and names no `__secretInputs`", async () => {
    const source = new native.ContextSource("secret-url", {
      context: "3b5f6c1e-0000-4000-8000-000000000001",
      url: pulumi.secret("https://example.com/doc?token=abc"),
      connection: { baseUrl: "https://gms.example/v1", apiKey: "key-1" },
    });
    await registered(source);
    const registration = registrationOf("secret-url");
    expect(registration.secrets.sort()).toEqual(["connection", "url"]);
    expect(registration.inputs.connection).toEqual({ baseUrl: "https://gms.example/v1", apiKey: "key-1" });
    expect(registration.inputs).not.toHaveProperty("__secretInputs");
    expect(registration.inputs).not.toHaveProperty("__provider");
  });

  it("sends a property that is no field (a typo, a wire name) as a secret, for the provider's check to name", async () => {
    const evaluation = new native.Eval("typo", { name: "e", action: "a", evalTypes: [], sampling_rate: 0.5 } as never);
    await registered(evaluation);
    const registration = registrationOf("typo");
    expect(registration.inputs.sampling_rate).toBe(0.5);
    expect(registration.secrets).toContain("sampling_rate");
  });

  it("lists a kind's secret outputs and the caller's additionalSecretOutputs", async () => {
    const Token = nativeClass({
      name: "Skill",
      description: "A kind with a secret output.",
      identity: [],
      workspaceSection: "Tokens, by logical name.",
      inputs: { name: updatable(z.string(), "Name.") },
      outputs: { token: computed(z.string(), "A credential.", { secret: true }), guid: computed(z.string(), "GUID.") },
      create: async () => ({}),
      findCreated: async () => [],
      read: async () => ({}),
      update: async () => ({}),
      delete: async () => {},
    });
    await registered(new Token("secret-output", { name: "n" }, { additionalSecretOutputs: ["name"] }));
    expect(registrationOf("secret-output").additionalSecretOutputs.sort()).toEqual(["connection", "name", "token"]);
  });

  it("reads an existing object by id with get", async () => {
    const app = native.App.get("existing", "2c1f0000-0000-4000-8000-0000000000aa");
    expect(await resolved(app.guid)).toBe("existing.guid");
    const registration = registrationOf("existing");
    expect(registration).toMatchObject({ type: "gms:index:App", id: "2c1f0000-0000-4000-8000-0000000000aa" });
  });
});

describe("the native Model's link to its connection", () => {
  it("derives __linkTo from the one ProviderConnection of its type in dependsOn, native or dynamic", async () => {
    const openai = new native.ProviderConnection("openai-conn", { provider: "openai", key: "sk-1" });
    // A connection the dynamic class declared, recognised by its token (its registration needs no `__provider` here).
    const Dynamic = class extends pulumi.CustomResource {
      constructor(name: string, props: pulumi.Inputs) {
        super("pulumi-nodejs:dynamic/gms:ProviderConnection", name, props);
      }
    };
    const anthropic = new Dynamic("anthropic-conn", { provider: "anthropic", guid: "anthropic-conn-guid-from-state" });
    const linked = new native.Model("linked", { llm: "gpt-4o", provider: "OpenAI", key: "sk-2" }, { dependsOn: [openai, anthropic] });
    const viaDynamic = new native.Model("via-dynamic", { llm: "claude", provider: "anthropic", key: "sk-3" }, { dependsOn: anthropic });
    const unlinked = new native.Model("unlinked", { llm: "gpt-4o", provider: "openai", key: "sk-4" });
    await Promise.all([linked, viaDynamic, unlinked].map(registered));

    expect(registrationOf("linked").inputs[LINK_TO]).toBe("openai-conn.guid");
    expect(registrationOf("via-dynamic").inputs[LINK_TO]).toBe("anthropic-conn-guid-from-state");
    expect(registrationOf("unlinked").inputs).not.toHaveProperty(LINK_TO);
    expect(registrationOf("linked").secrets).toEqual(["key"]);
    expect(Object.keys(kinds.Model.derived ?? {})).toEqual([LINK_TO]);
  });
});

describe("the native Provider", () => {
  it("registers pulumi:providers:gms with its config, apiKey secret, numbers as stack config holds them", async () => {
    const provider = new native.Provider("acme", {
      baseUrl: "https://acme.example/v1",
      apiKey: "acme-key",
      maxRetries: 5,
      retryBaseDelayMs: pulumi.output(250),
    });
    await registered(provider);
    const registration = registrationOf("acme");
    expect(registration.type).toBe("pulumi:providers:gms");
    expect(registration.inputs).toEqual({
      baseUrl: "https://acme.example/v1",
      apiKey: "acme-key",
      maxRetries: "5",
      retryBaseDelayMs: "250",
    });
    expect(registration.secrets).toEqual(["apiKey"]);
    expect(registration.additionalSecretOutputs).toEqual(["apiKey"]);
    expect(registration.version).toBe(PACKAGE_VERSION);
    expect(registration.pluginDownloadURL).toBe(pluginDownloadURL);
    expect(native.Provider.isInstance(provider)).toBe(true);
    expect(native.Provider.isInstance(new native.App("not-a-provider", { name: "not a provider" }))).toBe(false);
  });

  it("asks for the plugin version and download URL a program names over the package's", async () => {
    const pinned = new native.App("pinned", { name: "Pinned" }, { version: "9.8.7", pluginDownloadURL: "https://mirror.example/gms" });
    await registered(pinned);
    expect(registrationOf("pinned")).toMatchObject({ version: "9.8.7", pluginDownloadURL: "https://mirror.example/gms" });
  });

  it("ties a resource given { provider } to it", async () => {
    const provider = new native.Provider("tied", { baseUrl: "https://tied.example/v1", apiKey: pulumi.secret("tied-key") });
    const app = new native.App("tied-app", { name: "Support" }, { provider });
    await Promise.all([registered(provider), registered(app)]);
    const urn = await resolved(provider.urn);
    expect(registrationOf("tied-app").provider).toBe(`${urn}::tied-id`);
    expect(registrationOf("tied").secrets).toEqual(["apiKey"]);
  });

  it("sends each setting as schema.json types it: a string as is, a number JSON-encoded, the API key as a secret", async () => {
    const provider = new native.Provider("typed", {
      baseUrl: "https://typed.example/v1",
      apiKey: "typed-key",
      maxRetries: 2,
      maxRequestsPerSecond: 0.5,
    });
    await registered(provider);
    const registration = registrationOf("typed");
    expect(registration.inputs).toMatchObject({ baseUrl: "https://typed.example/v1", maxRetries: "2", maxRequestsPerSecond: "0.5" });
    expect(registration.secrets).toEqual(["apiKey"]);
  });
});
