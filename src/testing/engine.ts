/**
 * An offline engine for Pulumi programs whose resources are dynamic resources (such as this package's):
 * a stand-in for `pulumi preview / up / refresh / destroy` in tests. It is not the Pulumi engine and
 * needs no Pulumi CLI; it reproduces the parts of the engine that dynamic resources meet.
 *
 * What it does, as the engine does it:
 * - runs the program in a child process with the program's own `@pulumi/pulumi` runtime, inside
 *   `runInPulumiStack`, with the stack config in PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS and
 *   `isDryRun()` true in preview; an uncaught error in the program (an apply included) fails the run,
 *   reported with its stack, except a `pulumi.RunError`, reported by its message alone as the CLI does;
 * - hands every dynamic resource to the real dynamic-provider host (`@pulumi/pulumi/cmd/dynamic-provider`)
 *   over gRPC: one host per operation, cwd = the program directory, `configure`d once with the stack
 *   config (secrets decrypted). Secrets are revealed before every call (the host does not accept them);
 * - per registration: `check` (olds = the previous inputs); create when new; otherwise `diff` (olds =
 *   the previous OUTPUTS, pulumi#9086; a DIFF_UNKNOWN falls back to comparing inputs), then same, update
 *   (olds = the previous outputs) or replace: the replacement is created first and the old object deleted
 *   after the program, or the old one is deleted first when the diff or the `deleteBeforeReplace` option
 *   says so. After the program, what it no longer declares is deleted in reverse creation order;
 * - marks an output secret when the input of the same name held a secret or `additionalSecretOutputs`
 *   names it, hands it back to the program as a secret and stores it encrypted (state.ts);
 * - in preview nothing changes: a create or update hands back the checked inputs as its outputs, as the
 *   engine does for a provider without preview support, so the other outputs (and a new resource's ID)
 *   are unknown and dependents receive the unknown marker in their inputs. Like `pulumi preview`, this
 *   shows a dependent of an updated resource as changing when it reads such an output;
 * - check failures of every resource are gathered and reported together, and no step starts after one;
 * - a failed step does not stop the others (as `pulumi up --continue-on-error`): only the steps that
 *   depend on it are skipped, and nothing it depends on is deleted. Every failure is reported at the end.
 *   A create that made its object but failed to finish it (the host's ErrorResourceInitFailed) is
 *   recorded with its id and init errors, and updated by the next `up` even without a change. What the
 *   program no longer declares is deleted only when the program ran to its end. The state is saved
 *   after every step, as the engine checkpoints, so a re-run starts from everything that happened;
 * - refresh reads every resource (an empty ID drops it), keeps the `inputs` a read returns and reports
 *   drift per property; destroy deletes everything in reverse creation order; a resource read with the
 *   `id` option (`.get`) is read through the provider but, unlike the engine, not recorded;
 * - URNs are the engine's (`urn:pulumi:<stack>::<project>::<parent type$>type::name`, the root stack
 *   type left out); a duplicate URN fails the run.
 *
 * What it does not do: options other than `parent`, `dependsOn`, `deleteBeforeReplace`,
 * `additionalSecretOutputs` (and the ignored `customTimeouts`) are refused, not ignored: protect,
 * ignoreChanges, replaceOnChanges, import, aliases, retainOnDelete, deletedWith, replaceWith, explicit
 * providers, transforms, hooks. No provider other than the dynamic one, no invokes, no stack references.
 * Component resources, the root stack included, are not recorded or shown. Steps run one at a time in
 * registration order (the engine runs independent ones in parallel). A delete-before-replace does not
 * also replace the dependents. No targets, plans, `--refresh` or `--preview-only` for refresh/destroy.
 * The state file is this engine's JSON (state.ts), not a Pulumi checkpoint.
 */
import { fork } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { type CheckFailure, EngineError } from "./errors";
import { ProviderHost, ResourceInitError } from "./host";
import { formatHeader, formatOutputs, formatStep, formatSummary } from "./plan";
import { findInstalled, packageRoot } from "./program-dir";
import { type Props, annotateSecrets, changedKeys, containsSecret, markSecretOutputs, reveal, revealProps } from "./properties";
import type { RunnerArgs, RunnerMessage, RunnerReply } from "./protocol";
import type { EngineResult, Operation, PlanStep, StackOutput, StepOp } from "./results";
import { type ResourceState, type Snapshot, StateFile } from "./state";

export interface EngineOptions {
  /** The program directory: its package.json, node_modules (with `pulumi-gms` installed) and entry file. */
  programDir: string;
  /** The entry file, relative to `programDir` (default `index.ts`; a .ts entry needs `"type": "module"`). */
  program?: string;
  /** Where the state lives between runs (created on first `up`). */
  stateFile: string;
  project: string;
  stack: string;
  /** Stack config; keys without a namespace get the project's (`pulumi config set` does the same). */
  config?: Record<string, string | { secret: string }>;
  /** Encrypts secrets in the state; default PULUMI_CONFIG_PASSPHRASE (from `env`, then the process). */
  secretsPassphrase?: string;
  /** Extra environment of the program and the provider host. */
  env?: NodeJS.ProcessEnv;
  /** Receives the printed plan, line by line (default: console.log). */
  log?: (line: string) => void;
}

export class LocalEngine {
  constructor(readonly options: EngineOptions) {}

  /** `pulumi preview`: check and diff only; the state and the service are untouched. */
  preview(): Promise<EngineResult> {
    return this.operate("preview", (deployment) => deployment.runProgram());
  }

  /** `pulumi up`. */
  up(): Promise<EngineResult> {
    return this.operate("up", (deployment) => deployment.runProgram());
  }

  /** `pulumi refresh`: reads every resource; the program does not run. */
  refresh(): Promise<EngineResult> {
    return this.operate("refresh", (deployment) => deployment.refresh());
  }

  /** `pulumi destroy`: deletes every resource, dependents first; the program does not run. */
  destroy(): Promise<EngineResult> {
    return this.operate("destroy", (deployment) => deployment.destroy());
  }

  private async operate(operation: Operation, run: (deployment: Deployment) => Promise<void>): Promise<EngineResult> {
    const { options } = this;
    const log = options.log ?? ((line: string) => console.log(line));
    const passphrase = options.secretsPassphrase ?? options.env?.PULUMI_CONFIG_PASSPHRASE ?? process.env.PULUMI_CONFIG_PASSPHRASE;
    const state = new StateFile(resolve(options.stateFile), passphrase);
    const snapshot = await state.load();
    const config = stackConfig(options);
    const host = await ProviderHost.start({
      cwd: resolve(options.programDir),
      project: options.project,
      stack: options.stack,
      env: options.env,
    });
    const deployment = new Deployment(operation, options, host, state, snapshot, config, log);
    log(formatHeader(operation, options.project, options.stack));
    try {
      await host.configure(config.values);
      await run(deployment);
      await deployment.finish();
    } catch (error) {
      // What happened before the failure is in the journal; the file is written from it now.
      await deployment.finish().catch(() => undefined);
      const failure =
        error instanceof EngineError ? error : new EngineError("STEP_FAILED", String((error as Error)?.message ?? error), { cause: error });
      failure.result = deployment.result();
      log(formatSummary(failure.result));
      log(`error: ${failure.message}`);
      throw failure;
    } finally {
      await host.close();
    }
    const result = deployment.result();
    for (const line of formatOutputs(result.outputs)) log(line);
    log(formatSummary(result));
    return result;
  }
}

interface StackConfig {
  /** Namespaced keys, secrets in plaintext: what `configure` and the program receive. */
  values: Record<string, string>;
  secretKeys: string[];
}

function stackConfig(options: EngineOptions): StackConfig {
  const values: Record<string, string> = {};
  const secretKeys: string[] = [];
  for (const [key, value] of Object.entries(options.config ?? {})) {
    const name = key.includes(":") ? key : `${options.project}:${key}`;
    values[name] = typeof value === "string" ? value : value.secret;
    if (typeof value !== "string") secretKeys.push(name);
  }
  return { values, secretKeys };
}

/** How a resource of the previous state fared in this operation. */
type Fate = "kept" | "replaced" | "deleted";

/** One operation: the previous state, what this run produced, the steps, the errors. */
class Deployment {
  private readonly steps: PlanStep[] = [];
  private readonly previous: ResourceState[];
  /** Resources registered (or refreshed) by this run, in order. */
  private readonly next: ResourceState[] = [];
  private readonly fates = new Map<ResourceState, Fate>();
  private readonly pendingCopies = new Map<ResourceState, ResourceState>();
  private readonly urns = new Set<string>();
  private readonly failures: CheckFailure[] = [];
  private readonly errors: EngineError[] = [];
  /** URNs registered by this run's program. */
  private readonly registered = new Set<string>();
  /** Resources whose step failed or was skipped: their dependents are skipped too. */
  private readonly failedUrns = new Set<string>();
  /** Resources a failed step still depends on: never deleted in this operation. */
  private readonly protectedUrns = new Set<string>();
  private outputs: Props;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly preview: boolean;

  constructor(
    private readonly operation: Operation,
    private readonly options: EngineOptions,
    private readonly host: ProviderHost,
    private readonly state: StateFile,
    snapshot: Snapshot,
    private readonly config: StackConfig,
    private readonly log: (line: string) => void,
  ) {
    this.previous = snapshot.resources;
    this.outputs = snapshot.outputs;
    this.preview = operation === "preview";
  }

  result(): EngineResult {
    const counts: Record<StepOp, number> = { create: 0, update: 0, replace: 0, delete: 0, same: 0, refresh: 0, read: 0 };
    for (const step of this.steps) counts[step.op]++;
    const outputs: Record<string, StackOutput> = {};
    if (this.operation === "preview" || this.operation === "up") {
      for (const [name, value] of Object.entries(this.outputs)) outputs[name] = { value: reveal(value), secret: containsSecret(value) };
    }
    return { operation: this.operation, steps: [...this.steps], counts, outputs };
  }

  /** preview / up: run the program, serve its registrations, then delete what it no longer declares. */
  async runProgram(): Promise<void> {
    const programFailure = await this.runChild();
    await this.queue;
    if (this.failures.length > 0) {
      const lines = this.failures.map((failure) => `  ${failure.urn}\n    ${failure.property}: ${failure.reason}`);
      throw new EngineError("CHECK_FAILED", `Resources failed their checks:\n${lines.join("\n")}`, { failures: this.failures });
    }
    // A program that failed declared only part of what it wants: deleting the rest would destroy what it still needs.
    if (!programFailure) {
      // Replaced objects (this run's, and those an earlier, failed run left pending) and undeclared resources.
      const leftOver = this.previous.filter((old) => {
        const fate = this.fates.get(old);
        return fate === "replaced" || (fate === undefined && (old.pendingReplacement || !this.registered.has(old.urn)));
      });
      await this.deleteAll(leftOver);
    }
    this.throwFailures(programFailure);
  }

  /**
   * Deletes in reverse creation order (dependents first). A failed delete is reported at the end and
   * protects what the resource depends on, so nothing it still needs is deleted before it.
   */
  private async deleteAll(resources: ResourceState[]): Promise<void> {
    for (const old of [...resources].reverse()) {
      const fate = this.fates.get(old);
      if (this.protectedUrns.has(old.urn)) {
        this.protect(old.dependencies, old.parent);
        continue;
      }
      if (this.preview) {
        if (fate === undefined) this.record({ op: "delete", ...identity(old), id: old.id, changes: [], replaces: [] });
        continue;
      }
      const started = Date.now();
      try {
        await this.host.delete(old.urn, old.id, revealProps(old.outputs));
      } catch (error) {
        this.errors.push(stepError("delete", old.urn, error));
        this.protect(old.dependencies, old.parent);
        continue;
      }
      this.fates.set(old, "deleted");
      await this.save();
      if (fate === undefined)
        this.record({ op: "delete", ...identity(old), id: old.id, changes: [], replaces: [], durationMs: Date.now() - started });
    }
  }

  private protect(dependencies: string[], parent: string | undefined): void {
    for (const urn of dependencies) this.protectedUrns.add(urn);
    if (parent) this.protectedUrns.add(parent);
  }

  /**
   * Every failure of the operation, reported together once everything that could run has run. A program
   * failure that only repeats a failed step (a dependent awaited its output) is not reported twice.
   */
  private throwFailures(programFailure?: EngineError): void {
    const failures = [...this.errors];
    if (programFailure && !failures.some((failure) => programFailure.message.includes(failure.message))) failures.push(programFailure);
    if (failures.length === 0) return;
    if (failures.length === 1) throw failures[0]!;
    const error = new EngineError(
      failures[0]!.code,
      `${failures.length} steps failed:\n${failures.map((failure) => `  ${failure.message}`).join("\n")}`,
      { cause: failures[0] },
    );
    error.errors = failures;
    throw error;
  }

  async refresh(): Promise<void> {
    for (const old of this.previous) {
      if (old.pendingReplacement) {
        this.fates.set(old, "kept");
        this.next.push(old);
        continue;
      }
      const started = Date.now();
      let read: Awaited<ReturnType<ProviderHost["read"]>>;
      try {
        read = await this.host.read(old.urn, old.id, revealProps(old.outputs), revealProps(old.inputs));
      } catch (error) {
        // Kept as it was; the other resources are still refreshed.
        this.errors.push(stepError("read", old.urn, error));
        this.fates.set(old, "kept");
        this.next.push(old);
        continue;
      }
      this.fates.set(old, read.id === "" ? "deleted" : "kept");
      const step = { ...identity(old), id: old.id, replaces: [], durationMs: Date.now() - started };
      if (read.id === "") {
        await this.save();
        this.record({ ...step, op: "delete", changes: [] });
        continue;
      }
      const inputs = read.inputs ? annotateSecrets(read.inputs, old.inputs) : old.inputs;
      const outputs = markSecretOutputs(annotateSecrets(read.properties, old.outputs), inputs, old.additionalSecretOutputs);
      this.next.push({ ...old, id: read.id, inputs, outputs });
      await this.save();
      const drift = changedKeys(old.outputs, outputs);
      this.record({ ...step, op: drift.length > 0 ? "refresh" : "same", changes: drift });
    }
    this.throwFailures();
  }

  async destroy(): Promise<void> {
    await this.deleteAll(this.previous);
    this.outputs = {};
    this.throwFailures();
  }

  /** Forks the runner and serves it; resolves with the program's own failure, if any. */
  private runChild(): Promise<EngineError | undefined> {
    const { options } = this;
    const programDir = resolve(options.programDir);
    const args: RunnerArgs = {
      program: options.program ?? "index.ts",
      project: options.project,
      stack: options.stack,
      preview: this.preview,
    };
    const child = fork(runnerPath(programDir), [JSON.stringify(args)], {
      cwd: programDir,
      execPath: process.execPath,
      env: {
        ...process.env,
        ...options.env,
        PULUMI_CONFIG: JSON.stringify(this.config.values),
        PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(this.config.secretKeys),
      },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    const output: string[] = [];
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      output.push(chunk);
      for (const line of chunk.trimEnd().split("\n")) this.log(`    ${line}`);
    });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => output.push(chunk));
    let done = false;
    let failure: Extract<RunnerMessage, { kind: "failed" }> | undefined;
    child.on("message", (message: RunnerMessage) => {
      switch (message.kind) {
        case "register":
        case "read": {
          const reply = this.enqueue(message);
          void reply.then((answer) => child.connected && child.send(answer, () => undefined));
          break;
        }
        case "outputs":
          this.outputs = message.outputs;
          break;
        case "done":
          done = true;
          break;
        case "failed":
          failure = message;
          break;
      }
    });
    return new Promise((resolvePromise) => {
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

  /** Registrations are served one at a time, in the order they arrive. */
  private enqueue(message: Extract<RunnerMessage, { seq: number }>): Promise<RunnerReply> {
    const handled = this.queue.then(async (): Promise<RunnerReply> => {
      try {
        return { seq: message.seq, ...(message.kind === "register" ? await this.register(message) : await this.read(message)) };
      } catch (error) {
        const failure = error instanceof EngineError ? error : new EngineError("STEP_FAILED", String(error), { cause: error });
        if (failure.code !== "CHECK_FAILED" && failure.code !== "SKIPPED") this.errors.push(failure);
        return { seq: message.seq, urn: "", error: failure.message };
      }
    });
    this.queue = handled;
    return handled;
  }

  private urnOf(type: string, name: string, parent: string): string {
    if (!type || !name) throw new EngineError("PROGRAM_FAILED", "A resource was registered without a type or name");
    const parentType = parent ? (parent.split("::")[2] ?? "") : "";
    const qualified = parentType && parentType !== "pulumi:pulumi:Stack" ? `${parentType}$${type}` : type;
    const urn = `urn:pulumi:${this.options.stack}::${this.options.project}::${qualified}::${name}`;
    if (this.urns.has(urn))
      throw new EngineError("PROGRAM_FAILED", `Duplicate resource URN ${urn}: two resources of one type have the same name`);
    this.urns.add(urn);
    return urn;
  }

  private async register(message: Extract<RunnerMessage, { kind: "register" }>): Promise<Omit<RunnerReply, "seq">> {
    const urn = this.urnOf(message.type, message.name, message.parent);
    this.registered.add(urn);
    try {
      return await this.registerStep(urn, message);
    } catch (error) {
      // Its dependents are skipped, and what it depends on is not deleted in this operation.
      this.failedUrns.add(urn);
      this.protect(message.dependencies, message.parent);
      throw error;
    }
  }

  private async registerStep(urn: string, message: Extract<RunnerMessage, { kind: "register" }>): Promise<Omit<RunnerReply, "seq">> {
    if (!message.custom) return { urn, id: "", outputs: message.inputs };
    if (message.unsupported.length > 0) {
      throw new EngineError(
        "UNSUPPORTED",
        `${urn}: the offline engine does not implement the resource option(s) ${message.unsupported.join(", ")}`,
      );
    }
    const old = this.previous.find((resource) => resource.urn === urn && !resource.pendingReplacement);
    const checked = await this.host.check(urn, old ? revealProps(old.inputs) : {}, revealProps(message.inputs)).catch((error: unknown) => {
      throw stepError("check", urn, error);
    });
    if (checked.failures.length > 0) {
      this.failures.push(...checked.failures.map((failure) => ({ urn, ...failure })));
      throw new EngineError(
        "CHECK_FAILED",
        `${urn} failed its checks: ${checked.failures.map((f) => `${f.property}: ${f.reason}`).join("; ")}`,
      );
    }
    // After a check failure no step starts (checks still run, so all failures are reported at once); after a
    // failed step only the steps that depend on it are skipped.
    if (this.failures.length > 0) throw new EngineError("SKIPPED", `${urn} was skipped: a resource failed its checks`);
    const failedDependency = [...message.dependencies, message.parent].find((dependency) => this.failedUrns.has(dependency));
    if (failedDependency) throw new EngineError("SKIPPED", `${urn} was skipped: ${failedDependency} failed`);

    const inputs = annotateSecrets(checked.inputs, message.inputs);
    const base = {
      urn,
      type: message.type,
      name: message.name,
      ...(message.parent ? { parent: message.parent } : {}),
      dependencies: message.dependencies,
      additionalSecretOutputs: message.additionalSecretOutputs,
    };
    const started = Date.now();
    const step = { urn, type: message.type, name: message.name, replaces: [] as string[] };
    if (!old) {
      const created = await this.create(base, inputs);
      return this.commit(created, { ...step, op: "create", changes: [], durationMs: Date.now() - started });
    }

    const diff = await this.host.diff(urn, old.id, revealProps(old.outputs), revealProps(inputs)).catch((error: unknown) => {
      throw stepError("diff", urn, error);
    });
    const changes = changedKeys(old.inputs, inputs);
    const changed = diff.changes === "some" || (diff.changes === "unknown" && changes.length > 0);
    // A resource created with errors is updated even without a change, as the engine does, so that it is finished.
    if (!changed && !old.initErrors) {
      this.fates.set(old, "kept");
      const same = { ...base, id: old.id, inputs, outputs: markSecretOutputs(old.outputs, inputs, base.additionalSecretOutputs) };
      return this.commit(same, { ...step, op: "same", id: old.id, changes: [] });
    }
    if (diff.replaces.length === 0) {
      this.requireSecretStorage(urn, inputs);
      let outputs = inputs;
      if (!this.preview) {
        // A failed update leaves the old state as it was (its fate unset keeps it in the state file).
        const updated = await this.host.update(urn, old.id, revealProps(old.outputs), revealProps(inputs)).catch((error: unknown) => {
          throw stepError("update", urn, error);
        });
        outputs = updated.properties;
      }
      this.fates.set(old, "kept");
      const entry = { ...base, id: old.id, inputs, outputs: markSecretOutputs(outputs, inputs, base.additionalSecretOutputs) };
      return this.commit(entry, { ...step, op: "update", id: old.id, changes, durationMs: Date.now() - started });
    }

    const deleteFirst = message.deleteBeforeReplace ?? diff.deleteBeforeReplace;
    if (deleteFirst && !this.preview) {
      await this.host.delete(urn, old.id, revealProps(old.outputs)).catch((error: unknown) => {
        throw stepError("delete", urn, error);
      });
      this.fates.set(old, "deleted");
      await this.save();
    }
    // The old object stays the resource until its replacement exists (even partly, then both are recorded).
    const created = await this.create(base, inputs, () => this.fates.set(old, deleteFirst ? "deleted" : "replaced"));
    this.fates.set(old, deleteFirst ? "deleted" : "replaced");
    return this.commit(created, { ...step, op: "replace", id: old.id, changes, replaces: diff.replaces, durationMs: Date.now() - started });
  }

  /**
   * Creates (in preview: hands the inputs back). A create that made its object but failed to finish it
   * (the host's ResourceInitError) is recorded with its id, properties and init errors before the step
   * fails, as the engine records it, so that the next run updates it and destroy deletes it.
   */
  private async create(
    base: Omit<ResourceState, "id" | "inputs" | "outputs">,
    inputs: Props,
    onPartial?: () => void,
  ): Promise<ResourceState> {
    this.requireSecretStorage(base.urn, inputs);
    if (this.preview) return { ...base, id: "", inputs, outputs: markSecretOutputs(inputs, inputs, base.additionalSecretOutputs) };
    try {
      const created = await this.host.create(base.urn, revealProps(inputs));
      return { ...base, id: created.id, inputs, outputs: markSecretOutputs(created.properties, inputs, base.additionalSecretOutputs) };
    } catch (error) {
      if (error instanceof ResourceInitError) {
        onPartial?.();
        const outputs = markSecretOutputs(annotateSecrets(error.properties, inputs), inputs, base.additionalSecretOutputs);
        this.next.push({ ...base, id: error.id, inputs, outputs, initErrors: error.reasons });
        await this.save();
      }
      throw stepError("create", base.urn, error);
    }
  }

  /** Records the new state of a registered resource (saving it at once, as the engine checkpoints) and answers the program. */
  private async commit(entry: ResourceState, step: PlanStep): Promise<Omit<RunnerReply, "seq">> {
    this.next.push(entry);
    if (!this.preview) {
      try {
        await this.save();
      } catch (error) {
        if (error instanceof EngineError && error.code === "PASSPHRASE_REQUIRED" && step.op !== "same") {
          error.message = `${entry.urn} (id ${entry.id}) was ${step.op}d but its secret outputs cannot be recorded without a passphrase: ${error.message}`;
        }
        throw error;
      }
    }
    this.record(step);
    return { urn: entry.urn, id: entry.id, outputs: entry.outputs };
  }

  private async read(message: Extract<RunnerMessage, { kind: "read" }>): Promise<Omit<RunnerReply, "seq">> {
    const urn = this.urnOf(message.type, message.name, message.parent);
    if (message.unsupported.length > 0)
      throw new EngineError("UNSUPPORTED", `${urn}: the offline engine does not implement ${message.unsupported.join(", ")}`);
    const started = Date.now();
    const read = await this.host.read(urn, message.id, revealProps(message.inputs)).catch((error: unknown) => {
      throw stepError("read", urn, error);
    });
    if (read.id === "") throw new EngineError("STEP_FAILED", `${urn}: no object with id ${message.id} exists`);
    this.record({
      op: "read",
      urn,
      type: message.type,
      name: message.name,
      id: read.id,
      changes: [],
      replaces: [],
      durationMs: Date.now() - started,
    });
    return { urn, id: read.id, outputs: markSecretOutputs(read.properties, message.inputs, message.additionalSecretOutputs) };
  }

  private requireSecretStorage(urn: string, inputs: Props): void {
    if (!this.preview && !this.state.canStoreSecrets && containsSecret(inputs)) {
      throw new EngineError(
        "PASSPHRASE_REQUIRED",
        `${urn} has secret inputs: pass secretsPassphrase or set PULUMI_CONFIG_PASSPHRASE so the state can encrypt them`,
      );
    }
  }

  /** What the state holds now: this run's resources, then the previous ones not yet dealt with. */
  private snapshot(): Snapshot {
    const remaining = this.previous
      .filter((resource) => this.fates.get(resource) !== "kept" && this.fates.get(resource) !== "deleted")
      .map((resource) => (this.fates.get(resource) === "replaced" ? this.pending(resource) : resource));
    return { resources: [...this.next, ...remaining], outputs: this.outputs };
  }

  /** The replaced object awaiting deletion: one object per resource, so checkpoints see it unchanged. */
  private pending(resource: ResourceState): ResourceState {
    let copy = this.pendingCopies.get(resource);
    if (!copy) this.pendingCopies.set(resource, (copy = { ...resource, pendingReplacement: true }));
    return copy;
  }

  /** A checkpoint (the state journal's entries for what changed), as the engine checkpoints after each step. */
  private save(): Promise<void> {
    return this.state.save(this.snapshot());
  }

  /** The end of the operation: the state file written once (a preview writes nothing). */
  async finish(): Promise<void> {
    if (!this.preview) await this.state.finish(this.snapshot());
  }

  /** Unchanged resources are counted, not printed (as `pulumi` does). */
  private record(step: PlanStep): void {
    this.steps.push(step);
    if (step.op !== "same") this.log(formatStep(step, this.preview));
  }
}

const identity = (resource: ResourceState) => ({ urn: resource.urn, type: resource.type, name: resource.name });

function stepError(operation: string, urn: string, error: unknown): EngineError {
  const message = error instanceof Error ? error.message : String(error);
  return new EngineError("STEP_FAILED", `${operation} of ${urn} failed: ${message}`, { cause: error });
}

/** The runner of the package installed in the program (it shares the program's SDK), else this one. */
function runnerPath(programDir: string): string {
  const installed = findInstalled("pulumi-gms", programDir);
  const candidates = [
    ...(installed ? [join(installed, "dist", "testing", "runner.js")] : []),
    join(__dirname, "runner.js"),
    join(packageRoot(), "dist", "testing", "runner.js"),
  ];
  const found = candidates.find((candidate) => candidate.endsWith(".js") && existsSync(candidate));
  if (!found) throw new EngineError("PROGRAM_FAILED", "No compiled runner (dist/testing/runner.js): run `npm run build`");
  return found;
}
