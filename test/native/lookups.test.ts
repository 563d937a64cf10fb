/**
 * The package's functions on the plugin (`gms.native.getAction`, `getActionsOutput`, ...), through the Pulumi SDK's
 * mocks: each is an Invoke of its `gms:index:get<X>` token with the arguments as given (Outputs resolved), one per
 * lookup of `lookupDeclarations`, in a plain and an Output form; a list comes back unwrapped from the single property
 * `result` the plugin answers with, an object as it is. The plugin's side of the same Invoke is in
 * test/plugin/plugin.test.ts ("serves the package's functions").
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { lookupDeclarations } from "../../src/lookups";
import * as native from "../../src/native";

const calls: { token: string; inputs: Record<string, unknown> }[] = [];
const ACTION = { guid: "0f9c1a52-58e4-4b6f-9d0e-2f7d3c8b1a10", name: "Summarize", actionType: "prompt", model: "gpt-4o-mini" };

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    {
      newResource: async (args) => ({ id: `${args.name}-id`, state: args.inputs }),
      call: async (args) => {
        calls.push({ token: args.token, inputs: args.inputs });
        // As the plugin answers: an object result as its outputs, a list as `result`.
        return args.token === "gms:index:getActions" ? { result: [ACTION] } : ACTION;
      },
    },
    "gms-native-lookups",
    "dev",
    false,
  );
});

const resolved = <T>(output: pulumi.Output<T>): Promise<T> => new Promise((resolve) => output.apply(resolve));

describe("the native functions", () => {
  it("are one plain and one Output form per lookup of lookupDeclarations, under the SDKs' names", () => {
    const functions = Object.keys(native).filter((name) => /^get[A-Z]/.test(name));
    const expected = Object.keys(lookupDeclarations).flatMap((name) => [name, `${name}Output`]);
    expect(functions.sort()).toEqual(expected.sort());
  });

  it("invoke gms:index:getAction with the arguments, and answer the object as it is", async () => {
    expect(await native.getAction({ app: "Support", name: "Summarize" })).toEqual(ACTION);
    expect(calls.at(-1)).toEqual({ token: "gms:index:getAction", inputs: { app: "Support", name: "Summarize" } });
  });

  it("take Outputs in the Output form, and unwrap a list from its single property result", async () => {
    const app = pulumi.output("Support");
    expect(await resolved(native.getActionsOutput({ app }))).toEqual([ACTION]);
    expect(calls.at(-1)).toEqual({ token: "gms:index:getActions", inputs: { app: "Support" } });
    expect(await native.getActions({ app: "Support" })).toEqual([ACTION]);
  });
});
