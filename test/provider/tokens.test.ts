/**
 * The package's type tokens and the wire's special-value tags are each written once in src/: the tokens in
 * src/provider/tokens.ts, the tags in src/provider/values.ts. Both are pinned here against what the SDK does:
 * its exported tags, and the type `pulumi.dynamic.Resource` registers.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import * as rpc from "@pulumi/pulumi/runtime/rpc";
import { describe, expect, it } from "vitest";
import { dynamicToken, kindOfDynamicToken, nameOfNativeToken, nativeToken, PROVIDER_TYPE } from "../../src/provider/tokens";
import { isSecret, makeSecret, SECRET_SIG, SIG_KEY, UNKNOWN } from "../../src/provider/values";

const src = join(__dirname, "..", "..", "src");

/** Every .ts file of src/ with its comments removed, so that prose naming a token does not count. */
function sources(): { file: string; code: string }[] {
  return (readdirSync(src, { recursive: true }) as string[])
    .filter((file) => file.endsWith(".ts"))
    .map((file) => ({
      file,
      code: readFileSync(join(src, file), "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/^\s*\/\/.*$/gm, ""),
    }));
}

describe("the package's type tokens", () => {
  it("name resources and functions gms:index:<name>, and read the name back from nothing else", () => {
    expect(nativeToken("App")).toBe("gms:index:App");
    expect(nameOfNativeToken("gms:index:getWorkspace")).toBe("getWorkspace");
    expect(nameOfNativeToken("gmsx:index:App")).toBeUndefined();
    expect(nameOfNativeToken("pulumi-nodejs:dynamic/gms:App")).toBeUndefined();
    expect(PROVIDER_TYPE).toBe("pulumi:providers:gms");
  });

  it("name a dynamic resource as pulumi.dynamic.Resource registers it for the module gms", async () => {
    const registered: string[] = [];
    await pulumi.runtime.setMocks({
      newResource: async (args) => {
        registered.push(args.type);
        return { id: "id", state: {} };
      },
      call: async () => ({}),
    });
    const provider: pulumi.dynamic.ResourceProvider = { create: async () => ({ id: "id" }) };
    class Probe extends pulumi.dynamic.Resource {
      constructor() {
        super(provider, "probe", {}, undefined, "gms", "App");
      }
    }
    const probe = new Probe();
    await new Promise((resolve) => probe.urn.apply(resolve));
    expect(registered).toEqual([dynamicToken("App")]);
    expect(kindOfDynamicToken(dynamicToken("Model"))).toBe("Model");
    expect(kindOfDynamicToken("gms:index:Model")).toBeUndefined();
  });

  it("are spelt out in src/provider/tokens.ts alone", () => {
    const spelt = sources()
      .filter(({ file }) => file !== join("provider", "tokens.ts"))
      .filter(({ code }) => /["'`]gms:index:|pulumi-nodejs:dynamic\/gms|pulumi:providers:gms/.test(code))
      .map(({ file }) => file);
    expect(spelt).toEqual([]);
  });
});

describe("the wire's special values", () => {
  it("are the SDK's tags", () => {
    expect(SIG_KEY).toBe(rpc.specialSigKey);
    expect(SECRET_SIG).toBe(rpc.specialSecretSig);
    expect(UNKNOWN).toBe(rpc.unknownValue);
  });

  it("make a secret once, and know one from anything else", () => {
    const secret = makeSecret("sk-value");
    expect(secret).toEqual({ [SIG_KEY]: SECRET_SIG, value: "sk-value" });
    expect(makeSecret(secret)).toBe(secret);
    expect(isSecret(secret)).toBe(true);
    expect(isSecret({ [SIG_KEY]: SECRET_SIG, ciphertext: "v1:..." })).toBe(true);
    for (const other of [null, "sk-value", [secret], { value: "sk-value" }, { [SIG_KEY]: "c44067f5952c0a294b673a41bacd8c17" }])
      expect(isSecret(other)).toBe(false);
  });

  it("are spelt out in src/provider/values.ts alone", () => {
    const spelt = sources()
      .filter(({ file }) => file !== join("provider", "values.ts"))
      .filter(({ code }) => [SIG_KEY, SECRET_SIG, UNKNOWN].some((tag) => code.includes(tag)))
      .map(({ file }) => file);
    expect(spelt).toEqual([]);
  });
});
