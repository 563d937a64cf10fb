/**
 * The retry policy, written once. Replaying an idempotent request is harmless, so GET, PUT and DELETE
 * retry on any transient failure. Replaying a POST could create a second record, so a POST retries only
 * when the server provably did no work: the connection failed before a byte was sent, or a rate limiter
 * answered 429 with `Retry-After`. A POST that may have acted is resolved by `createOnce`, not replayed.
 * A 429 without `Retry-After` is a used-up allowance (LimitExceededError): no wait cures it. A 429 with it is the
 * service asking the client to come back later, not a failure: waiting it out does not count against `maxRetries`
 * (many requests refused together would use those up in a few seconds and fail), only against the time
 * `maxThrottledWaitMs` allows a request to spend waiting so. `maxRetries: 0` still sends each request once.
 */
import { SETTINGS } from "../settings";
import { ConnectionError, GmsError, RateLimitedError, ServerError, TimeoutError } from "./errors";

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff ceiling; it doubles per retry up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A longer `Retry-After` is not slept through: the error surfaces with its `retryAfterMs`. */
  maxRetryAfterMs: number;
  /** The most a request waits out rate-limit 429s in all (each no longer than `maxRetryAfterMs`, each at least `baseDelayMs`). */
  maxThrottledWaitMs: number;
  /**
   * The longest a create whose answer was lost while the service may still be acting on it waits for the
   * service's request deadline to pass (looking for the object meanwhile); when the deadline is further
   * off, the create is left unresolved for the next run instead (see ./create).
   */
  maxSettleWaitMs: number;
  sleep: (ms: number) => Promise<void>;
  /** In [0, 1); injectable so tests can pin the jitter. */
  random: () => number;
  /** A monotonic clock in milliseconds, for waits measured in elapsed time; injectable with `sleep`. */
  now: () => number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: SETTINGS.maxRetries.default,
  baseDelayMs: SETTINGS.retryBaseDelayMs.default,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
  maxThrottledWaitMs: 600_000,
  // Twice the default request deadline: with the defaults, a lost create's deadline is always waited out.
  maxSettleWaitMs: 2 * SETTINGS.requestDeadlineMs.default,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
  now: () => performance.now(),
};

const idempotentMethods = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

export const isIdempotent = (method: string): boolean => idempotentMethods.has(method.toUpperCase());

/** Whether a request may be sent again after `error`; `idempotent` says its replay does no harm. */
export function isRetryable(idempotent: boolean, error: unknown): error is GmsError {
  // Never reached the server, or refused before doing any work: safe for every method.
  if (error instanceof RateLimitedError) return true;
  if (error instanceof ConnectionError && error.provablyUnsent) return true;
  if (!idempotent) return false;
  return (
    error instanceof ConnectionError ||
    error instanceof TimeoutError ||
    error instanceof ServerError ||
    (error instanceof GmsError && error.status === 408)
  );
}

/**
 * The wait before retry number `retry` (0-based): the server's `Retry-After` when given, else full
 * jitter over a capped exponential ceiling, so that many clients refused together do not return together.
 * Undefined means do not retry.
 */
export function retryDelayMs(retry: number, error: GmsError, policy: RetryPolicy): number | undefined {
  if (error.retryAfterMs !== undefined) return error.retryAfterMs <= policy.maxRetryAfterMs ? error.retryAfterMs : undefined;
  return Math.floor(policy.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry));
}

/**
 * Runs `attempt` (numbered from 1) until it succeeds or the policy gives up; the last error is thrown. Rate-limit
 * 429s are waited out apart from the other failures: see the top of this file.
 */
export async function withRetries<T>(
  idempotent: boolean,
  policy: RetryPolicy,
  attempt: (attemptNumber: number) => Promise<T>,
  /** Told of each retry before its wait: the attempt that failed, the wait, and the error it failed with. */
  onRetry?: (attemptNumber: number, delayMs: number, error: GmsError) => void,
): Promise<T> {
  let retries = 0;
  let throttledMs = 0;
  for (let attemptNumber = 1; ; attemptNumber++) {
    try {
      return await attempt(attemptNumber);
    } catch (error) {
      if (error instanceof GmsError) error.attempts = attemptNumber;
      if (!isRetryable(idempotent, error)) throw error;
      const throttled = error instanceof RateLimitedError;
      // `maxRetries: 0` sends every request once: no wait of any kind.
      if (retries >= policy.maxRetries && (!throttled || policy.maxRetries === 0)) throw error;
      const delay = retryDelayMs(retries, error, policy);
      // Each wait counts as at least the first backoff, so that a service answering `Retry-After: 0` forever is given up on too.
      const counted = Math.max(delay ?? 0, policy.baseDelayMs);
      if (delay === undefined || (throttled && throttledMs + counted > policy.maxThrottledWaitMs)) throw error;
      if (throttled) throttledMs += counted;
      else retries++;
      onRetry?.(attemptNumber, delay, error);
      await policy.sleep(delay);
    }
  }
}
