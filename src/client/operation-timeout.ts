/**
 * The engine's bound on one step (its `customTimeouts`: the `timeout` the plugin receives with Create, Update and
 * Delete), held for every wait made on the step's behalf: a FineTune's training, a Context Source's indexing, a lost
 * create's lookups until the service's deadline. It is kept in the step's async context, so that the steps one
 * provider process runs at once each have their own. Without one (timeout 0, the dynamic provider, LocalEngine)
 * nothing is bounded but by each wait's own setting.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface OperationTimeout {
  /** `create`, `update` or `delete`: the `customTimeouts` key that set it. */
  operation: string;
  seconds: number;
  /** When it runs out, as `Date.now()`. */
  until: number;
}

const current = new AsyncLocalStorage<OperationTimeout>();

/** Runs `run` bounded by `seconds` (the engine's timeout for `operation`; 0 or less: unbounded). */
export function withOperationTimeout<T>(operation: string, seconds: number, run: () => Promise<T>): Promise<T> {
  if (!(seconds > 0)) return run();
  return current.run({ operation, seconds, until: Date.now() + seconds * 1000 }, run);
}

/** The bound of the step under way, if the engine set one. */
export const operationTimeout = (): OperationTimeout | undefined => current.getStore();

/** The milliseconds left before the step's bound (Infinity without one). */
export function timeLeft(): number {
  const bound = current.getStore();
  return bound === undefined ? Number.POSITIVE_INFINITY : bound.until - Date.now();
}

/** How a message names the bound: `the create's timeout of 30 s (customTimeouts.create)`. */
export const describeTimeout = (bound: OperationTimeout): string =>
  `the ${bound.operation}'s timeout of ${bound.seconds} s (customTimeouts.${bound.operation})`;
