/**
 * Every kind through the plugin over gRPC, as the engine drives it, against the emulator: check, create,
 * a diff of the same inputs (none), refresh (read with state), import by id alone (read, then check and diff
 * against the declared inputs: no change), an updatable field's change (detailed diff UPDATE, update in place,
 * the API showing it), a replace-only field's change (UPDATE_REPLACE, listed in replaces), delete (gone from the
 * API, and a refresh then reports it gone).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KIND_NAMES } from "../../src/resources";
import { type PluginBed, startPluginBed } from "./bed";
import { isSecret, plain, type Props, secret, urnOf } from "./plugin-process";

interface KindCase {
  kind: string;
  args: Props;
  path: (guid: string) => string;
  /** An updatable field's new value, and what the API then shows (wire names). */
  update: { field: string; value: unknown; shows: Props };
  /** A replace-only field's new value. */
  replace?: { field: string; value: unknown };
}

describe("every kind through the plugin over gRPC", () => {
  let bed: PluginBed;
  let cases: KindCase[];

  beforeAll(async () => {
    bed = await startPluginBed();
    const dataset = (await bed.api("POST", "/datasets", { name: "Tune set", app: bed.apps.Support })).body.guid as string;
    const connection = await bed.numericId(
      "providers",
      (await bed.api("POST", "/providers", { provider: "openai", key: "sk-tune-not-secret", name: "tune connection" })).body.guid,
    );
    const handbook = bed.contexts.Handbook!;
    cases = [
      {
        kind: "App",
        args: { name: "Helpdesk", description: "Answers tickets" },
        path: (guid) => `/apps/${guid}`,
        update: { field: "description", value: "Answers tickets fast", shows: { description: "Answers tickets fast" } },
      },
      {
        kind: "ProviderConnection",
        args: { provider: "openai", key: secret("sk-plugin-provider-4c1d77"), nickname: "OpenAI prod" },
        path: (guid) => `/providers/${guid}`,
        update: { field: "nickname", value: "OpenAI main", shows: { nickname: "OpenAI main" } },
        replace: { field: "provider", value: "anthropic" },
      },
      {
        kind: "Model",
        args: { llm: "gpt-4o", provider: "openai", key: secret("sk-plugin-model-1a2b90") },
        path: (guid) => `/models/${guid}`,
        update: { field: "llm", value: "gpt-4o-mini", shows: { llm: "gpt-4o-mini" } },
        replace: { field: "key", value: secret("sk-plugin-model-3c4d56") },
      },
      {
        kind: "Workflow",
        args: { name: "Triage", app: bed.apps.Support },
        path: (guid) => `/workflows/${guid}`,
        update: { field: "name", value: "Triage 2", shows: { name: "Triage 2" } },
        replace: { field: "app", value: bed.apps.Sales },
      },
      {
        kind: "Dataset",
        args: { name: "Golden", description: "Reviewed answers", app: bed.apps.Support, data: bed.data.slice(0, 2).map((d) => d.guid) },
        path: (guid) => `/datasets/${guid}`,
        update: { field: "name", value: "Golden 2", shows: { name: "Golden 2" } },
        replace: { field: "app", value: bed.apps.Sales },
      },
      {
        kind: "Eval",
        args: { name: "Quality", action: bed.actions["Support/Summarize"], evalTypes: [{ guid: bed.evalTypes["Exact match"] }] },
        path: (guid) => `/evals/${guid}`,
        update: {
          field: "evalTypes",
          value: [{ guid: bed.evalTypes.Toxicity }],
          shows: { eval_types: [expect.objectContaining({ guid: bed.evalTypes.Toxicity })] },
        },
        replace: { field: "name", value: "Quality 2" },
      },
      {
        kind: "Experiment",
        args: {
          name: "Tone",
          app: bed.apps.Support,
          primaryAction: bed.actions["Support/Summarize"],
          secondaryAction: bed.actions["Support/Classify"],
        },
        path: (guid) => `/experiments/${guid}`,
        update: { field: "name", value: "Tone 2", shows: { name: "Tone 2" } },
        replace: { field: "app", value: bed.apps.Sales },
      },
      {
        kind: "Skill",
        args: { name: "web-search", type: "web" },
        path: (guid) => `/skills/${guid}`,
        update: { field: "name", value: "web-search-eu", shows: { name: "web-search-eu" } },
        replace: { field: "type", value: "code" },
      },
      {
        kind: "ContextSource",
        args: { context: handbook, url: "https://example.com/handbook.md", name: "Handbook page" },
        path: (guid) => `/contexts/${handbook}/context_sources/${guid}`,
        update: { field: "name", value: "Handbook page 2", shows: { name: "Handbook page 2" } },
        replace: { field: "url", value: "https://example.com/handbook-2.md" },
      },
      {
        kind: "FineTune",
        args: {
          name: "Tone tune",
          app: bed.apps.Support,
          dataset,
          dataIds: bed.data.slice(0, 10).map((d) => d.id),
          baseModel: "gpt-4o-mini",
          providerConnection: connection,
        },
        path: (guid) => `/finetune/${guid}`,
        update: { field: "name", value: "Tone tune 2", shows: { name: "Tone tune 2" } },
        replace: { field: "baseModel", value: "gpt-4o" },
      },
    ];
  });
  afterAll(() => bed?.close());

  it("runs the whole lifecycle of each kind of the registry, import by id included", async () => {
    const { plugin } = bed;
    expect(cases.map((c) => c.kind).sort()).toEqual([...KIND_NAMES].sort());
    for (const c of cases) {
      const urn = urnOf(c.kind, c.kind.toLowerCase());
      const checked = await plugin.check(urn, {}, c.args);
      expect(checked.failures, c.kind).toEqual([]);
      const created = await plugin.create(urn, checked.inputs);
      expect(created.id, c.kind).toMatch(/^[0-9a-f-]{36}$/);
      expect((await bed.api("GET", c.path(created.id))).status, c.kind).toBe(200);
      expect((await plugin.diff(urn, created.id, created.properties, checked.inputs)).changes, c.kind).toBe("none");

      // Refresh: the live object, and no diff after it.
      const refreshed = await plugin.read(urn, created.id, created.properties, checked.inputs);
      expect(refreshed.id, c.kind).toBe(created.id);
      expect((await plugin.diff(urn, created.id, refreshed.properties, checked.inputs)).changes, `${c.kind} after refresh`).toBe("none");

      // Import: the id alone, then what the engine does with the program's declaration.
      const imported = await plugin.read(urn, created.id);
      expect(imported.id, c.kind).toBe(created.id);
      const importChecked = await plugin.check(urn, imported.inputs, c.args);
      expect(importChecked.failures, c.kind).toEqual([]);
      const importDiff = await plugin.diff(urn, created.id, imported.properties, importChecked.inputs);
      expect({ kind: c.kind, changes: importDiff.changes, replaces: importDiff.replaces, detailedDiff: importDiff.detailedDiff }).toEqual({
        kind: c.kind,
        changes: "none",
        replaces: [],
        detailedDiff: {},
      });

      // An updatable field: UPDATE, in place, the API showing it.
      const updatedArgs = { ...c.args, [c.update.field]: c.update.value };
      const updateChecked = await plugin.check(urn, checked.inputs, updatedArgs);
      const updateDiff = await plugin.diff(urn, created.id, created.properties, updateChecked.inputs);
      expect(updateDiff, c.kind).toMatchObject({
        changes: "some",
        replaces: [],
        hasDetailedDiff: true,
        detailedDiff: { [c.update.field]: "UPDATE" },
      });
      const updated = await plugin.update(urn, created.id, created.properties, updateChecked.inputs);
      expect(plain(updated.properties)[c.update.field], c.kind).toEqual(
        c.update.value instanceof Object && "value" in c.update.value ? c.update.value.value : c.update.value,
      );
      expect((await bed.api("GET", c.path(created.id))).body, c.kind).toMatchObject(c.update.shows);

      // A replace-only field: UPDATE_REPLACE, listed in replaces.
      if (c.replace) {
        const replaceChecked = await plugin.check(urn, updateChecked.inputs, { ...updatedArgs, [c.replace.field]: c.replace.value });
        expect(replaceChecked.failures, c.kind).toEqual([]);
        const replaceDiff = await plugin.diff(urn, created.id, updated.properties, replaceChecked.inputs);
        expect(replaceDiff, c.kind).toMatchObject({ changes: "some", detailedDiff: { [c.replace.field]: "UPDATE_REPLACE" } });
        expect(replaceDiff.replaces, c.kind).toContain(c.replace.field);
      }

      // Secrets declared by the kind come back as secrets.
      for (const [name, value] of Object.entries(created.properties))
        if (isSecret(c.args[name])) expect(isSecret(value), `${c.kind}.${name}`).toBe(true);

      await plugin.delete(urn, created.id, updated.properties);
      expect((await bed.api("GET", c.path(created.id))).status, c.kind).toBe(404);
      expect((await plugin.read(urn, created.id, updated.properties, updateChecked.inputs)).id, `${c.kind} after delete`).toBe("");
    }
  });
});
