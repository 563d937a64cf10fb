/** What lets the engine run steps in parallel and still report them in a fixed order. */
import type { PlanStep } from "./results";

/** Runs at most `limit` tasks at once, the others waiting their turn in arrival order. */
export class Limiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`parallel must be a whole number of at least 1 (got ${limit})`);
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

/**
 * Steps in a fixed order whatever order parallel work finishes in: each piece of work has a key (the
 * resource's place in the program, or in the list of deletes) and settles it with its step, or with none;
 * a step is emitted once every smaller key has settled. Work without a key is emitted at once.
 */
export class OrderedSteps {
  private readonly settled = new Map<number, PlanStep | undefined>();
  private cursor = 0;

  constructor(private readonly emit: (step: PlanStep) => void) {}

  /** The first key after everything settled or flushed so far: where a new series of keys starts. */
  get nextKey(): number {
    return Math.max(this.cursor, ...[...this.settled.keys()].map((key) => key + 1));
  }

  /** The work of `key` is done (the first settlement of a key counts). */
  settle(key: number | undefined, step?: PlanStep): void {
    if (key === undefined) {
      if (step) this.emit(step);
      return;
    }
    if (key < this.cursor || this.settled.has(key)) return;
    this.settled.set(key, step);
    while (this.settled.has(this.cursor)) {
      const next = this.settled.get(this.cursor);
      this.settled.delete(this.cursor++);
      if (next) this.emit(next);
    }
  }

  /** Emits what is still held (keys whose predecessors never settled: a program that failed midway), in key order. */
  flush(): void {
    const keys = [...this.settled.keys()].sort((a, b) => a - b);
    this.cursor = this.nextKey;
    for (const key of keys) {
      const step = this.settled.get(key);
      this.settled.delete(key);
      if (step) this.emit(step);
    }
  }
}
