import "../node-guard";
import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { buildServer, type ServerOptions } from "./server";
import { Store } from "./store";
import { slugify } from "./store/records";
import { type Fixtures, loadFixtures, readFixturesFile } from "./fixtures";
import type { FaultController } from "./faults";
import { Clock } from "./clock";

export { Store } from "./store";
export { Clock } from "./clock";
export { buildServer } from "./server";
export { loadFixtures, readFixturesFile, type Fixtures } from "./fixtures";
export {
  parseFaultSpec,
  formatFaultSpec,
  FaultSpecError,
  type FaultSpec,
  type FaultStats,
  type FaultController,
} from "./faults";

export interface EmulatorOptions extends ServerOptions {
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** SQLite file, or `:memory:` (the default). */
  db?: string;
  /** A fixtures YAML file path, or fixtures as an object. */
  fixtures?: string | Fixtures;
  /** Without fixtures or `workspaces`: the key of the one default workspace (generated when absent). */
  apiKey?: string;
  /**
   * Workspaces to have, each with its API key (created, or given the key if it exists from an earlier run
   * on the same database); the slug is made from the name. Added to what `fixtures` declare.
   */
  workspaces?: { name: string; apiKey: string }[];
  /**
   * Seconds a fine-tune stays `processing` after its create (default 3; 0: it has finished at the first
   * read after the create). It then ends `failed` when its base model's name contains "fail", else `succeeded`.
   */
  fineTuneSeconds?: number;
  /**
   * Milliseconds the service's clock is ahead of this machine's (negative: behind), default 0: every
   * timestamp the emulator writes and its `Date` header follow it, as a service on a machine whose clock
   * differs from its clients' would.
   */
  clockOffsetMs?: number;
}

export interface RunningEmulator {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:4000/v1`. */
  url: string;
  /** The API key of the first workspace (fixtures) or of the default workspace. */
  apiKey: string;
  /** Every API key the fixtures declared (or the default workspace's). */
  apiKeys: string[];
  /**
   * The default workspace's key when no key was given (generated, or recalled from the database): the one
   * key the caller does not know already. Undefined when every key was given.
   */
  generatedApiKey: string | undefined;
  store: Store;
  server: FastifyInstance;
  /** Fault injection: `set(spec)` switches it on, changes or (undefined) ends it; `stats()` counts it. */
  faults: FaultController;
  close(): Promise<void>;
}

export const DEFAULT_WORKSPACE_SLUG = "default";

/** Starts the emulator: opens (or creates) the database, loads fixtures, listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  if (options.fineTuneSeconds !== undefined && !(Number.isFinite(options.fineTuneSeconds) && options.fineTuneSeconds >= 0)) {
    throw new RangeError("fineTuneSeconds must be a number of seconds, 0 or more");
  }
  const clock = new Clock(options.clockOffsetMs ?? 0);
  const store = new Store(options.db ?? ":memory:", { fineTunes: { seconds: options.fineTuneSeconds }, clock });
  try {
    const { apiKeys, generatedApiKey } = seed(store, options);
    const server = buildServer(store, options);
    const host = options.host ?? "127.0.0.1";
    await server.listen({ host, port: options.port ?? 0 });
    const address = server.server.address();
    const port = typeof address === "object" && address ? address.port : options.port;
    const urlHost = host.includes(":") ? `[${host}]` : host;
    return {
      url: `http://${urlHost}:${port}/v1`,
      apiKey: apiKeys[0]!,
      apiKeys,
      generatedApiKey,
      store,
      server,
      faults: server.faults,
      async close() {
        await server.close();
        store.close();
      },
    };
  } catch (error) {
    store.close();
    throw error;
  }
}

function seed(store: Store, options: EmulatorOptions): { apiKeys: string[]; generatedApiKey: string | undefined } {
  const keys: string[] = [];
  if (options.fixtures !== undefined) {
    const fixtures = typeof options.fixtures === "string" ? readFixturesFile(options.fixtures) : options.fixtures;
    keys.push(...loadFixtures(store, fixtures));
  }
  for (const workspace of options.workspaces ?? [])
    keys.push(workspaceKey(store, workspace.name, slugify(workspace.name), workspace.apiKey));
  if (keys.length > 0) return { apiKeys: keys, generatedApiKey: undefined };
  const key = workspaceKey(store, "Default", DEFAULT_WORKSPACE_SLUG, options.apiKey);
  return { apiKeys: [key], generatedApiKey: options.apiKey === undefined ? key : undefined };
}

/**
 * A workspace's key: the given one (added to the workspace an earlier run made, so its records stay
 * reachable), else the one stored from an earlier run, else a new workspace with a generated key. A
 * workspace its key holder deleted is restored first, as fixtures restore theirs: the key must work.
 */
function workspaceKey(store: Store, name: string, slug: string, apiKey: string | undefined): string {
  if (apiKey && store.workspaces.restoreByKey(apiKey)) return apiKey;
  const existing = store.workspaces.keyOf(slug, { includeDeleted: true });
  if (existing) {
    store.workspaces.restoreByKey(existing);
    if (apiKey) store.workspaces.addKey(existing, apiKey);
    return apiKey ?? existing;
  }
  const key = apiKey ?? `gms_${randomBytes(18).toString("base64url")}`;
  store.workspaces.createWithKey({ name, slug, apiKey: key });
  return key;
}
