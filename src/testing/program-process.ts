/**
 * The program's process (runner.ts, forked with the program directory as cwd), started as early as an
 * operation starts: messages that arrive before the engine serves them are held, none is lost.
 */
import { type ChildProcess, fork } from "node:child_process";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { EngineError } from "./errors";
import { compiledTestingFile } from "./program-dir";
import { type RunnerArgs, type RunnerMessage, type RunnerReply, batchedSender } from "./protocol";

export interface ProgramStart {
  programDir: string;
  program: string;
  project: string;
  stack: string;
  preview: boolean;
  /** Namespaced stack config, secrets in plaintext, and the names of the secret keys. */
  config: Record<string, string>;
  secretKeys: string[];
  env: NodeJS.ProcessEnv;
  /** Receives the program's standard output, line by line. */
  log: (line: string) => void;
}

export type ProgramMessage = Extract<RunnerMessage, { kind: "register" | "read" }>;

export class ProgramProcess {
  /** Registrations, reads and outputs that arrived before `serve`. */
  private readonly held: RunnerMessage[] = [];
  private handler: ((message: RunnerMessage) => void) | undefined;
  private readonly reply = batchedSender<RunnerReply>((batch, written) =>
    this.child.connected ? this.child.send(batch, () => written()) : written(),
  );
  /** The program's own failure when the process ends, if any. */
  readonly exited: Promise<EngineError | undefined>;

  private constructor(private readonly child: ChildProcess) {
    const output: string[] = [];
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => output.push(chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => output.push(chunk));
    let done = false;
    let failure: Extract<RunnerMessage, { kind: "failed" }> | undefined;
    child.on("message", (messages: RunnerMessage[]) => {
      for (const message of messages) {
        if (message.kind === "done") done = true;
        else if (message.kind === "failed") failure = message;
        else if (this.handler) this.handler(message);
        else this.held.push(message);
      }
    });
    this.exited = new Promise((resolvePromise) => {
      child.once("error", (error) =>
        resolvePromise(new EngineError("PROGRAM_FAILED", `The program process failed: ${error.message}`, { cause: error })),
      );
      child.once("exit", (code, signal) => {
        if (done && code === 0 && failure === undefined) return resolvePromise(undefined);
        // A RunError's message is the whole report, as the CLI prints it: no stack, no program text.
        if (failure?.runError) return resolvePromise(new EngineError("PROGRAM_FAILED", failure.error));
        const detail = failure?.error ?? (output.join("").trim() || `exit code ${code ?? signal}`);
        resolvePromise(new EngineError("PROGRAM_FAILED", `The program failed: ${detail}`));
      });
    });
  }

  static start(start: ProgramStart): ProgramProcess {
    const programDir = resolve(start.programDir);
    const args: RunnerArgs = { program: start.program, project: start.project, stack: start.stack, preview: start.preview };
    const child = fork(runnerPath(programDir), [JSON.stringify(args)], {
      cwd: programDir,
      execPath: process.execPath,
      env: { ...start.env, PULUMI_CONFIG: JSON.stringify(start.config), PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(start.secretKeys) },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      for (const line of chunk.trimEnd().split("\n")) start.log(`    ${line}`);
    });
    return new ProgramProcess(child);
  }

  /**
   * Hands the program's registrations and reads to `answer` (those held first) and sends back each reply;
   * stack outputs go to `onOutputs`. Resolves with the program's own failure, if any, when it has ended.
   */
  serve(answer: (message: ProgramMessage) => Promise<RunnerReply>, onOutputs: (outputs: Record<string, unknown>) => void) {
    this.handler = (message) => {
      if (message.kind === "outputs") onOutputs(message.outputs);
      if (message.kind !== "register" && message.kind !== "read") return;
      void answer(message).then(this.reply);
    };
    for (const message of this.held.splice(0)) this.handler(message);
    return this.exited;
  }

  /** Ends the process if it is still running (an operation that failed before the program finished). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGTERM");
  }
}

/**
 * The environment of the program process and the provider host: the caller's, with Node's compile cache
 * on (`NODE_COMPILE_CACHE`, in Node's default place) so that each operation after the first loads
 * `@pulumi/pulumi` from cached code; left as it is when the caller set or disabled the cache.
 */
export function childEnv(extra: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  if (env.NODE_COMPILE_CACHE === undefined && env.NODE_DISABLE_COMPILE_CACHE === undefined) {
    env.NODE_COMPILE_CACHE = join(tmpdir(), "node-compile-cache");
  }
  return env;
}

/** The runner of the package installed in the program (it shares the program's SDK), else this one. */
function runnerPath(programDir: string): string {
  const found = compiledTestingFile("runner.js", programDir);
  if (!found) throw new EngineError("PROGRAM_FAILED", "No compiled runner (dist/testing/runner.js): run `npm run build`");
  return found;
}
