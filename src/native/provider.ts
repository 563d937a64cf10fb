/**
 * The native provider resource, `pulumi:providers:gms`: an explicit instance of the plugin with its own
 * configuration, for resources given `{ provider }` (several workspaces in one program, say). Its inputs are
 * the package's config variables (`gms:baseUrl`, `gms:apiKey`, ... in schema.json); a default provider reads
 * them from stack config instead. What the program leaves out, the plugin takes from the environment
 * (GMS_BASE_URL, GMS_API_KEY, ...), so no credential from the environment is written into state here.
 */
import * as pulumi from "@pulumi/pulumi";
import { PACKAGE, PROVIDER_TYPE } from "../provider/tokens";
import { SETTING_NAMES, SETTINGS, type SettingValue } from "../settings";
import { withPluginVersion } from "./resource";

/**
 * The provider's inputs: the package's settings (src/settings.ts), each typed as its value parses. Each comment is the
 * setting's description in schema.json (settingDescription), which the other languages' SDKs carry;
 * test/native/provider-args.test.ts holds them equal, and the members to the settings.
 */
export interface ProviderArgs {
  /** The service's base URL, ending in `/v1`. Defaults to the GMS_BASE_URL environment variable. */
  baseUrl?: pulumi.Input<SettingValue<"baseUrl">>;
  /**
   * The API key; it selects the workspace. Set it with `pulumi config set --secret gms:apiKey ...`. Defaults to the
   * GMS_API_KEY environment variable.
   */
  apiKey?: pulumi.Input<SettingValue<"apiKey">>;
  /**
   * How often a failed request is sent again (idempotent requests, and creates whose lost answer proved nothing was
   * made). Default 3.
   */
  maxRetries?: pulumi.Input<SettingValue<"maxRetries">>;
  /**
   * The first retry's backoff ceiling in milliseconds; it doubles per retry up to 8 s, with full jitter, unless the
   * service sends Retry-After. Default 500.
   */
  retryBaseDelayMs?: pulumi.Input<SettingValue<"retryBaseDelayMs">>;
  /**
   * The service's deadline for a request in milliseconds: a create whose answer was lost while the service may still
   * be running it (a timeout, a connection lost after sending, a 502 or 504) is looked up until then, and sent again
   * only once it has passed with nothing found. Default 60000.
   */
  requestDeadlineMs?: pulumi.Input<SettingValue<"requestDeadlineMs">>;
  /**
   * The most requests a second the provider sends, a number above 0 (0.5: one every two seconds): every request of the
   * provider process, retries included, waits for its turn, so a service that limits its API key to that rate need
   * not refuse any. Default: no limit.
   */
  maxRequestsPerSecond?: pulumi.Input<SettingValue<"maxRequestsPerSecond">>;
}

/** The native provider of the `gms` package, configured by the program. */
export class Provider extends pulumi.ProviderResource {
  /** The base URL the provider was given, if any. */
  declare readonly baseUrl: pulumi.Output<string | undefined>;
  /** The API key the provider was given, if any (secret). */
  declare readonly apiKey: pulumi.Output<string | undefined>;

  /** Whether `obj` is a `gms` provider resource, even from another copy of the package. */
  static override isInstance(obj: unknown): obj is Provider {
    return pulumi.CustomResource.isInstance(obj) && pulumi.resourceType(obj) === PROVIDER_TYPE;
  }

  constructor(name: string, args: ProviderArgs = {}, opts: pulumi.ResourceOptions = {}) {
    const props: pulumi.Inputs = {};
    const secrets: string[] = [];
    // Each setting's type and secrecy as schema.json declares them (src/settings.ts). A provider's inputs travel as stack
    // config does, as strings: other types are sent JSON-encoded, as Pulumi's generated SDKs send them.
    for (const input of SETTING_NAMES) {
      const spec = SETTINGS[input];
      const value = args[input];
      if (spec.secret) secrets.push(input);
      if (value === undefined || value === null) {
        props[input] = undefined;
        continue;
      }
      const encoded = spec.type === "string" ? value : pulumi.output(value).apply((known) => JSON.stringify(known));
      props[input] = spec.secret ? pulumi.secret(encoded) : encoded;
    }
    const options: pulumi.CustomResourceOptions = withPluginVersion(opts);
    options.additionalSecretOutputs = [...new Set([...(options.additionalSecretOutputs ?? []), ...secrets])];
    super(PACKAGE, name, props, options);
  }
}
