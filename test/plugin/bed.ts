/**
 * An emulator seeded with what the public interface cannot create (the kinds suites' fixtures: Actions, Data
 * records, Contexts, configured Skills, Eval types, and a second workspace), the fixtures' GUIDs, and a plugin
 * process configured for the first workspace.
 */
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { ACME_KEY, KINDS_FIXTURES, OTHER_KEY, fixtureLookups } from "../pulumi-cli/kinds-fixtures";
import { PluginProcess, secret } from "./plugin-process";

export { ACME_KEY, OTHER_KEY };

type Api = <T = any>(method: string, path: string, body?: unknown) => Promise<{ status: number; body: T }>;

export interface PluginBed {
  emulator: RunningEmulator;
  plugin: PluginProcess;
  api: Api;
  otherApi: Api;
  apps: Record<string, string>;
  actions: Record<string, string>;
  contexts: Record<string, string>;
  evalTypes: Record<string, string>;
  data: { guid: string; id: number }[];
  numericId(kind: "data" | "providers", guid: string): Promise<number>;
  close(): Promise<void>;
}

export async function startPluginBed(): Promise<PluginBed> {
  const emulator = await startEmulator({ port: 0, db: ":memory:", fixtures: KINDS_FIXTURES, fineTuneSeconds: 0 });
  const { api, otherApi, guids, data, numericId } = await fixtureLookups(emulator);
  const { apps, actions, contexts, evalTypes } = guids;
  const plugin = await PluginProcess.start();
  await plugin.configure({ baseUrl: emulator.url, apiKey: secret(ACME_KEY), maxRetries: "0", retryBaseDelayMs: "0" });
  return {
    emulator,
    plugin,
    api,
    otherApi,
    apps,
    actions,
    contexts,
    evalTypes,
    data,
    numericId,
    async close() {
      await plugin.stop();
      await emulator.close();
    },
  };
}
