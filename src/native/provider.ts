/**
 * The native provider resource, `pulumi:providers:gms`: an explicit instance of the plugin with its own
 * configuration, for resources given `{ provider }` (several workspaces in one program, say). Its inputs are
 * the package's config variables (`gms:baseUrl`, `gms:apiKey`, ... in schema.json); a default provider reads
 * them from stack config instead. What the program leaves out, the plugin takes from the environment
 * (GMS_BASE_URL, GMS_API_KEY, ...), so no credential from the environment is written into state here.
 */
import * as pulumi from "@pulumi/pulumi";
import { PACKAGE, PROVIDER_TYPE } from "../provider/tokens";
import { SETTING_NAMES, SETTINGS } from "../settings";
import { withPluginVersion } from "./resource";

export interface ProviderArgs {
  /** The service's base URL, ending in `/v1`. Defaults to GMS_BASE_URL. */
  baseUrl?: pulumi.Input<string>;
  /** The API key; it selects the workspace. Stored as a secret. Defaults to GMS_API_KEY. */
  apiKey?: pulumi.Input<string>;
  /** How often a failed request is sent again. Default 3 (GMS_MAX_RETRIES). */
  maxRetries?: pulumi.Input<number>;
  /** The first retry's backoff ceiling in milliseconds, doubling per retry up to 8 s. Default 500 (GMS_RETRY_BASE_DELAY_MS). */
  retryBaseDelayMs?: pulumi.Input<number>;
  /** The service's deadline for a request in milliseconds, which a lost create's lookup waits out. Default 60000 (GMS_REQUEST_DEADLINE_MS). */
  requestDeadlineMs?: pulumi.Input<number>;
  /**
   * The most requests a second the provider sends, retries included (above 0; 0.5 is one every two seconds).
   * Default no limit (GMS_MAX_REQUESTS_PER_SECOND).
   */
  maxRequestsPerSecond?: pulumi.Input<number>;
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
