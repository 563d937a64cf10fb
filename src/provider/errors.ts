/** How the provider words failures for a user: in their terms, without request noise or secrets. */
import { GmsError, MayExistError, ValidationError } from "../client";

/**
 * Every error the provider, the kinds and the workspace code raise for a user: its message in the user's terms,
 * and a stable `code` a program can test whatever the wording (listed in docs/provider.md, "Errors"). A failed
 * request keeps the client's code (`not_found`, `validation`, `rate_limited`, `timeout`, ...); the provider's
 * own conditions have their own (`adopt_not_found`, `wrong_workspace`, ...). A create that may have made its object
 * throws a `MayExistError` instead (../client/create.ts), which keeps what is known of the object.
 */
export class ProviderError extends Error {
  override readonly name: string = "ProviderError";

  constructor(
    readonly code: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The code of what failed: a provider error's or the client's own (a create's that may have made its object too), else `failed`. */
export const codeOf = (error: unknown): string =>
  error instanceof ProviderError || error instanceof GmsError || error instanceof MayExistError ? error.code : "failed";

/** The user-facing error for `error`: one that means the object may exist keeps what is known of it. */
function wrapped(message: string, error: unknown, options?: ErrorOptions): Error {
  if (error instanceof MayExistError) return new MayExistError(message, error.made, options);
  return new ProviderError(codeOf(error), message, options);
}

/** What a failed request says, without the request label's noise for a user, and how often it was sent. */
export const failureText = (error: unknown): string => {
  if (!(error instanceof GmsError)) return error instanceof Error ? error.message : String(error);
  const answer = error.status !== undefined && error.status >= 400 ? `the service answered ${error.status} ${error.detail}` : error.message;
  return error.attempts > 1 ? `${answer} (after ${error.attempts} attempts)` : answer;
};

/** An update's answer when the object was deleted outside Pulumi (docs/troubleshooting.md quotes it). */
export const goneMessage = (kindName: string, id: string): string =>
  `${kindName} ${id} no longer exists in the workspace (deleted outside Pulumi?): run ` +
  "`pulumi refresh` to drop it from the state, then `pulumi up` creates it again";

/** What could not be done (`Cannot create App "x"`), what the service answered, then advice when there is any. */
const described = (what: string, error: unknown, advice: string | undefined): string =>
  `${what}: ${failureText(error)}.${advice ? ` ${advice}` : ""}`;

/** A failed operation in the user's terms; the service's answer stays as the cause. */
export const failure = (what: string, error: unknown, advice?: string): Error =>
  wrapped(described(what, error, advice), error, { cause: error });

/**
 * `text` with every occurrence of a secret as a whole token blanked: not preceded or followed by a
 * letter, digit, `_` or `-` (so the key "abc" is not cut out of "abcdef", but "key abc." loses it).
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let redacted = text;
  for (const secret of secrets) {
    if (!secret) continue;
    const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    redacted = redacted.replace(new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`, "g"), "[secret]");
  }
  return redacted;
}

/** `failure` for a request that carried the credential `key`: worded the same, the key blanked, no cause. */
export const keyRedactedFailure = (key: string | undefined, what: string, error: unknown, advice?: string): Error =>
  wrapped(redactSecrets(described(what, error, advice), [key]), error);

/** What to check when the service refuses a Model's or a ProviderConnection's provider type or endpoint. */
export const providerAdvice = (error: unknown, url: string | null | undefined): string | undefined =>
  error instanceof ValidationError
    ? `Check that provider names a provider type the service supports (for example openai ` +
      `or anthropic)${url ? " and that url is an http(s) URL the service accepts" : ""}.`
    : undefined;

/**
 * A create or update that named an object the service could not find (its 404), in the program's terms:
 * which object, and what to set instead. The service's answer stays as the cause.
 */
export const notInWorkspace = (what: string, missing: string, advice: string, cause: unknown): Error =>
  new ProviderError("not_in_workspace", `${what}: ${missing} does not exist in the workspace (or was deleted); ${advice}`, { cause });
