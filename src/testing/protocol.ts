/** The IPC messages between the engine (parent) and the program process (runner.ts). Values are in wire form. */
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
  error?: string;
}
