/**
 * The rate limit's budgets (`rate`, `burst` in the fault spec), one per API key: a token bucket holding up to `burst`
 * requests, refilled at `rate` a second on the hooks' clock. It draws nothing: whether a request finds its budget
 * spent depends only on its key's earlier requests and on the times they arrived.
 */
export class RateBudgets {
  private readonly buckets = new Map<string, { requests: number; at: number }>();

  constructor(
    private readonly rate: number,
    private readonly burst: number,
  ) {}

  /**
   * Takes one request from the budget of `key` (its holder's key hashed: keys are never held as given) at `now`
   * (milliseconds): undefined when there was one, else the whole seconds until there is one again, rounded up (the
   * `Retry-After` that is true).
   */
  take(key: string, now: number): number | undefined {
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = { requests: this.burst, at: now }));
    bucket.requests = Math.min(this.burst, bucket.requests + (Math.max(0, now - bucket.at) * this.rate) / 1000);
    bucket.at = now;
    // The slack absorbs rounding in the refill (a request arriving just as its token does is admitted).
    if (bucket.requests >= 1 - 1e-9) {
      bucket.requests = Math.max(0, bucket.requests - 1);
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - bucket.requests) / this.rate));
  }
}
