/** How the provider words failures for a user: in their terms, without request noise or secrets. */
import { GmsError, ValidationError } from "../client";

/** What a failed request says, without the request label's noise for a user. */
export const failureText = (error: unknown): string =>
  error instanceof GmsError && error.status !== undefined && error.status >= 400
    ? `the service answered ${error.status} ${error.detail}`
    : error instanceof Error
      ? error.message
      : String(error);

/** What could not be done (`Cannot create App "x"`), what the service answered, then advice when there is any. */
const described = (what: string, error: unknown, advice: string | undefined): string => `${what}: ${failureText(error)}.${advice ? ` ${advice}` : ""}`;

/** A failed operation in the user's terms; the service's answer stays as the cause. */
export const failure = (what: string, error: unknown, advice?: string): Error => new Error(described(what, error, advice), { cause: error });

/**
 * An error for a request that carried a credential. The service's error texts are not known to leave
 * submitted values out, so the key is blanked should one ever echo it; no cause is kept for the same reason.
 */
export const keyRedacted = (message: string, key: string | undefined): Error => new Error(key ? message.replaceAll(key, "[secret]") : message);

/** `failure` for a request that carried the credential `key`: worded the same, the key blanked, no cause. */
export const keyRedactedFailure = (key: string | undefined, what: string, error: unknown, advice?: string): Error => keyRedacted(described(what, error, advice), key);

/** What to check when the service refuses a Model's or a ProviderConnection's provider type or endpoint. */
export const providerAdvice = (error: unknown, url: string | null | undefined): string | undefined =>
  error instanceof ValidationError
    ? `Check that provider names a provider type the service supports (for example openai or anthropic)${url ? " and that url is an http(s) URL the service accepts" : ""}.`
    : undefined;

/**
 * A create or update that named an object the service could not find (its 404), in the program's terms:
 * which object, and what to set instead. The service's answer stays as the cause.
 */
export const notInWorkspace = (what: string, missing: string, advice: string, cause: unknown): Error =>
  new Error(`${what}: ${missing} does not exist in the workspace (or was deleted); ${advice}`, { cause });
