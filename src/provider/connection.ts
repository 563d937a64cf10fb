/**
 * Where a resource's API calls go. Credentials come from, in order: the resource's own `connection`
 * input (a secret input, for programs that manage several workspaces), the stack config that the host
 * hands to `configure` (`gms:baseUrl`, secret `gms:apiKey`), then `GMS_BASE_URL` / `GMS_API_KEY`.
 * They never enter the serialized provider: `configure` runs inside the provider process. How hard the
 * client retries comes from `gms:maxRetries` and `gms:retryBaseDelayMs` (or GMS_MAX_RETRIES and
 * GMS_RETRY_BASE_DELAY_MS): a pipeline on a flaky network may want more patience, a test less waiting.
 * The service's deadline for a request, which a create whose answer was lost waits out before it sends
 * its POST again, comes from `gms:requestDeadlineMs` (or GMS_REQUEST_DEADLINE_MS; default 60 s).
 * `gms:maxRequestsPerSecond` (or GMS_MAX_REQUESTS_PER_SECOND; default none) holds every request of the
 * process to that rate: one limiter, shared by every client (every resource and workspace) the process makes.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { AdaptivePacer, AuthenticationError, GmsClient, RequestRateLimiter } from "../client";
import { currentWorkspace } from "./current-workspace";
import { logPacerChange, logRequest } from "./request-log";

const BASE_URL_FORM = "must be an http(s) URL ending in /v1, for example https://gms.example.com/v1";

/** The service root: every route sits under `/v1` (spec, Versioning), so a URL without it only ever answers 404. */
export const BaseUrl = z
  .url({ protocol: /^https?$/, error: BASE_URL_FORM })
  // A value the URL check refused already (URL.parse answers null) is not refused twice, nor parsed by a throwing `new URL`.
  .refine(
    (url) => {
      const parsed = URL.parse(url);
      return parsed === null || (/\/v1\/?$/.test(parsed.pathname) && !/[?#]/.test(url));
    },
    { error: BASE_URL_FORM },
  );

export const Connection = z.strictObject({
  baseUrl: BaseUrl.optional(),
  apiKey: z.string().min(1).optional(),
});
export type Connection = z.infer<typeof Connection>;

interface ConfigSource {
  get(key: string): string | undefined;
}

let stackConfig: Connection & {
  maxRetries?: string | undefined;
  retryBaseDelayMs?: string | undefined;
  requestDeadlineMs?: string | undefined;
  maxRequestsPerSecond?: string | undefined;
} = {};
const clients = new Map<string, GmsClient>();
/** The process's one limiter, made for the first client that needs it; another rate (a new configuration) makes another. */
let rateLimiter: RequestRateLimiter | undefined;
/** The adaptive pacer of each service (by base URL) the process talks to, shared by every client of it; its changes of rate go to the debug log. */
const pacers = new Map<string, AdaptivePacer>();

function pacerFor(baseUrl: string): AdaptivePacer {
  let pacer = pacers.get(baseUrl);
  if (!pacer) pacers.set(baseUrl, (pacer = new AdaptivePacer({ onChange: logPacerChange })));
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
  stackConfig = {
    baseUrl: config.get("gms:baseUrl"),
    apiKey: config.get("gms:apiKey"),
    maxRetries: config.get("gms:maxRetries"),
    retryBaseDelayMs: config.get("gms:retryBaseDelayMs"),
    requestDeadlineMs: config.get("gms:requestDeadlineMs"),
    maxRequestsPerSecond: config.get("gms:maxRequestsPerSecond"),
  };
}

/** A whole number from stack config or the environment, or undefined when neither sets it. */
function wholeNumber(configKey: string, configValue: string | undefined, envName: string): number | undefined {
  const text = configValue ?? process.env[envName];
  if (text === undefined || text === "") return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) {
    // A stack's config value may be a secret, which the provider cannot tell here: only the environment's is shown.
    throw new ConfigurationError(
      configValue === undefined
        ? `${envName} must be a whole number of 0 or more, not "${text}"`
        : `${configKey} must be a whole number of 0 or more`,
    );
  }
  return value;
}

export const REQUESTS_PER_SECOND_FORM = "must be a number of requests per second above 0, for example 5 or 0.5";

/** Whether a text is a rate `gms:maxRequestsPerSecond` takes: a plain decimal number above 0. */
export const isRequestsPerSecond = (text: string): boolean => /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(text.trim()) && Number(text) > 0;

/** The process's request rate from stack config or the environment, or undefined when neither sets it. */
function requestsPerSecond(): number | undefined {
  const configValue = stackConfig.maxRequestsPerSecond;
  const text = configValue ?? process.env.GMS_MAX_REQUESTS_PER_SECOND;
  if (text === undefined || text === "") return undefined;
  if (!isRequestsPerSecond(text)) {
    const source = configValue === undefined ? "GMS_MAX_REQUESTS_PER_SECOND" : "gms:maxRequestsPerSecond";
    // A stack's config value may be a secret, which the provider cannot tell here: only the environment's is shown.
    throw new ConfigurationError(`${source} ${REQUESTS_PER_SECOND_FORM}${configValue === undefined ? `, not "${text}"` : ""}`);
  }
  return Number(text);
}

/** The limiter every client of the process shares, for the configured rate; undefined without one. */
function sharedRateLimiter(): RequestRateLimiter | undefined {
  const rate = requestsPerSecond();
  if (rate === undefined) return undefined;
  if (rateLimiter?.requestsPerSecond !== rate) rateLimiter = new RequestRateLimiter(rate);
  return rateLimiter;
}

export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError";
}

/** The service a connection reaches (its own base URL, else the stack's, else the environment's), without a trailing slash. */
export const effectiveBaseUrl = (connection: Connection | undefined): string | undefined =>
  (connection?.baseUrl ?? stackConfig.baseUrl ?? process.env.GMS_BASE_URL)?.replace(/\/+$/, "");

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
  connection?.apiKey ?? stackConfig.apiKey ?? process.env.GMS_API_KEY;

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
  const baseUrl = effectiveBaseUrl(connection);
  if (baseUrl && !BaseUrl.safeParse(baseUrl).success) {
    const source =
      connection?.baseUrl !== undefined ? "connection.baseUrl" : stackConfig.baseUrl !== undefined ? "gms:baseUrl" : "GMS_BASE_URL";
    // The connection is a secret input, and a stack's config value may be one: only the environment's value is shown.
    throw new ConfigurationError(`${source} ${BASE_URL_FORM}${source === "GMS_BASE_URL" ? `; it is ${JSON.stringify(baseUrl)}` : ""}`);
  }
  const apiKey = effectiveApiKey(connection);
  if (!baseUrl) throw new ConfigurationError(NO_BASE_URL);
  if (!apiKey) throw new ConfigurationError(NO_API_KEY);
  const cacheKey = `${baseUrl}\n${createHash("sha256").update(apiKey).digest("hex")}`;
  let client = clients.get(cacheKey);
  if (!client) {
    const maxRetries = wholeNumber("gms:maxRetries", stackConfig.maxRetries, "GMS_MAX_RETRIES");
    const baseDelayMs = wholeNumber("gms:retryBaseDelayMs", stackConfig.retryBaseDelayMs, "GMS_RETRY_BASE_DELAY_MS");
    const requestDeadlineMs = wholeNumber("gms:requestDeadlineMs", stackConfig.requestDeadlineMs, "GMS_REQUEST_DEADLINE_MS");
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
