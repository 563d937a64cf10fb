/**
 * Domain errors of the store. Each carries the HTTP status and the wire `detail` text the service uses,
 * so the one error handler in `routes/` can answer without knowing any kind.
 */
export class StoreError extends Error {
  override readonly name: string = "StoreError";
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(detail);
  }
}

export class RecordNotFoundError extends StoreError {
  override readonly name = "RecordNotFoundError";
  constructor(detail: string) {
    super(404, "not_found", detail);
  }
}

export class BadRequestError extends StoreError {
  override readonly name = "BadRequestError";
  constructor(detail: string) {
    super(400, "bad_request", detail);
  }
}

export class ForbiddenError extends StoreError {
  override readonly name = "ForbiddenError";
  constructor(detail: string) {
    super(403, "forbidden", detail);
  }
}

/** A workspace feature allowance is used up (the spec names 429 for Apps). */
export class FeatureLimitReachedError extends StoreError {
  override readonly name = "FeatureLimitReachedError";
  constructor(detail: string) {
    super(429, "limit_exceeded", detail);
  }
}
