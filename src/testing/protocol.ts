/**
 * The IPC messages between the engine (parent) and the program process (runner.ts). Values are in wire form.
 * Each side sends its messages in batches (arrays), one write per turn of the event loop.
 */
type Props = Record<string, unknown>;

export interface RunnerArgs {
  /** The entry file, relative to the program directory. */
  program: string;
  project: string;
  stack: string;
  preview: boolean;
}

export type RunnerMessage =
  | {
      kind: "register";
      seq: number;
      /** The resource's place among the resources the program constructed (absent for the root stack). */
      order: number | undefined;
      type: string;
      name: string;
      parent: string;
      custom: boolean;
      inputs: Props;
      dependencies: string[];
      deleteBeforeReplace: boolean | undefined;
      additionalSecretOutputs: string[];
      unsupported: string[];
    }
  | {
      kind: "read";
      seq: number;
      order: number | undefined;
      type: string;
      name: string;
      parent: string;
      id: string;
      inputs: Props;
      dependencies: string[];
      additionalSecretOutputs: string[];
      unsupported: string[];
    }
  | { kind: "outputs"; outputs: Props }
  | { kind: "done" }
  | {
      kind: "failed";
      /** The error's stack (its message when it has none), or only its message for a RunError. */
      error: string;
      /** A `pulumi.RunError` (`RunError.isInstance`): the CLI prints its message alone, with no stack or program text. */
      runError: boolean;
    };

export interface RunnerReply {
  seq: number;
  urn: string;
  id?: string;
  outputs?: Props;
  /** The registration could not be served (a monitor error: the program's registration fails). */
  error?: string;
  /**
   * The resource's step failed: answered with the engine's `Result.FAIL`, not an error, as `pulumi up
   * --continue-on-error` answers; the SDK rejects the resource's outputs.
   */
  failed?: string;
}

/**
 * A sender that writes the messages of one turn of the event loop as one batch: every IPC write is a system
 * call, and a program registers its resources (and the engine answers them) in bursts. Each message's
 * promise resolves once its batch is written.
 */
export function batchedSender<T>(write: (batch: T[], written: () => void) => void): (message: T) => Promise<void> {
  let batch: T[] | undefined;
  let written: Promise<void> = Promise.resolve();
  return (message) => {
    if (!batch) {
      const current: T[] = [];
      batch = current;
      written = new Promise((resolve) =>
        setImmediate(() => {
          batch = undefined;
          write(current, resolve);
        }),
      );
    }
    batch.push(message);
    return written;
  };
}
