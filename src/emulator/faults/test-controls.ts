/**
 * The controls of fault injection that tests use (`FaultController`'s `hold` and `idle`), apart from what injects the
 * faults: holding the service's answers while a test kills its client, and waiting until every late request has
 * landed before a test counts what the service holds.
 */

/** Holds every answer, after its handler has run and its writes committed, from `hold()` until its release or the server's close. */
export class AnswerHold {
  private holding: { answers: Promise<void>; release: () => void } | undefined;
  private closing = false;

  /** Holds the answers from now on; the release lets them go (the same release while a hold lasts). */
  hold(): () => void {
    if (!this.holding) {
      let release = () => {};
      const answers = new Promise<void>((resolve) => (release = resolve));
      this.holding = {
        answers,
        release: () => {
          this.holding = undefined;
          release();
        },
      };
    }
    return this.holding.release;
  }

  /** What an answer waits for while a hold lasts; undefined when none does. */
  held(): Promise<void> | undefined {
    return this.holding?.answers;
  }

  /** Whether the server is closing (which let the held answers go). */
  get closed(): boolean {
    return this.closing;
  }

  /** The server closes: held answers go, and none is held again. */
  close(): void {
    this.closing = true;
    this.holding?.release();
  }
}

/** The late requests whose handler has not run (or been skipped) yet, and who waits for there to be none. */
export class LateRequests {
  private waiting = 0;
  private whenIdle: { promise: Promise<void>; resolve: () => void } | undefined;

  /** A late request starts waiting to run its handler. */
  enter(): void {
    this.waiting++;
  }

  /**
   * A late request is done waiting. Its handler runs in the microtasks after the hook returns, and the emulator's
   * handlers write as they start: by the next turn of the event loop, what it does has landed.
   */
  leave(): void {
    if (--this.waiting === 0) setImmediate(() => this.settle());
  }

  /** Resolves once no late request is still waiting to run its handler. */
  idle(): Promise<void> {
    if (this.waiting === 0) return Promise.resolve();
    if (!this.whenIdle) {
      let resolve = () => {};
      const promise = new Promise<void>((done) => (resolve = done));
      this.whenIdle = { promise, resolve };
    }
    return this.whenIdle.promise;
  }

  private settle(): void {
    if (this.waiting > 0 || !this.whenIdle) return;
    this.whenIdle.resolve();
    this.whenIdle = undefined;
  }
}
