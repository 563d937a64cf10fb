/**
 * The real Pulumi CLI behind the same interface as `LocalEngine`: `preview / up / refresh / destroy` of a
 * program directory, each run by the Pulumi engine (`pulumi preview|up|refresh|destroy` through the
 * Automation API of the program's own SDK, see cli-driver.ts) on a file backend with the passphrase secrets
 * provider. The result has LocalEngine's shape, read from the engine's own events: one step per resource
 * (providers, components and the root stack left out, as LocalEngine records none; a replacement's three engine
 * steps, `create-replacement`, `replace` and `delete-replaced`, are one `replace`), the properties that
 * changed and those that force a replacement, and the stack outputs. Tests compare the two engines on it.
 *
 * The program runs as an inline program: the SDK's language server loads the entry module in the driver
 * process, and the CLI connects to it. What `pulumi-language-nodejs` would add (installing dependencies,
 * `main` and `runtime.options` of Pulumi.yaml) plays no part: the program directory is ready, and the entry
 * is given here.
 */
import { fork } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { EngineEvent, OutputMap, StepEventMetadata } from "@pulumi/pulumi/automation";
import type { EngineOptions } from "./engine";
import { EngineError } from "./errors";
import { compiledTestingFile } from "./program-dir";
import { changedKeys } from "./properties";
import { type PulumiCli, cliEnvironment } from "./pulumi-cli";
import type { CliResult, Operation, PlanStep, StackOutput, StepOp } from "./results";

export interface CliEngineOptions extends Omit<EngineOptions, "stateFile"> {
  /** The CLI to run (`findPulumiCli`). */
  cli: PulumiCli;
  /** The file backend's folder; the stack's checkpoint is `<stateDir>/.pulumi/stacks/<project>/<stack>.json`. */
  stateDir: string;
  /** The CLI's home (default `<stateDir>/.pulumi-home`), apart from the user's `~/.pulumi`. */
  pulumiHome?: string;
  /** Runs each operation with `--debug`: the engine's debug lines (a provider's request log among them) in the output. */
  debug?: boolean;
}

/** The job the driver runs: secrets included, so it travels over IPC only. */
export interface CliDriverJob {
  operation: Operation;
  programDir: string;
  program: string;
  project: string;
  stack: string;
  /** `PulumiCommand.get({ root })`: the folder holding `bin/pulumi`; absent, `pulumi` on PATH. */
  cliRoot: string | undefined;
  config: Record<string, { value: string; secret: boolean }>;
  parallel: number | undefined;
  /** `up` only: `--continue-on-error`. */
  continueOnError?: boolean;
  /** `preview` and `refresh`: `--expect-no-changes`, the engine failing the operation when it finds a change (a provider's too). */
  expectNoChanges?: boolean;
  /** `--debug`. */
  debug?: boolean;
}

/** What `preview` and `refresh` can be asked besides the engine's options. */
export interface CheckOptions {
  /** Fail, as `--expect-no-changes` does, when the engine finds any change, a provider's included. */
  expectNoChanges?: boolean;
}

export type CliDriverMessage =
  | { kind: "output"; text: string }
  | { kind: "event"; event: EngineEvent }
  | { kind: "done"; outputs?: OutputMap }
  | { kind: "failed"; error: string };

export class PulumiCliEngine {
  constructor(readonly options: CliEngineOptions) {}

  preview(options: CheckOptions = {}): Promise<CliResult> {
    return this.operate("preview", options);
  }

  up(): Promise<CliResult> {
    return this.operate("up");
  }

  refresh(options: CheckOptions = {}): Promise<CliResult> {
    return this.operate("refresh", options);
  }

  destroy(): Promise<CliResult> {
    return this.operate("destroy");
  }

  /** The stack's checkpoint file as the file backend keeps it (secrets encrypted). */
  checkpointFile(): string {
    return join(resolve(this.options.stateDir), ".pulumi", "stacks", this.options.project, `${this.options.stack}.json`);
  }

  /** The environment the CLI runs in (for running `pulumi` commands of this stack directly). */
  environment(): NodeJS.ProcessEnv {
    const { options } = this;
    const stateDir = resolve(options.stateDir);
    mkdirSync(stateDir, { recursive: true });
    const passphrase = options.secretsPassphrase ?? options.env?.PULUMI_CONFIG_PASSPHRASE ?? process.env.PULUMI_CONFIG_PASSPHRASE;
    if (passphrase === undefined)
      throw new EngineError("PASSPHRASE_REQUIRED", "The Pulumi CLI's passphrase secrets provider needs a passphrase");
    return cliEnvironment(
      options.cli,
      { backendDir: stateDir, passphrase, pulumiHome: options.pulumiHome ?? join(stateDir, ".pulumi-home") },
      { ...process.env, ...options.env },
    );
  }

  private operate(operation: Operation, checks: CheckOptions = {}): Promise<CliResult> {
    const { options } = this;
    const log = options.log ?? ((line: string) => console.log(line));
    const driver = compiledTestingFile("cli-driver.js", options.programDir);
    if (!driver) throw new EngineError("PROGRAM_FAILED", "No compiled CLI driver (dist/testing/cli-driver.js): run `npm run build`");
    const job: CliDriverJob = {
      operation,
      programDir: resolve(options.programDir),
      program: options.program ?? "index.ts",
      project: options.project,
      stack: options.stack,
      cliRoot: basename(options.cli.dir) === "bin" ? dirname(options.cli.dir) : undefined,
      config: Object.fromEntries(
        Object.entries(options.config ?? {}).map(([key, value]) => [
          key,
          typeof value === "string" ? { value, secret: false } : { value: value.secret, secret: true },
        ]),
      ),
      parallel: options.parallel,
      ...(options.continueOnError ? { continueOnError: true } : {}),
      ...(checks.expectNoChanges ? { expectNoChanges: true } : {}),
      ...(options.debug ? { debug: true } : {}),
    };
    const child = fork(driver, [], { cwd: job.programDir, env: this.environment(), stdio: ["ignore", "pipe", "pipe", "ipc"] });
    const events: EngineEvent[] = [];
    let pending = "";
    let stderr = "";
    let outcome: Extract<CliDriverMessage, { kind: "done" | "failed" }> | undefined;
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => log(chunk.trimEnd()));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("message", (message: CliDriverMessage) => {
      if (message.kind === "event") events.push(message.event);
      else if (message.kind === "output") {
        const lines = (pending + message.text).split("\n");
        pending = lines.pop()!;
        for (const line of lines) log(line);
      } else outcome = message;
    });
    child.send(job);
    return new Promise((resolvePromise, reject) => {
      child.once("close", (code, signal) => {
        if (pending) log(pending);
        const result = resultFromEvents(operation, events, outcome?.kind === "done" ? outcome.outputs : undefined);
        if (outcome?.kind === "done" && code === 0) return resolvePromise(result);
        // The engine's own error diagnostics say what failed; the Automation API's error repeats the whole output.
        const diagnostics = errorDiagnostics(events);
        const detail = diagnostics.length
          ? diagnostics.join("; ")
          : outcome?.kind === "failed"
            ? outcome.error
            : stderr.trim() || `exit code ${code ?? signal}`;
        const failure = new EngineError(
          failedSteps(events).length ? "STEP_FAILED" : "PROGRAM_FAILED",
          `pulumi ${operation} failed: ${detail}`,
        );
        failure.result = result;
        reject(failure);
      });
    });
  }
}

/** The engine's step kinds, as this project's engine names them (a replacement's three steps are one). */
const STEP_OPS: Record<string, StepOp | undefined> = {
  same: "same",
  create: "create",
  update: "update",
  delete: "delete",
  replace: "replace",
  "create-replacement": "replace",
  "delete-replaced": "replace",
  read: "read",
  refresh: "refresh",
};

/** Whether a step's resource is one LocalEngine records: a custom resource (no component, not the stack) that is not a provider. */
const recorded = (metadata: StepEventMetadata) =>
  !metadata.type.startsWith("pulumi:providers:") && (metadata.new ?? metadata.old)?.custom === true;

/** The engine's error diagnostics, `<resource name>: <message>`, less its summary line for the root stack ("update failed"). */
function errorDiagnostics(events: EngineEvent[]): string[] {
  return events.flatMap(({ diagnosticEvent: diagnostic }) => {
    if (diagnostic?.severity !== "error" || !diagnostic.message.trim()) return [];
    const name = diagnostic.urn ? diagnostic.urn.slice(diagnostic.urn.lastIndexOf("::") + 2) : undefined;
    if (diagnostic.urn?.includes("::pulumi:pulumi:Stack::") && /^update failed\s*$/.test(diagnostic.message)) return [];
    return [`${name ? `${name}: ` : ""}${diagnostic.message.trim()}`];
  });
}

function failedSteps(events: EngineEvent[]): string[] {
  return events.flatMap((event) => (event.resOpFailedEvent ? [event.resOpFailedEvent.metadata.urn] : []));
}

/**
 * One step per URN, in the order the engine began them, as LocalEngine reports it: a replacement's steps are
 * one `replace`; a refresh's step is `same`, `refresh` (the engine's `update`: outputs that drifted) or
 * `delete` (gone). `changes` are the inputs that differ (the outputs, for a refresh), with the properties
 * that force a replacement (`keys`), which name a changed secret too: the engine's events mask every secret
 * value as "[secret]", so a change to a secret input alone shows no other changed property.
 */
export function resultFromEvents(operation: Operation, events: EngineEvent[], outputs: OutputMap | undefined): CliResult {
  const steps = new Map<string, PlanStep>();
  for (const event of events) {
    const finished = event.resOutputsEvent?.metadata;
    const metadata = event.resourcePreEvent?.metadata ?? finished;
    if (!metadata || !recorded(metadata)) continue;
    let op = STEP_OPS[metadata.op];
    if (!op) continue;
    if (op === "refresh") op = "same";
    if (operation === "refresh" && finished && op === "update") op = "refresh";
    const step: PlanStep = steps.get(metadata.urn) ?? {
      op,
      urn: metadata.urn,
      type: metadata.type,
      name: metadata.urn.slice(metadata.urn.lastIndexOf("::") + 2),
      changes: [],
      replaces: [],
    };
    if (step.op !== "replace") step.op = op;
    const id = metadata.old?.id || metadata.new?.id;
    if (id && step.id === undefined) step.id = id;
    const { old, new: next } = metadata;
    const changed =
      old && next && op === "refresh"
        ? changedKeys(old.outputs, next.outputs)
        : old && next && (op === "update" || op === "replace")
          ? changedKeys(old.inputs, next.inputs)
          : [];
    const replaces = op === "replace" ? (metadata.keys ?? []) : [];
    step.changes = [...new Set([...step.changes, ...changed, ...replaces])].sort();
    step.replaces = [...new Set([...step.replaces, ...replaces])].sort();
    steps.set(metadata.urn, step);
  }
  const counts: Record<StepOp, number> = { create: 0, update: 0, replace: 0, delete: 0, same: 0, refresh: 0, read: 0 };
  for (const step of steps.values()) counts[step.op] += 1;
  const stackOutputs: Record<string, StackOutput> = {};
  for (const [name, output] of Object.entries(outputs ?? {})) stackOutputs[name] = { value: output.value, secret: output.secret };
  return { operation, steps: [...steps.values()], counts, outputs: stackOutputs };
}

/** The checkpoint of a stack, parsed (for tests that look at what the CLI stored). */
export function readCheckpoint(engine: PulumiCliEngine): { checkpoint: { latest?: { resources?: unknown[] } } } {
  return JSON.parse(readFileSync(engine.checkpointFile(), "utf8"));
}
