/**
 * Where a pending create's lookup goes: the service and key its provider sent the create with, found as the provider
 * finds them (src/provider/session.ts): the resource's own `connection` input, then its provider's configuration,
 * then GMS_BASE_URL / GMS_API_KEY from the environment. The provider's configuration is the provider resource the
 * pending create names, as the checkpoint holds it: a native resource's `pulumi:providers:gms` (default or explicit,
 * inputs `baseUrl`, `apiKey`, ...), a dynamic resource's `pulumi:providers:pulumi-nodejs`, whose inputs are the stack's
 * whole configuration (`gms:baseUrl`, `gms:apiKey`, ...), as its `configure` gets it. The values are the revealed
 * export's, in memory only.
 */
import { SETTINGS, settingText } from "../settings";
import { PROVIDER_TYPE } from "../provider/tokens";
import type { PendingCreate, StackReading } from "./stack";

export interface ServiceSettings {
  baseUrl: string;
  apiKey: string;
  /** The service's deadline for a request (`gms:requestDeadlineMs`): a create in flight may land until it has passed. */
  requestDeadlineMs: number | undefined;
  maxRetries: number | undefined;
  /** The rate the provider was held to (`gms:maxRequestsPerSecond`): recover's lookups keep to it too. */
  maxRequestsPerSecond: number | undefined;
}

const text = (value: unknown): string | undefined => {
  const written = settingText(value);
  return written === "" ? undefined : written;
};

/** A number setting's value, or undefined when it is not of its form (the provider would have refused it). */
const numberOf = (name: "requestDeadlineMs" | "maxRetries" | "maxRequestsPerSecond", value: string | undefined): number | undefined =>
  value === undefined ? undefined : SETTINGS[name].parse(value);

/** The service settings of a pending create, or why there are none (what to set, in the user's terms). */
export function serviceOf(create: PendingCreate, stack: StackReading, env: NodeJS.ProcessEnv): ServiceSettings | { missing: string } {
  const connection = (create.inputs.connection ?? {}) as { baseUrl?: unknown; apiKey?: unknown };
  const provider = stack.providerOf(create.provider);
  // The plugin's provider takes its configuration as its own inputs; the dynamic-provider host, the stack's, by their config keys.
  const prefix = provider?.type === PROVIDER_TYPE ? "" : "gms:";
  const setting = (key: string) => text(provider?.inputs[`${prefix}${key}`]);
  const baseUrl = text(connection.baseUrl) ?? setting("baseUrl") ?? env.GMS_BASE_URL;
  const apiKey = text(connection.apiKey) ?? setting("apiKey") ?? env.GMS_API_KEY;
  if (!baseUrl)
    return { missing: "no service URL: the resource has no connection.baseUrl, its provider no gms:baseUrl, and GMS_BASE_URL is not set" };
  if (SETTINGS.baseUrl.parse(baseUrl) === undefined) return { missing: `the service URL it was created with is not one (${baseUrl})` };
  if (!apiKey)
    return { missing: "no API key: the resource has no connection.apiKey, its provider no gms:apiKey, and GMS_API_KEY is not set" };
  return {
    baseUrl: baseUrl.replace(/\/+$/, ""),
    apiKey,
    requestDeadlineMs: numberOf("requestDeadlineMs", setting("requestDeadlineMs") ?? env[SETTINGS.requestDeadlineMs.env]),
    maxRetries: numberOf("maxRetries", setting("maxRetries") ?? env[SETTINGS.maxRetries.env]),
    maxRequestsPerSecond: numberOf("maxRequestsPerSecond", setting("maxRequestsPerSecond") ?? env[SETTINGS.maxRequestsPerSecond.env]),
  };
}
