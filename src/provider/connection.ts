/**
 * Where a resource's API calls go. Credentials come from, in order: the resource's own `connection`
 * input (a secret input, for programs that manage several workspaces), the stack config that the host
 * hands to `configure` (`gms:baseUrl`, secret `gms:apiKey`), then `GMS_BASE_URL` / `GMS_API_KEY`.
 * They never enter the serialized provider: `configure` runs inside the provider process. The other
 * settings (src/settings.ts) are read from the stack config, else the environment, when a client is made.
 * `gms:maxRequestsPerSecond` holds every request of the process to that rate: one limiter, shared by every
 * client (every resource and workspace) the process makes.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { AdaptivePacer, AuthenticationError, GmsClient, RequestRateLimiter } from "../client";
import {
  BaseUrl,
  ConfigurationError,
  configKey,
  configThenEnv,
  SETTING_NAMES,
  SETTINGS,
  type SettingName,
  type SettingSource,
  settingValue,
} from "../settings";
import { currentWorkspace } from "./current-workspace";
import { logRequest } from "./request-log";

export const Connection = z.strictObject({
  baseUrl: BaseUrl.optional(),
  apiKey: z.string().min(1).optional(),
});
export type Connection = z.infer<typeof Connection>;

interface ConfigSource {
  get(key: string): string | undefined;
}

let stackConfig: Partial<Record<SettingName, string>> = {};
const clients = new Map<string, GmsClient>();
/** The process's one limiter, made for the first client that needs it; another rate (a new configuration) makes another. */
let rateLimiter: RequestRateLimiter | undefined;
/** The adaptive pacer of each service (by base URL) the process talks to, shared by every client of it. */
const pacers = new Map<string, AdaptivePacer>();

function pacerFor(baseUrl: string): AdaptivePacer {
  let pacer = pacers.get(baseUrl);
  if (!pacer) pacers.set(baseUrl, (pacer = new AdaptivePacer()));
  return pacer;
}

/** Settings whose value is not known yet (an explicit provider's output, in a preview): not taken for missing. */
let unknownSettings = new Set<string>();

/**
 * Called by the dynamic-provider host once per `__provider` text, with the whole stack config; by the plugin's
 * Configure with its configuration, and the keys (`baseUrl`, `apiKey`) whose values a preview does not know yet.
 */
export function configure(config: ConfigSource, unknownKeys: readonly string[] = []): void {
  unknownSettings = new Set(unknownKeys);
  stackConfig = {};
  for (const name of SETTING_NAMES) {
    const text = config.get(configKey(name));
    if (text !== undefined) stackConfig[name] = text;
  }
}

/** A setting's sources below a connection's: the stack config, then the environment. */
const sourcesOf = (name: SettingName): SettingSource[] => configThenEnv(name, stackConfig[name]);

/** The limiter every client of the process shares, for the configured rate; undefined without one. */
function sharedRateLimiter(): RequestRateLimiter | undefined {
  const rate = settingValue("maxRequestsPerSecond", sourcesOf("maxRequestsPerSecond"));
  if (rate === undefined) return undefined;
  if (rateLimiter?.requestsPerSecond !== rate) rateLimiter = new RequestRateLimiter(rate);
  return rateLimiter;
}

/** The service a connection reaches (its own base URL, else the stack's, else the environment's), without a trailing slash. */
export const effectiveBaseUrl = (connection: Connection | undefined): string | undefined =>
  (connection?.baseUrl ?? stackConfig.baseUrl ?? process.env[SETTINGS.baseUrl.env])?.replace(/\/+$/, "");

const workspaces = new WeakMap<GmsClient, Promise<string>>();

/**
 * Whether two clients' keys select the same workspace (`GET /workspaces/current`, once per client), or
 * undefined when either key is refused.
 */
export async function sameWorkspace(first: GmsClient, second: GmsClient): Promise<boolean | undefined> {
  const workspaceOf = (client: GmsClient) => {
    let guid = workspaces.get(client);
    if (!guid) {
      guid = currentWorkspace(client).then((workspace) => workspace.guid);
      workspaces.set(client, guid);
    }
    return guid;
  };
  try {
    const [a, b] = await Promise.all([workspaceOf(first), workspaceOf(second)]);
    return a === b;
  } catch (error) {
    if (error instanceof AuthenticationError) return undefined;
    throw error;
  }
}

const NO_BASE_URL =
  "No service URL: set `pulumi config set gms:baseUrl https://.../v1`, or GMS_BASE_URL, or the resource's connection.baseUrl";
const NO_API_KEY = "No API key: set `pulumi config set --secret gms:apiKey ...`, or GMS_API_KEY, or the resource's connection.apiKey";

const effectiveApiKey = (connection: Connection | undefined): string | undefined =>
  connection?.apiKey ?? stackConfig.apiKey ?? process.env[SETTINGS.apiKey.env];

/**
 * What a resource of `connection` cannot reach the service without, each named with its three sources: checked by
 * Check, so that a preview fails as `up` would, sending nothing. A setting a preview does not know yet is not missing.
 */
export function missingSettings(connection: Connection | undefined): string[] {
  return [
    ...(effectiveBaseUrl(connection) || unknownSettings.has("baseUrl") ? [] : [NO_BASE_URL]),
    ...(effectiveApiKey(connection) || unknownSettings.has("apiKey") ? [] : [NO_API_KEY]),
  ];
}

/** One keep-alive client per distinct workspace connection, shared by every resource of the process. */
export function clientFor(connection: Connection | undefined): GmsClient {
  // The connection is a secret input, and a stack's config value may be one: only the environment's value is shown.
  const baseUrl = settingValue("baseUrl", [
    { label: "connection.baseUrl", text: connection?.baseUrl, shown: false },
    ...sourcesOf("baseUrl"),
  ])?.replace(/\/+$/, "");
  const apiKey = effectiveApiKey(connection);
  if (!baseUrl) throw new ConfigurationError(NO_BASE_URL);
  if (!apiKey) throw new ConfigurationError(NO_API_KEY);
  const cacheKey = `${baseUrl}\n${createHash("sha256").update(apiKey).digest("hex")}`;
  let client = clients.get(cacheKey);
  if (!client) {
    const maxRetries = settingValue("maxRetries", sourcesOf("maxRetries"));
    const baseDelayMs = settingValue("retryBaseDelayMs", sourcesOf("retryBaseDelayMs"));
    const requestDeadlineMs = settingValue("requestDeadlineMs", sourcesOf("requestDeadlineMs"));
    client = new GmsClient({
      baseUrl,
      apiKey,
      maxRetries,
      requestDeadlineMs,
      retryTiming: baseDelayMs === undefined ? {} : { baseDelayMs },
      rateLimiter: sharedRateLimiter(),
      pacer: pacerFor(baseUrl),
      onRequest: logRequest,
    });
    clients.set(cacheKey, client);
  }
  return client;
}
