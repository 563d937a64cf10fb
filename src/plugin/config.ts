/**
 * The provider's configuration: `baseUrl`, secret `apiKey`, `maxRetries`, `retryBaseDelayMs`,
 * `requestDeadlineMs` and `maxRequestsPerSecond`, as the dynamic resources read them from stack config (`gms:<key>`), falling back to
 * the same environment variables. CheckConfig reports a bad value as a failure naming the field; Configure
 * hands the values to the connection module, where every client the kinds use is made.
 *
 * The engine starts one plugin process per provider instance (the default provider and each explicit one),
 * so the configuration is the process's: two providers for two workspaces are two processes.
 */
import {
  BaseUrl,
  ConfigurationError,
  REQUESTS_PER_SECOND_FORM,
  clientFor,
  configure as configureConnection,
  isRequestsPerSecond,
  sameWorkspace,
} from "../provider/connection";
import { containsUnknown, UNKNOWN } from "../provider/values";
import { type DiffResult, PropertyDiffKind } from "./router";
import { conceal, type Props, reveal } from "./wire";

export const CONFIG_KEYS = ["baseUrl", "apiKey", "maxRetries", "retryBaseDelayMs", "requestDeadlineMs", "maxRequestsPerSecond"] as const;
const WHOLE_NUMBERS = new Set<string>(["maxRetries", "retryBaseDelayMs", "requestDeadlineMs"]);

/** The text of a config value: config files hold strings, an explicit provider's inputs may hold numbers. */
const textOf = (value: unknown): string | undefined =>
  value === undefined || value === null ? undefined : typeof value === "string" ? value : JSON.stringify(value);

/** Checks the provider's inputs; keys it does not know (the engine's `version`, say) pass as they are. */
export function checkConfig(news: Props): { inputs: Props; failures: { property: string; reason: string }[] } {
  const { values, secretNames } = reveal(news);
  const failures: { property: string; reason: string }[] = [];
  // The value a failure shows, unless it is a secret.
  const not = (key: string) => (secretNames.has(key) ? "" : `, not ${JSON.stringify(values[key])}`);
  for (const key of CONFIG_KEYS) {
    const value = values[key];
    // Unknown during a preview: checked when it is known. A list or an object is no setting's form, unknown parts or not.
    if (value === undefined || value === null || value === UNKNOWN) continue;
    if (typeof value === "object") {
      failures.push({ property: key, reason: `gms:${key} must be a single value, not ${Array.isArray(value) ? "a list" : "an object"}` });
    } else if (key === "baseUrl") {
      const parsed = BaseUrl.safeParse(value);
      if (!parsed.success)
        failures.push({ property: key, reason: `gms:baseUrl ${parsed.error.issues[0]?.message ?? "is not a valid URL"}` });
    } else if (key === "apiKey") {
      if (typeof value !== "string" || value === "") failures.push({ property: key, reason: "gms:apiKey must be a non-empty string" });
    } else if (WHOLE_NUMBERS.has(key)) {
      const text = textOf(value)!;
      if (!/^\d+$/.test(text)) failures.push({ property: key, reason: `gms:${key} must be a whole number of 0 or more${not(key)}` });
    } else if (key === "maxRequestsPerSecond") {
      if (!isRequestsPerSecond(textOf(value)!))
        failures.push({ property: key, reason: `gms:${key} ${REQUESTS_PER_SECOND_FORM}${not(key)}` });
    }
  }
  return { inputs: conceal(values, new Set([...secretNames, "apiKey"])), failures };
}

/**
 * The configuration from a ConfigureRequest: its `args` (plain keys, values possibly secret), else its
 * `variables` (`gms:config:<key>` or `gms:<key>`, strings).
 */
export function configFrom(
  args: Props | undefined,
  variables: ReadonlyMap<string, string> | Record<string, string>,
): Record<string, string> {
  const config: Record<string, string> = {};
  if (args && Object.keys(args).length > 0) {
    const { values } = reveal(args);
    for (const key of CONFIG_KEYS) {
      const text = textOf(values[key]);
      if (text !== undefined) config[key] = text;
    }
    return config;
  }
  const entries = variables instanceof Map ? [...variables.entries()] : Object.entries(variables);
  for (const [name, value] of entries) {
    const key = name.replace(/^gms:(config:)?/, "");
    if ((CONFIG_KEYS as readonly string[]).includes(key) && name.startsWith("gms:")) config[key] = value;
  }
  return config;
}

/** The keys of a ConfigureRequest's `args` whose values a preview does not know yet (an explicit provider's outputs). */
export function unknownConfigKeys(args: Props | undefined): string[] {
  if (!args) return [];
  const { values } = reveal(args);
  return CONFIG_KEYS.filter((key) => values[key] !== undefined && containsUnknown(values[key]));
}

/**
 * Makes the configuration the one every client of this process is made with, as the dynamic provider's `configure`
 * does; `unknownKeys` are not known yet (see `unknownConfigKeys`).
 */
export function applyConfig(config: Record<string, string>, unknownKeys: readonly string[] = []): void {
  configureConnection({ get: (key: string) => (key.startsWith("gms:") ? config[key.slice(4)] : undefined) }, unknownKeys);
}

/**
 * DiffConfig: what a change of the provider's configuration means for its resources, as a `connection` change
 * means for a dynamic resource. Another service (`baseUrl`) is another object: the provider is replaced, so
 * the engine replaces each of its resources (created there, deleted here with the old configuration). Another
 * `apiKey` is an update when both keys select the same workspace (a rotated key), or when the old key no longer
 * works (revoked after rotation: nothing could delete with it); a key of another workspace replaces. Retry,
 * deadline and rate settings are updates. An unknown new value (preview) is an update, as the dynamic resources decide.
 */
export async function diffConfig(olds: Props, news: Props): Promise<DiffResult> {
  const before = reveal(olds).values;
  const after = reveal(news).values;
  const detailedDiff: DiffResult["detailedDiff"] = {};
  const replaces: string[] = [];
  for (const key of CONFIG_KEYS) {
    if (containsUnknown(after[key])) {
      detailedDiff[key] = { kind: PropertyDiffKind.UPDATE, inputDiff: true };
      continue;
    }
    const old = textOf(before[key]);
    const next = textOf(after[key]);
    if (old === next) continue;
    const moves = key === "baseUrl" ? baseUrlOf(old) !== baseUrlOf(next) : key === "apiKey" && (await otherWorkspace(before, after));
    if (moves) replaces.push(key);
    const change = old === undefined ? "ADD" : next === undefined ? "DELETE" : "UPDATE";
    detailedDiff[key] = { kind: PropertyDiffKind[moves ? (`${change}_REPLACE` as const) : change], inputDiff: true };
  }
  const changes = Object.keys(detailedDiff).length > 0;
  return { changes, replaces, deleteBeforeReplace: false, detailedDiff };
}

/** The service a configuration reaches, as its clients are made: the value, else GMS_BASE_URL, without a trailing slash. */
const baseUrlOf = (value: string | undefined) => (value ?? process.env.GMS_BASE_URL)?.replace(/\/+$/, "");

/** Whether the new API key selects another workspace than the old one (false when either cannot tell: a key refused). */
async function otherWorkspace(before: Props, after: Props): Promise<boolean> {
  const clientOf = (values: Props) =>
    clientFor({ baseUrl: baseUrlOf(textOf(values.baseUrl)), apiKey: textOf(values.apiKey) ?? process.env.GMS_API_KEY });
  try {
    return (await sameWorkspace(clientOf(before), clientOf(after))) === false;
  } catch (error) {
    if (error instanceof ConfigurationError) return false;
    throw error;
  }
}
