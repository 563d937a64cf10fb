/**
 * The emulator's clock: this machine's, shifted by a fixed offset. Every timestamp the stores write, every
 * expiry they sign and the `Date` header of every answer read it, so one emulator can play a service
 * whose clock is minutes ahead of or behind its clients' (what a client's time windows must survive),
 * while every other emulator in the same process keeps its own.
 */
export class Clock {
  /** Milliseconds added to this machine's clock (negative: the service is behind). */
  readonly offsetMs: number;

  constructor(offsetMs = 0) {
    if (!Number.isFinite(offsetMs)) throw new RangeError("the clock offset must be a finite number of milliseconds");
    this.offsetMs = offsetMs;
  }

  /** Milliseconds since the epoch, by the service's clock. */
  now(): number {
    return Date.now() + this.offsetMs;
  }

  date(): Date {
    return new Date(this.now());
  }

  /** ISO 8601 with milliseconds, as records store their timestamps. */
  iso(): string {
    return this.date().toISOString();
  }
}
