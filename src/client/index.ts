export {
  GmsClient,
  defaultUserAgent,
  type GmsClientOptions,
  type HttpMethod,
  type QueryValue,
  type RequestObservation,
  type RequestOptions,
} from "./client";
export {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  GmsError,
  LimitExceededError,
  NotFoundError,
  RateLimitedError,
  ResponseShapeError,
  ServerError,
  TimeoutError,
  ValidationError,
  errorFromResponse,
  parseRetryAfter,
  type ErrorResponse,
  type RequestLabel,
  type ResponseHeaders,
} from "./errors";
export {
  MayExistError,
  leavesCreateUnknown,
  type CreateOptions,
  type CreatedCandidate,
  type CreationWindow,
  type MayExist,
} from "./create";
export {
  collect,
  listBare,
  listIgnoringPaging,
  paginateEnvelope,
  paginateUntilShort,
  type ListOptions,
  type PagedListOptions,
} from "./pagination";
export { describeTimeout, operationTimeout, type OperationTimeout, timeLeft, withOperationTimeout } from "./operation-timeout";
export { childPath, path, type EncodedPath } from "./path";
export { AdaptivePacer, type PacedOutcome, type PacerChange, type PacerOptions, type PacerTiming } from "./pacer";
export { RequestRateLimiter, type RateLimiterTiming } from "./rate-limit";
export { defaultRetryPolicy, isIdempotent, isRetryable, retryDelayMs, withRetries, type RetryPolicy } from "./retry";
