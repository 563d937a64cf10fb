/**
 * A session: one configuration of the provider and what is made from it, the clients of each workspace connection
 * and the stack's claims. The dynamic-provider host's process has one (src/provider/index.ts), the plugin's server
 * one (src/plugin/server.ts), a program's lookups one (src/lookups.ts); a test makes its own.
 *
 * Where a resource's API calls go: credentials come from, in order, the resource's own `connection` input (a secret
 * input, for programs that manage several workspaces), the configuration (`gms:baseUrl`, secret `gms:apiKey`), then
 * `GMS_BASE_URL` / `GMS_API_KEY`. They never enter the serialized provider: `configure` runs inside the provider
 * process. The other settings (src/settings.ts) are read from the configuration, else the environment, when a
 * client is made.
 */
import { createHash } from "node:crypto";
import { AdaptivePacer, AuthenticationError, GmsClient, RequestRateLimiter } from "../client";
import {
  ConfigurationError,
  configThenEnv,
  configKey,
  SETTING_NAMES,
  type SettingName,
  type SettingSource,
  settingValue,
} from "../settings";
import type { Connection } from "./connection";
import { currentWorkspace } from "./current-workspace";
import { logPacerChange, logRequest } from "./request-log";

/**
 * What every session of the process shares, decided here only:
 * - one limiter for `gms:maxRequestsPerSecond`: the setting holds the process's requests to a rate, whichever session,
 *   resource or workspace sends them (a provider process is one API key's client as the service counts it, as often
 *   as not), so a second session must not get a budget of its own. Another rate (a new configuration) makes another.
 * - one adaptive pacer per service URL: what it learns is what that service accepts, which every client of the
 *   service meets alike; a session that started afresh would relearn it through the refusals the pacer exists to avoid.
 */
const processWide = {
  limiter: undefined as RequestRateLimiter | undefined,
  pacers: new Map<string, AdaptivePacer>(),

  limiterFor(rate: number | undefined): RequestRateLimiter | undefined {
    if (rate === undefined) return undefined;
    if (this.limiter?.requestsPerSecond !== rate) this.limiter = new RequestRateLimiter(rate);
    return this.limiter;
  },

  pacerFor(baseUrl: string): AdaptivePacer {
    let pacer = this.pacers.get(baseUrl);
    if (!pacer) this.pacers.set(baseUrl, (pacer = new AdaptivePacer({ onChange: logPacerChange })));
    return pacer;
  },
};

/** The configuration as the dynamic-provider host hands it over: the stack's whole config, by `gms:<name>` keys. */
export interface ConfigSource {
  get(key: string): string | undefined;
}

/** The texts of the settings a config source sets. */
export function settingTexts(config: ConfigSource): Partial<Record<SettingName, string>> {
  const texts: Partial<Record<SettingName, string>> = {};
  for (const name of SETTING_NAMES) {
    const text = config.get(configKey(name));
    if (text !== undefined) texts[name] = text;
  }
  return texts;
}

const NO_BASE_URL =
  "No service URL: set `pulumi config set gms:baseUrl https://.../v1`, or GMS_BASE_URL, or the resource's connection.baseUrl";
const NO_API_KEY = "No API key: set `pulumi config set --secret gms:apiKey ...`, or GMS_API_KEY, or the resource's connection.apiKey";

export class Session {
  #config: Partial<Record<SettingName, string>> = {};
  /** Settings whose value is not known yet (an explicit provider's output, in a preview): not taken for missing. */
  #unknown = new Set<string>();
  /** One keep-alive client per distinct workspace connection, by service URL and a hash of the key. */
  readonly #clients = new Map<string, GmsClient>();
  /** The workspace each client's key selects (`GET /workspaces/current`), asked once per client. */
  readonly #workspaces = new WeakMap<GmsClient, Promise<string>>();
  /**
   * The stack's claims, by workspace connection (as the clients): GUIDs the session's resources of that service and key
   * created, adopted or hold. A create whose answer was lost never takes one of them for its own. The client of the
   * connection carries its set (`GmsClient.claimed`), for the create's own lookup (../client/create.ts).
   */
  readonly #claims = new Map<string, Set<string>>();

  /**
   * Takes a configuration: the dynamic-provider host's, once per `__provider` text; the plugin's Configure, with the
   * settings (`baseUrl`, `apiKey`) a preview does not know yet.
   */
  configure(texts: Partial<Record<SettingName, string>>, unknownSettings: readonly string[] = []): void {
    this.#config = { ...texts };
    this.#unknown = new Set(unknownSettings);
  }

  /** A setting's sources below a connection's: the configuration, then the environment. */
  #sources(name: SettingName): SettingSource[] {
    return configThenEnv(name, this.#config[name]);
  }

  /** The first text a connection, the configuration or the environment gives a setting. */
  #text(name: "baseUrl" | "apiKey", connection: Connection | undefined): string | undefined {
    return [connection?.[name], ...this.#sources(name).map((source) => source.text)].find((text) => text !== undefined);
  }

  /** The service a connection reaches (its own base URL, else the configuration's, else the environment's), without a trailing slash. */
  effectiveBaseUrl(connection: Connection | undefined): string | undefined {
    return this.#text("baseUrl", connection)?.replace(/\/+$/, "");
  }

  /**
   * What a resource of `connection` cannot reach the service without, each named with its three sources: checked by
   * Check, so that a preview fails as `up` would, sending nothing. A setting a preview does not know yet is not missing.
   */
  missingSettings(connection: Connection | undefined): string[] {
    return [
      ...(this.effectiveBaseUrl(connection) || this.#unknown.has("baseUrl") ? [] : [NO_BASE_URL]),
      ...(this.#text("apiKey", connection) || this.#unknown.has("apiKey") ? [] : [NO_API_KEY]),
    ];
  }

  /** The session's client of a connection, made once per service and key. */
  clientFor(connection: Connection | undefined): GmsClient {
    // The connection is a secret input, and the configuration's value may be one: only the environment's is shown.
    const baseUrl = settingValue("baseUrl", [
      { label: "connection.baseUrl", text: connection?.baseUrl, shown: false },
      ...this.#sources("baseUrl"),
    ]);
    const apiKey = this.#text("apiKey", connection);
    if (!baseUrl) throw new ConfigurationError(NO_BASE_URL);
    if (!apiKey) throw new ConfigurationError(NO_API_KEY);
    const serviceUrl = baseUrl.replace(/\/+$/, "");
    const cacheKey = `${serviceUrl}\n${createHash("sha256").update(apiKey).digest("hex")}`;
    let client = this.#clients.get(cacheKey);
    if (!client) {
      const baseDelayMs = settingValue("retryBaseDelayMs", this.#sources("retryBaseDelayMs"));
      client = new GmsClient({
        baseUrl: serviceUrl,
        apiKey,
        maxRetries: settingValue("maxRetries", this.#sources("maxRetries")),
        requestDeadlineMs: settingValue("requestDeadlineMs", this.#sources("requestDeadlineMs")),
        retryTiming: baseDelayMs === undefined ? {} : { baseDelayMs },
        rateLimiter: processWide.limiterFor(settingValue("maxRequestsPerSecond", this.#sources("maxRequestsPerSecond"))),
        pacer: processWide.pacerFor(serviceUrl),
        claimed: this.#claimsOf(cacheKey),
        onRequest: logRequest,
      });
      this.#clients.set(cacheKey, client);
    }
    return client;
  }

  #claimsOf(cacheKey: string): Set<string> {
    let claims = this.#claims.get(cacheKey);
    if (!claims) this.#claims.set(cacheKey, (claims = new Set()));
    return claims;
  }

  /**
   * Whether two clients' keys select the same workspace (`GET /workspaces/current`, once per client), or
   * undefined when either key is refused.
   */
  async sameWorkspace(first: GmsClient, second: GmsClient): Promise<boolean | undefined> {
    const workspaceOf = (client: GmsClient) => {
      let guid = this.#workspaces.get(client);
      if (!guid) {
        guid = currentWorkspace(client).then((workspace) => workspace.guid);
        this.#workspaces.set(client, guid);
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

  /** Closes the session's clients (their keep-alive connections). */
  async close(): Promise<void> {
    await Promise.all([...this.#clients.values()].map((client) => client.close()));
    this.#clients.clear();
  }
}
