/** How the provider words failures for a user: in their terms, without request noise or secrets. */
import { GmsError } from "../client";

/** What a failed request says, without the request label's noise for a user. */
export const failureText = (error: unknown): string =>
  error instanceof GmsError && error.status !== undefined && error.status >= 400
    ? `the service answered ${error.status} ${error.detail}`
    : error instanceof Error
      ? error.message
      : String(error);

/**
 * An error for a request that carried a credential. The service's error texts are not known to leave
 * submitted values out, so the key is blanked should one ever echo it; no cause is kept for the same reason.
 */
export const keyRedacted = (message: string, key: string | undefined): Error => new Error(key ? message.replaceAll(key, "[secret]") : message);
