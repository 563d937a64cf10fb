/**
 * A native Model's link in a preview, under the Pulumi SDK's mocks in preview mode: a ProviderConnection whose
 * provider type no output holds (after an import: the service does not show it) has that output unknown in a
 * preview, yet the Model still knows which connection the program means, from the connection's declared args.
 * Without that, every such Model previews as a replacement that `up` then does not make.
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import * as native from "../../src/native";
import { LINK_TO } from "../../src/resources/model";

const registered: Record<string, Record<string, unknown>> = {};

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    {
      newResource: async (args) => {
        registered[args.name] = args.inputs;
        const state: Record<string, unknown> = { ...args.inputs, guid: `${args.name}.guid` };
        // As after an import: no output holds the connection's provider type.
        if (args.type === "gms:index:ProviderConnection") delete state.provider;
        return { id: `${args.name}-id`, state };
      },
      call: async () => ({}),
    },
    "gms-native-preview-test",
    "dev",
    true,
  );
});

describe("a native Model meaning an imported connection, in a preview", () => {
  it("links to the connection the program declared, though its provider output is unknown", async () => {
    const imported = new native.ProviderConnection("imported", { provider: "mistral", key: "sk-preview-1" });
    const model = new native.Model("model", { llm: "mistral-large", provider: "mistral", key: "sk-preview-2" }, { dependsOn: [imported] });
    await new Promise((resolve) => model.urn.apply(resolve));
    const known = await new Promise<boolean>((resolve) =>
      (imported.provider as unknown as { isKnown: Promise<boolean> }).isKnown.then(resolve),
    );
    expect(known).toBe(false);
    expect(registered.model?.[LINK_TO]).toBe("imported.guid");
  });
});
