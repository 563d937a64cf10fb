import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as gms from "../src";
import { type RunningEmulator, startEmulator } from "../src/emulator";
import { TEST_FIXTURES } from "./emulator/harness";
import { startFineTune } from "./provider/fine-tune-fixture";

describe("lookups", () => {
  let emulator: RunningEmulator;
  let connection: { baseUrl: string; apiKey: string };
  beforeAll(async () => {
    emulator = await startEmulator({ fixtures: TEST_FIXTURES });
    connection = { baseUrl: emulator.url, apiKey: emulator.apiKey };
  });
  afterAll(() => emulator?.close());

  it("reads the current workspace with its Apps, and its usage", async () => {
    const workspace = await gms.getWorkspace({ connection });
    expect(workspace).toMatchObject({ name: "Acme", slug: "acme" });
    expect(workspace.apps.map((app) => app.name)).toEqual(["Support", "Sales"]);
    const usage = await gms.getUsage({ connection });
    expect(usage.find((entry) => entry.feature === "apps")).toEqual({ feature: "apps", used: 2, limit: 5 });
  });

  it("finds an App's Actions by App name or GUID, and one Action by name", async () => {
    const byName = await gms.getActions({ app: "Support", connection });
    expect(byName.map((action) => action.name)).toEqual(["Summarize", "Classify"]);
    const byGuid = await gms.getActions({ app: (await gms.getWorkspace({ connection })).apps[0]!.guid, connection });
    expect(byGuid).toEqual(byName);
    const summarize = await gms.getAction({ app: "Support", name: "Summarize", connection });
    expect(summarize).toMatchObject({ name: "Summarize", model: "gpt-4o-mini", actionType: "prompt", app: byGuid[0]!.app });
    expect(summarize.app).toBe((await gms.getWorkspace({ connection })).apps[0]!.guid);
    await expect(gms.getAction({ app: "Support", name: "Translate", connection })).rejects.toThrow(
      'No Action of App "Support" named "Translate". Available: "Summarize", "Classify".',
    );
    await expect(gms.getActions({ app: "Nope", connection })).rejects.toThrow('No App named "Nope". Available: "Support", "Sales".');
  });

  it("lists Contexts, Skill types and Eval types, and finds them by name", async () => {
    expect((await gms.getContexts({ connection })).map((context) => context.name)).toEqual(["Handbook", "FAQ"]);
    expect((await gms.getContext({ name: "FAQ", connection })).guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(await gms.getSkillTypes({ connection })).toEqual([
      { name: "web", metadata: [{ name: "engine", required: true, type: "string" }] },
    ]);
    expect((await gms.getEvalTypes({ connection })).map((type) => type.name)).toEqual(["Exact match", "Toxicity"]);
    await expect(gms.getEvalType({ name: "BLEU", connection })).rejects.toThrow(
      'No Eval type named "BLEU". Available: "Exact match", "Toxicity".',
    );
  });

  it("a name that finds nothing is a RunError (the CLI prints its message, no stack) that says what there is", async () => {
    const action = await gms.getAction({ app: "Support", name: "Translate", connection }).catch((error: unknown) => error);
    expect(pulumi.RunError.isInstance(action)).toBe(true);
    expect(action).toBeInstanceOf(gms.LookupNotFoundError);
    expect(action).toMatchObject({
      name: "LookupNotFoundError",
      what: 'Action of App "Support"',
      wanted: "Translate",
      available: ["Summarize", "Classify"],
    });
    for (const lookup of [
      () => gms.getActions({ app: "Nope", connection }),
      () => gms.getContext({ name: "Nope", connection }),
      () => gms.getEvalType({ name: "Nope", connection }),
    ]) {
      const error = await lookup().catch((caught: unknown) => caught);
      expect(pulumi.RunError.isInstance(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(/^No .* named "Nope"\. Available: .*\.$/);
    }
    // A refused key (or a connection or configuration error) is a RunError too: its message alone, no stack,
    // naming the lookup, with the client's code.
    const other = await gms.getWorkspace({ connection: { baseUrl: emulator.url, apiKey: "gms_wrong" } }).catch((caught: unknown) => caught);
    expect(other).toBeInstanceOf(gms.LookupFailedError);
    expect(pulumi.RunError.isInstance(other)).toBe(true);
    expect(other).toMatchObject({ lookup: "getWorkspace", code: "authentication", message: expect.stringMatching(/^getWorkspace: GET /) });
  });

  it("finds an App's fine-tunes with their job status, and one by name", async () => {
    expect(await gms.getFineTunes({ app: "Sales", connection })).toEqual([]);
    const started = await startFineTune(emulator, "Support tone");
    const fineTunes = await gms.getFineTunes({ app: "Support", connection });
    expect(fineTunes).toEqual([
      {
        guid: started.guid,
        app: (await gms.getWorkspace({ connection })).apps[0]!.guid,
        name: "Support tone",
        dataset: expect.stringMatching(/^[0-9a-f-]{36}$/),
        baseModel: "gpt-4o-mini",
        status: "processing",
        vendorFinetuneName: expect.stringMatching(/^ftjob-/),
        failureReason: null,
      },
    ]);
    const byGuid = await gms.getFineTune({ app: fineTunes[0]!.app, name: "Support tone", connection });
    expect(byGuid).toEqual(fineTunes[0]);
    const missing = await gms.getFineTune({ app: "Support", name: "Sales tone", connection }).catch((caught: unknown) => caught);
    expect(missing).toBeInstanceOf(gms.LookupNotFoundError);
    expect((missing as Error).message).toBe('No fine-tune of App "Support" named "Sales tone". Available: "Support tone".');
  });

  it("has an Output form that takes Inputs", async () => {
    const action = gms.getActionOutput({ app: Promise.resolve("Sales"), name: "Pitch", connection });
    const guid = await new Promise<string>((resolve) => action.apply((value) => resolve(value.guid)));
    expect(guid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("fails clearly without credentials", async () => {
    const saved = { url: process.env.GMS_BASE_URL, key: process.env.GMS_API_KEY };
    delete process.env.GMS_BASE_URL;
    delete process.env.GMS_API_KEY;
    try {
      await expect(gms.getWorkspace()).rejects.toThrow(/No service URL/);
      await expect(gms.getWorkspace({ connection: { baseUrl: emulator.url } })).rejects.toThrow(/No API key/);
    } finally {
      if (saved.url !== undefined) process.env.GMS_BASE_URL = saved.url;
      if (saved.key !== undefined) process.env.GMS_API_KEY = saved.key;
    }
  });
});
