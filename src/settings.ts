/**
 * The provider's settings, each declared once: its config key (`gms:<name>`), environment variable, type, secrecy,
 * default, the form a value must have, and its descriptions. From this one table come the plugin's CheckConfig and
 * Configure (src/plugin/config.ts), the dynamic provider's configuration (src/provider/session.ts), schema.json's
 * `config` and the explicit provider's inputs (src/schema/package-schema.ts), the settings table of
 * docs/installation-configuration.md (`npm run docs`) and the defaults the client runs with (src/client/).
 * It imports nothing of the package, so that every layer may read it.
 */
import { z } from "zod";

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

/** Whether a text is a rate `gms:maxRequestsPerSecond` takes: a plain decimal number above 0. */
const isRequestsPerSecond = (text: string): boolean => /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(text.trim()) && Number(text) > 0;

/** A setting's value as config files hold it (a string), or as an explicit provider's inputs may (a number, a boolean). */
export type SettingInput = string | number | boolean;

/** The text of a setting's value: config files hold strings, an explicit provider's inputs may hold numbers. */
export const settingText = (value: unknown): string | undefined =>
  value === undefined || value === null ? undefined : typeof value === "string" ? value : JSON.stringify(value);

interface SettingSpec<T extends string | number> {
  /** The environment variable the provider falls back to when the stack's config does not set it. */
  readonly env: string;
  /** As schema.json types it. */
  readonly type: T extends string ? "string" : "integer" | "number";
  readonly secret: boolean;
  /** The value the code uses when neither the config nor the environment sets one. */
  readonly default?: T;
  /** Without a default: what leaving it unset means ("required", "no limit"). */
  readonly unset?: string;
  /** What a value must be, after the setting's name: "must be a whole number of 0 or more". */
  readonly form: string;
  /** The value, or undefined when it is not of the setting's form. */
  readonly parse: (value: SettingInput) => T | undefined;
  /** schema.json's (and so the SDKs') description, without what the default is (added from `default` or `unset`). */
  readonly summary: string;
  /** The settings table's "what it does" (docs/installation-configuration.md). */
  readonly docs: string;
}

const WHOLE_NUMBER_FORM = "must be a whole number of 0 or more";
const wholeNumber = (value: SettingInput): number | undefined => {
  const text = settingText(value)!;
  return /^\d+$/.test(text) ? Number(text) : undefined;
};

/** Each setting, by its name in the config (`gms:<name>`) and in an explicit provider's inputs. */
export const SETTINGS = {
  baseUrl: {
    env: "GMS_BASE_URL",
    type: "string",
    secret: false,
    unset: "required",
    form: BASE_URL_FORM,
    parse: (value) => (BaseUrl.safeParse(value).success ? (value as string) : undefined),
    summary: "The service's base URL, ending in `/v1`.",
    docs:
      "the service's base URL, ending in `/v1`. Another value for an existing stack replaces every resource (made in the new " +
      "service, deleted from the old one)",
  },
  apiKey: {
    env: "GMS_API_KEY",
    type: "string",
    secret: true,
    unset: "required",
    form: "must be a non-empty string",
    parse: (value) => (typeof value === "string" && value !== "" ? value : undefined),
    summary: "The API key; it selects the workspace. Set it with `pulumi config set --secret gms:apiKey ...`.",
    docs:
      "the API key; it selects the workspace. Set it with `pulumi config set --secret`. A rotated key of the same workspace " +
      "updates in place; a key of another workspace replaces every resource",
  },
  maxRetries: {
    env: "GMS_MAX_RETRIES",
    type: "integer",
    secret: false,
    default: 3,
    form: WHOLE_NUMBER_FORM,
    parse: wholeNumber,
    summary: "How often a failed request is sent again (idempotent requests, and creates whose lost answer proved nothing was made).",
    docs:
      "how often a failed request is sent again: idempotent requests, and creates that provably did not reach the service. A " +
      "rate-limit 429 (with `Retry-After`) is waited out apart from these, for up to 10 minutes per request in all; `0` sends " +
      "each request once, with no wait of any kind",
  },
  retryBaseDelayMs: {
    env: "GMS_RETRY_BASE_DELAY_MS",
    type: "integer",
    secret: false,
    default: 500,
    form: WHOLE_NUMBER_FORM,
    parse: wholeNumber,
    summary:
      "The first retry's backoff ceiling in milliseconds; it doubles per retry up to 8 s, with full jitter, unless the service " +
      "sends Retry-After.",
    docs:
      "the first retry's backoff ceiling in milliseconds; it doubles per retry up to 8 s, with full jitter, unless the service " +
      "sends `Retry-After`",
  },
  requestDeadlineMs: {
    env: "GMS_REQUEST_DEADLINE_MS",
    type: "integer",
    secret: false,
    // The usual timeout of load balancers and reverse proxies (nginx's `proxy_read_timeout`, AWS ALB's idle timeout).
    default: 60_000,
    form: WHOLE_NUMBER_FORM,
    parse: wholeNumber,
    summary:
      "The service's deadline for a request in milliseconds: a create whose answer was lost while the service may still be " +
      "running it (a timeout, a connection lost after sending, a 502 or 504) is looked up until then, and sent again only once " +
      "it has passed with nothing found.",
    docs:
      "the service's deadline for a request: a create whose answer was lost is looked up until then, and sent again only once " +
      "it has passed with nothing found",
  },
  maxRequestsPerSecond: {
    env: "GMS_MAX_REQUESTS_PER_SECOND",
    type: "number",
    secret: false,
    unset: "no limit",
    form: "must be a number of requests per second above 0, for example 5 or 0.5",
    parse: (value) => {
      const text = settingText(value)!;
      return isRequestsPerSecond(text) ? Number(text) : undefined;
    },
    summary:
      "The most requests a second the provider sends, a number above 0 (0.5: one every two seconds): every request of the " +
      "provider process, retries included, waits for its turn, so a service that limits its API key to that rate need not " +
      "refuse any.",
    docs:
      "the most requests a second the provider sends, a number above 0 (`0.5`: one every two seconds). One limit per provider " +
      "process, shared by all its resources and every workspace they reach; each request, retries included, waits for its " +
      "turn. Set it to the service's rate limit for your key, and a large stack meets no 429. Without it the provider paces " +
      "itself: a few requests in flight at first, more as the service keeps up, and at the service's first refusals (429 " +
      "with `Retry-After`) a rate learned from what it accepted, which the requests that waited then keep to, spread out " +
      "rather than all at once; with it, that pacing only ever goes slower",
  },
} as const satisfies {
  baseUrl: SettingSpec<string>;
  apiKey: SettingSpec<string>;
  maxRetries: SettingSpec<number>;
  retryBaseDelayMs: SettingSpec<number>;
  requestDeadlineMs: SettingSpec<number>;
  maxRequestsPerSecond: SettingSpec<number>;
};

export type SettingName = keyof typeof SETTINGS;
export type Setting = SettingSpec<string> | SettingSpec<number>;
/** A setting's value once parsed: a string or a number, as its type says. */
export type SettingValue<N extends SettingName> = ReturnType<(typeof SETTINGS)[N]["parse"]> & {};

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

export const configKey = (name: SettingName): string => `gms:${name}`;

/** schema.json's description of a setting: its summary, then what applies when it is not set. */
export function settingDescription(name: SettingName): string {
  const setting: Setting = SETTINGS[name];
  const otherwise =
    setting.default !== undefined
      ? `Default ${setting.default}.`
      : setting.unset === "required"
        ? `Defaults to the ${setting.env} environment variable.`
        : `Default: ${setting.unset}.`;
  return `${setting.summary} ${otherwise}`;
}

/** The settings table's default cell: the default, or what no value means. */
export const settingDefaultText = (name: SettingName): string => {
  const setting: Setting = SETTINGS[name];
  return setting.default !== undefined ? String(setting.default) : `none (${setting.unset})`;
};

export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError";
}

/** One place a setting's value may come from: its label in messages, its text, and whether a message may show the text. */
export interface SettingSource {
  label: string;
  text: string | undefined;
  /** False for a place that may hold a secret the provider cannot tell (a stack's config value, a connection input). */
  shown: boolean;
}

/** A setting's sources in their order: the stack's config, then the environment (whose value a message may show). */
export const configThenEnv = (name: SettingName, configText: string | undefined, env: NodeJS.ProcessEnv = process.env): SettingSource[] => [
  { label: configKey(name), text: configText, shown: false },
  { label: SETTINGS[name].env, text: env[SETTINGS[name].env], shown: true },
];

/**
 * A setting's value from the first of `sources` that sets it (an empty text is no value), or undefined when none does.
 * A value not of the setting's form is a ConfigurationError naming its source and the form, and the value only when
 * the source may show it.
 */
export function settingValue<N extends SettingName>(name: N, sources: readonly SettingSource[]): SettingValue<N> | undefined {
  const source = sources.find((each) => each.text !== undefined);
  if (source?.text === undefined || source.text === "") return undefined;
  const setting: Setting = SETTINGS[name];
  const value = setting.parse(source.text);
  if (value === undefined)
    throw new ConfigurationError(`${source.label} ${setting.form}${source.shown ? `, not ${JSON.stringify(source.text)}` : ""}`);
  return value as SettingValue<N>;
}
