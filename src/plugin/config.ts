/**
 * The provider's configuration: `baseUrl`, secret `apiKey`, `maxRetries`, `retryBaseDelayMs` and
 * `requestDeadlineMs`, as the dynamic resources read them from stack config (`gms:<key>`), falling back to
 * the same environment variables. CheckConfig reports a bad value as a failure naming the field; Configure
 * hands the values to the connection module, where every client the kinds use is made.
 *
 * The engine starts one plugin process per provider instance (the default provider and each explicit one),
 * so the configuration is the process's: two providers for two workspaces are two processes.
 */
import { BaseUrl, configure as configureConnection } from "../provider/connection";
import { containsUnknown } from "../provider/values";
import { conceal, type Props, reveal } from "./wire";

export const CONFIG_KEYS = ["baseUrl", "apiKey", "maxRetries", "retryBaseDelayMs", "requestDeadlineMs"] as const;
const WHOLE_NUMBERS = new Set<string>(["maxRetries", "retryBaseDelayMs", "requestDeadlineMs"]);

/** The text of a config value: config files hold strings, an explicit provider's inputs may hold numbers. */
const textOf = (value: unknown): string | undefined =>
  value === undefined || value === null ? undefined : typeof value === "string" ? value : JSON.stringify(value);

/** Checks the provider's inputs; keys it does not know (the engine's `version`, say) pass as they are. */
export function checkConfig(news: Props): { inputs: Props; failures: { property: string; reason: string }[] } {
  const { values, secretNames } = reveal(news);
  const failures: { property: string; reason: string }[] = [];
  for (const key of CONFIG_KEYS) {
    const value = values[key];
    if (value === undefined || value === null || containsUnknown(value)) continue;
    if (key === "baseUrl") {
      const parsed = BaseUrl.safeParse(value);
      if (!parsed.success)
        failures.push({ property: key, reason: `gms:baseUrl ${parsed.error.issues[0]?.message ?? "is not a valid URL"}` });
    } else if (key === "apiKey") {
      if (typeof value !== "string" || value === "") failures.push({ property: key, reason: "gms:apiKey must be a non-empty string" });
    } else if (WHOLE_NUMBERS.has(key)) {
      const text = textOf(value)!;
      if (!/^\d+$/.test(text))
        failures.push({ property: key, reason: `gms:${key} must be a whole number of 0 or more, not ${JSON.stringify(value)}` });
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

/** Makes the configuration the one every client of this process is made with, as the dynamic provider's `configure` does. */
export function applyConfig(config: Record<string, string>): void {
  configureConnection({ get: (key: string) => (key.startsWith("gms:") ? config[key.slice(4)] : undefined) });
}
