/**
 * An offline engine for Pulumi programs whose resources are dynamic resources (such as this package's) or
 * this package's native resources (`gms:index:<Kind>`, `pulumi-gms/native`):
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
 * - hands every native resource (`gms:index:<Kind>`) to the provider plugin `pulumi-resource-gms` (the
 *   `dist/plugin/main.js` of the program's installed `pulumi-gms`) over the same gRPC protocol, as its default
 *   provider: started when the first one needs it, once per operation, `configure`d with the stack's `gms:*`
 *   config by the plugin's names (`baseUrl`, `apiKey`, ...), secrets sent as secrets since it accepts them.
 *   The steps below are the same for both; only the provider of a type token and how values are sent differ;
 * - per registration (the decisions are planner.ts's, pure functions that `Deployment` asks and runs the step of):
 *   `check` (olds = the previous inputs); create when new; otherwise `diff` (olds =
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
 * - after a failed step, as the CLI: steps under way finish and no step starts after it (a registration that
 *   arrives later is answered as not started), or with `continueOnError` (`--continue-on-error`) only the
 *   steps that depend on it are skipped; either way nothing it depends on is deleted, every failure is
 *   reported at the end, and every delete held back is reported (`result.heldBack`) and printed with why.
 *   The program is answered as that engine answers it (the registration's result is a failure, not an
 *   error). A create that made its object but failed to finish it (the host's ErrorResourceInitFailed) is
 *   recorded with its id and init errors, and updated by the next `up` even without a change. What the
 *   program no longer declares is deleted only when the program ran to its end. The state is saved
 *   after every step, as the engine checkpoints, so a re-run starts from everything that happened, and
 *   a create is journaled before it is sent, so a run killed mid-create leaves a placeholder the next run
 *   resolves (state.ts; what a placeholder is, and the stack's ids the provider is told, come from one hook, the
 *   `placeholders` option, by default this package's `gmsPlaceholders` of src/provider/window.ts);
 * - steps run in parallel as the engine runs them: a registration is served as soon as it arrives (the
 *   SDK sends it once the resources it depends on are done), up to `parallel` steps at once; deletes run
 *   dependents first, each as soon as everything depending on it is gone, and refresh reads in parallel.
 *   Progress lines and `steps` keep a fixed order whatever order steps finish in: the order the program
 *   constructed its resources (an order that respects dependencies), then the order of the deletes;
 * - refresh reads every resource (an empty ID drops it), keeps the `inputs` a read returns and reports
 *   drift per property when, as the engine decides it, the provider's diff of the refreshed outputs against the
 *   recorded inputs finds a change (what the next `up` would change back); other drift is recorded, not shown;
 *   destroy deletes everything in reverse creation order; a resource read with the `id` option (`.get`) is
 *   read through the provider but, unlike the engine, not recorded;
 * - URNs are the engine's (`urn:pulumi:<stack>::<project>::<parent type$>type::name`, the root stack
 *   type left out); a duplicate URN fails the run;
 * - its children never outlive it: the program process ends when its IPC channel to the engine does, and the
 *   provider host when its standard input (held by the engine) does, so an engine killed outright leaves no
 *   process sending requests whose answers nobody records (parent-watch.ts);
 * - time (step durations, journal times, the lock's start) is read from the `clock` option, the system clock by default;
 * - one `up`, `refresh` or `destroy` at a time per state file, as a Pulumi backend locks a stack: a second is
 *   refused (LOCKED) naming the holder (lock.ts); unlike Pulumi's file backend, which wants `pulumi cancel`, a
 *   lock left by a process of this machine that is gone is taken over.
 *
 * What it does not do: options other than `parent`, `dependsOn`, `deleteBeforeReplace`,
 * `additionalSecretOutputs` (and the ignored `customTimeouts`) are refused, not ignored: protect,
 * ignoreChanges, replaceOnChanges, import, aliases, retainOnDelete, deletedWith, replaceWith, explicit
 * providers (a `pulumi:providers:gms` resource or the `provider` option), transforms, hooks. No provider other
 * than the dynamic one and the gms plugin as default provider, no invokes, no stack references.
 * Component resources, the root stack included, are not recorded or shown. A delete-before-replace does not
 * also replace the dependents. No targets, plans, `--refresh` or `--preview-only` for refresh/destroy.
 * The state file is this engine's JSON (state.ts), not a Pulumi checkpoint.
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { gmsPlaceholders } from "../provider/window";
import { type Clock, systemClock } from "../provider/clock";
import { EngineError } from "./errors";
import type { PlaceholderHook } from "./placeholder-hook";
import { type CheckResult, type DiffResult, MayExistError, ProviderHost, StackIdsFile } from "./host";
import { StateLock } from "./lock";
import { OperationFailures, stepError } from "./operation-failures";
import { OperationState } from "./operation-state";
import { Limiter } from "./parallel";
import { formatHeader, formatOutputs, formatSummary } from "./plan";
import {
  type RefreshFacts,
  type RegistrationFacts,
  type RegistrationPlan,
  planDelete,
  planLeftOver,
  planRead,
  planRefresh,
  planRegistration,
} from "./planner";
import { type ProgramMessage, ProgramProcess, childEnv } from "./program-process";
import { type Props, annotateSecrets, containsSecret, makeSecret, markSecretOutputs, toHostProps, toHostValue } from "./properties";
import type { RunnerMessage, RunnerReply } from "./protocol";
import type { EngineResult, Operation, PlanStep, StackOutput } from "./results";
import { type ResourceState, type Snapshot, StateFile } from "./state";
import { StepReport } from "./step-report";
import { PACKAGE } from "../provider/tokens";

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
  /**
   * How many steps may run at once (as `pulumi up --parallel`); 1 runs them one at a time. Default:
   * unbounded, as the Pulumi CLI's default.
   */
  parallel?: number;
  /**
   * As `pulumi up --continue-on-error` (and `destroy`'s): after a failed step the steps that do not depend on it
   * still start. Default false, the CLI's default: steps under way finish, and no step starts after a failed one.
   */
  continueOnError?: boolean;
  /** What step durations, journal times and the lock's start time are read from (default: the system clock). */
  clock?: Clock;
  /**
   * What is special to the provider's placeholders (what a lost create is recorded as, how the provider learns the
   * stack's ids): the one hook through which the engine learns of them. Default: this package's, `gmsPlaceholders`.
   */
  placeholders?: PlaceholderHook;
}

/** The Pulumi CLI's default for `--parallel`: no bound. */
const UNBOUNDED = 2_147_483_647;

export class LocalEngine {
  constructor(readonly options: EngineOptions) {}

  /** `pulumi preview`: check and diff only; the state and the service are untouched. */
  preview(): Promise<EngineResult> {
    return this.operate("preview", (deployment, program) => deployment.runProgram(program!));
  }

  /** `pulumi up`. */
  up(): Promise<EngineResult> {
    return this.operate("up", (deployment, program) => deployment.runProgram(program!));
  }

  /** `pulumi refresh`: reads every resource; the program does not run. */
  refresh(): Promise<EngineResult> {
    return this.operate("refresh", (deployment) => deployment.refresh());
  }

  /** `pulumi destroy`: deletes every resource, dependents first; the program does not run. */
  destroy(): Promise<EngineResult> {
    return this.operate("destroy", (deployment) => deployment.destroy());
  }

  private async operate(
    operation: Operation,
    run: (deployment: Deployment, program: ProgramProcess | undefined) => Promise<void>,
  ): Promise<EngineResult> {
    const log = this.options.log ?? ((line: string) => console.log(line));
    // One operation at a time per state file, taken before anything starts; preview only reads the state.
    const clock = this.options.clock ?? systemClock;
    const lock = operation === "preview" ? undefined : StateLock.acquire(resolve(this.options.stateFile), operation, log, clock);
    try {
      return await this.operateLocked(operation, run, log);
    } finally {
      lock?.release();
    }
  }

  private async operateLocked(
    operation: Operation,
    run: (deployment: Deployment, program: ProgramProcess | undefined) => Promise<void>,
    log: (line: string) => void,
  ): Promise<EngineResult> {
    const { options } = this;
    const limiter = new Limiter(options.parallel ?? UNBOUNDED);
    const passphrase = options.secretsPassphrase ?? options.env?.PULUMI_CONFIG_PASSPHRASE ?? process.env.PULUMI_CONFIG_PASSPHRASE;
    const config = stackConfig(options);
    const env = childEnv(options.env);
    // The program process, the provider host and the state load start together: the first two spend most
    // of an operation's fixed cost loading @pulumi/pulumi, and neither needs the other to do it.
    const preview = operation === "preview";
    const program =
      preview || operation === "up"
        ? ProgramProcess.start({
            programDir: options.programDir,
            program: options.program ?? "index.ts",
            project: options.project,
            stack: options.stack,
            preview,
            config: config.values,
            secretKeys: config.secretKeys,
            env,
            log,
          })
        : undefined;
    // The ids every resource of the loaded state holds, for the provider: a placeholder never takes one of them.
    const placeholders = options.placeholders ?? gmsPlaceholders;
    // Beside the state file when its folder exists (a first preview makes none): a killed run's is then overwritten and removed by the next.
    const stateDir = dirname(resolve(options.stateFile));
    const stackIds = new StackIdsFile(
      placeholders.stackIdsVariable,
      existsSync(stateDir) ? `${resolve(options.stateFile)}.ids` : undefined,
    );
    const starting = ProviderHost.start({
      cwd: resolve(options.programDir),
      project: options.project,
      stack: options.stack,
      env: { ...env, ...stackIds.env },
      onLog: log,
    });
    const dynamic = started("The dynamic-provider host", starting, (host) => host.configure(config.values));
    // The plugin of the native `gms:index:*` types starts only when a resource of one needs it.
    let startingPlugin: Promise<ProviderHost> | undefined;
    const providers = new Providers(dynamic, () => {
      startingPlugin = ProviderHost.startPlugin({ cwd: resolve(options.programDir), env: { ...env, ...stackIds.env } });
      return started("The gms provider plugin", startingPlugin, (plugin) => plugin.configureArgs(config.pluginArgs));
    });
    const clock = options.clock ?? systemClock;
    const state = new StateFile(resolve(options.stateFile), passphrase, { clock, lostCreate: placeholders.lostCreate });
    const deployment = new Deployment(operation, options, providers, limiter, state, log, clock);
    log(formatHeader(operation, options.project, options.stack));
    try {
      stackIds.write((await deployment.load()).resources.map((resource) => resource.id));
      await run(deployment, program);
      await deployment.finish();
    } catch (error) {
      // What happened before the failure is in the journal; the file is written from it now.
      await deployment.finish().catch(() => undefined);
      const failure =
        error instanceof EngineError ? error : new EngineError("STEP_FAILED", String((error as Error)?.message ?? error), { cause: error });
      failure.result = deployment.result();
      log(formatSummary(failure.result, true));
      log(`error: ${failure.message}`);
      throw failure;
    } finally {
      program?.kill();
      await Promise.all([starting, startingPlugin].map((host) => host?.then((started) => started.close()).catch(() => undefined)));
      stackIds.remove();
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
  /** The `gms:*` keys by the plugin's names (`baseUrl`, `apiKey`, ...), secrets as secrets: the default provider's inputs. */
  pluginArgs: Props;
}

function stackConfig(options: EngineOptions): StackConfig {
  const values: Record<string, string> = {};
  const secretKeys: string[] = [];
  const pluginArgs: Props = {};
  for (const [key, value] of Object.entries(options.config ?? {})) {
    const name = key.includes(":") ? key : `${options.project}:${key}`;
    values[name] = typeof value === "string" ? value : value.secret;
    if (typeof value !== "string") secretKeys.push(name);
    if (name.startsWith(`${PACKAGE}:`))
      pluginArgs[name.slice(PACKAGE.length + 1)] = typeof value === "string" ? value : makeSecret(value.secret);
  }
  return { values, secretKeys, pluginArgs };
}

/** A started and configured provider, or the operation's error saying which did not start. */
function started(what: string, starting: Promise<ProviderHost>, configure: (host: ProviderHost) => Promise<void>): Promise<GrpcProvider> {
  const provider = starting.then(
    async (host) => {
      await configure(host);
      return new GrpcProvider(host);
    },
    (error: Error) => {
      throw new EngineError("STEP_FAILED", `${what} did not start: ${error.message}`, { cause: error });
    },
  );
  // Awaited by the steps and by the operation; a failed start is reported once, by the operation.
  provider.catch(() => undefined);
  return provider;
}

/**
 * A provider over gRPC as the steps use it: values go in as the engine holds them (secrets marked) and are
 * sent as the provider takes them, revealed for the dynamic-provider host, secrets kept for the plugin
 * (resource references downgraded for both, as the engine marshals for a provider that wants IDs).
 */
class GrpcProvider {
  constructor(private readonly host: ProviderHost) {}

  private wire(props: Props): Props {
    const revealed = toHostProps(props);
    return this.host.acceptsSecrets ? annotateSecrets(revealed, props) : revealed;
  }

  check(urn: string, olds: Props, news: Props): Promise<CheckResult> {
    return this.host.check(urn, this.wire(olds), this.wire(news));
  }

  diff(urn: string, id: string, olds: Props, news: Props): Promise<DiffResult> {
    return this.host.diff(urn, id, this.wire(olds), this.wire(news));
  }

  create(urn: string, properties: Props): Promise<{ id: string; properties: Props }> {
    return this.host.create(urn, this.wire(properties));
  }

  read(urn: string, id: string, properties: Props, inputs?: Props): ReturnType<ProviderHost["read"]> {
    return this.host.read(urn, id, this.wire(properties), inputs && this.wire(inputs));
  }

  update(urn: string, id: string, olds: Props, news: Props): Promise<{ properties: Props }> {
    return this.host.update(urn, id, this.wire(olds), this.wire(news));
  }

  delete(urn: string, id: string, properties: Props): Promise<void> {
    return this.host.delete(urn, id, this.wire(properties));
  }
}

/**
 * The providers of one operation, by the type token of the resource: a dynamic resource
 * (`pulumi-nodejs:dynamic...`) goes to the dynamic-provider host, a native one (`gms:index:<Kind>`) to the
 * default gms provider, the plugin, started on first use. Explicit providers are not implemented.
 */
class Providers {
  private plugin: Promise<GrpcProvider> | undefined;

  constructor(
    private readonly dynamic: Promise<GrpcProvider>,
    private readonly startPlugin: () => Promise<GrpcProvider>,
  ) {}

  /** The provider of a resource of `type`. */
  for(urn: string, type: string): Promise<GrpcProvider> {
    if (type.startsWith("pulumi:providers:")) {
      throw new EngineError(
        "UNSUPPORTED",
        `${urn}: the offline engine does not implement explicit providers; native resources use the default provider (stack config \`${PACKAGE}:*\`)`,
      );
    }
    if (!type.startsWith(`${PACKAGE}:`)) return this.dynamic;
    this.plugin ??= this.startPlugin();
    return this.plugin;
  }

  /** Every provider started in this operation; a failed start fails the operation here, once. */
  async started(): Promise<void> {
    await Promise.all([this.dynamic, ...(this.plugin ? [this.plugin] : [])]);
  }
}

type Registration = Extract<RunnerMessage, { kind: "register" }>;
type Reply = Omit<RunnerReply, "seq">;

/**
 * One operation's orchestration: it serves the program's registrations and reads, asks the planner (planner.ts)
 * what each step is, runs it through the provider, and tells the state books (operation-state.ts), the failures
 * (operation-failures.ts) and the step report (step-report.ts) what happened.
 */
class Deployment {
  private readonly state: OperationState;
  private readonly failures: OperationFailures;
  private readonly report: StepReport;
  /** Every URN the program constructed, in its order: a duplicate fails the run. */
  private readonly urns = new Set<string>();
  /** Registrations and reads being served. */
  private readonly serving = new Set<Promise<unknown>>();

  constructor(
    private readonly operation: Operation,
    private readonly options: EngineOptions,
    /** The providers, each started and configured when first needed. */
    private readonly providers: Providers,
    private readonly limiter: Limiter,
    store: StateFile,
    log: (line: string) => void,
    private readonly clock: Clock,
  ) {
    this.state = new OperationState(store, clock);
    this.failures = new OperationFailures(options.continueOnError ?? false);
    this.report = new StepReport(log, this.preview);
  }

  private get preview(): boolean {
    return this.operation === "preview";
  }

  load(): Promise<Snapshot> {
    return this.state.load();
  }

  result(): EngineResult {
    const outputs: Record<string, StackOutput> = {};
    if (this.operation === "preview" || this.operation === "up") {
      for (const [name, value] of Object.entries(this.state.outputs))
        outputs[name] = { value: toHostValue(value), secret: containsSecret(value) };
    }
    return {
      operation: this.operation,
      ...this.report.result(),
      outputs,
      heldBack: this.failures.heldBack,
      stateBytesWritten: this.state.bytesWritten,
    };
  }

  /** preview / up: run the program, serve its registrations, then delete what it no longer declares. */
  async runProgram(program: ProgramProcess): Promise<void> {
    const programFailure = await program.serve(
      (message) => this.serve(message),
      (outputs) => (this.state.outputs = outputs),
    );
    while (this.serving.size > 0) await Promise.all(this.serving);
    // A provider that could not start fails the operation once, not once per resource.
    await this.providers.started();
    this.report.flush();
    const deletes = this.state.leftOver();
    const plan = planLeftOver(this.failures.leftOverFacts(programFailure !== undefined));
    if (plan.step === "hold-back") this.report.heldBack(this.failures.holdBack(deletes, plan.reason));
    else await this.deleteAll(deletes);
    this.failures.throwCheckFailures();
    this.throwReport(programFailure);
  }

  /**
   * Deletes dependents first: each resource once every resource of the list that depends on it (or is
   * its child) is gone, up to `parallel` at once. A failed delete is reported at the end and protects
   * what the resource depends on, so nothing it still needs is deleted before it.
   */
  private async deleteAll(resources: readonly ResourceState[]): Promise<void> {
    const order = [...resources].reverse();
    const first = this.report.nextKey;
    const deleted = new Map<ResourceState, Promise<void>>();
    order.forEach((old, index) => {
      const dependents = order
        .slice(0, index)
        .filter((other) => other.urn !== old.urn && (other.parent === old.urn || other.dependencies.includes(old.urn)));
      const done = Promise.all(dependents.map((dependent) => deleted.get(dependent))).then(() =>
        this.limiter.run(() => this.deleteOne(old, first + index)),
      );
      deleted.set(old, done);
    });
    await Promise.all(deleted.values());
  }

  private async deleteOne(old: ResourceState, key: number): Promise<void> {
    const plan = planDelete({ fate: this.state.fate(old), ...this.failures.deleteFacts(old.urn), preview: this.preview });
    if (plan.step === "hold-back") {
      this.report.heldBack(this.failures.holdBack([old], plan.reason));
      return this.report.settle(key);
    }
    const step = (durationMs?: number): PlanStep | undefined =>
      plan.shown ? { op: "delete", ...identity(old), id: old.id, changes: [], replaces: [], durationMs } : undefined;
    if (this.preview) return this.report.settle(key, step());
    const provider = await this.providers.for(old.urn, old.type);
    const started = this.clock.now();
    try {
      await provider.delete(old.urn, old.id, old.outputs);
    } catch (error) {
      this.failures.deleteFailed(old, error);
      return this.report.settle(key);
    }
    this.state.setFate(old, "deleted");
    await this.state.save();
    this.report.settle(key, step(this.clock.now() - started));
  }

  /** Every failure of the operation, in the order the program registered the resources, then the old state's. */
  private throwReport(programFailure?: EngineError): void {
    this.failures.throwReport([...this.urns, ...this.state.previous.map((old) => old.urn)], programFailure);
  }

  /** Reads every resource, up to `parallel` at once; the state keeps its order. */
  async refresh(): Promise<void> {
    await Promise.all(this.state.previous.map((old, index) => this.limiter.run(() => this.refreshOne(old, index))));
    await this.providers.started();
    this.throwReport();
  }

  private async refreshOne(old: ResourceState, index: number): Promise<void> {
    const keep = () => {
      this.state.setFate(old, "kept");
      this.state.remember(old, index);
      this.report.settle(index);
    };
    const facts: RefreshFacts = { old };
    const started = this.clock.now();
    let provider: GrpcProvider | undefined;
    let read: Awaited<ReturnType<ProviderHost["read"]>> | undefined;
    /** The read's step, less its op and changes (timed by the read). */
    let step: Omit<PlanStep, "op" | "changes"> | undefined;
    for (;;) {
      const plan = planRefresh(facts);
      switch (plan.step) {
        case "keep":
          return keep();
        case "read":
          try {
            provider = await this.providers.for(old.urn, old.type);
            read = await provider.read(old.urn, old.id, old.outputs, old.inputs);
            facts.read = read;
            step = { ...identity(old), id: old.id, replaces: [], durationMs: this.clock.now() - started };
          } catch (error) {
            // Kept as it was; the other resources are still refreshed.
            this.failures.failed(stepError("read", old.urn, error));
            facts.read = "failed";
          }
          continue;
        case "drop":
          this.state.setFate(old, "deleted");
          await this.state.save();
          return this.report.settle(index, { ...step!, op: "delete", changes: [] });
        case "diff": {
          const outputs = markSecretOutputs(annotateSecrets(read!.properties, old.outputs), plan.inputs, old.additionalSecretOutputs);
          this.state.setFate(old, "kept");
          this.state.remember({ ...old, id: read!.id, inputs: plan.inputs, outputs }, index);
          await this.state.save();
          facts.outputs = outputs;
          facts.diff = await provider!.diff(old.urn, read!.id, outputs, old.inputs).catch((error: unknown) => {
            this.failures.failed(stepError("diff", old.urn, error));
            return "failed" as const;
          });
          continue;
        }
        default:
          return this.report.settle(index, { ...step!, op: plan.step, changes: plan.changes });
      }
    }
  }

  async destroy(): Promise<void> {
    await this.deleteAll(this.state.previous);
    this.state.outputs = {};
    this.throwReport();
  }

  /** Serves a registration or read as soon as it arrives (the SDK sends it once its dependencies are done), within the limit. */
  private serve(message: ProgramMessage): Promise<RunnerReply> {
    const handled = this.limiter
      .run(
        async (): Promise<RunnerReply> => ({
          seq: message.seq,
          ...(message.kind === "register" ? await this.register(message) : await this.read(message)),
        }),
      )
      .catch((error: unknown): RunnerReply => {
        const failure = this.failures.answered(error);
        // A failed step is answered as `pulumi up --continue-on-error` answers it: the registration's result is a
        // failure (the SDK rejects the resource's outputs), not a monitor error. Anything else fails the registration.
        const urn = this.failures.failedStep(failure);
        if (urn) return { seq: message.seq, urn, failed: failure.message };
        return { seq: message.seq, urn: "", error: failure.message };
      })
      .finally(() => {
        this.report.settle(message.order);
        this.serving.delete(handled);
      });
    this.serving.add(handled);
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

  /** The provider of a resource: a provider that did not start skips it (the operation reports the start once). */
  private async providerOf(urn: string, type: string): Promise<GrpcProvider> {
    return this.providers.for(urn, type).catch(() => {
      throw new EngineError("SKIPPED", `${urn} was skipped: its provider did not start`);
    });
  }

  private async register(message: Registration): Promise<Reply> {
    const urn = this.urnOf(message.type, message.name, message.parent);
    this.state.declared(urn);
    try {
      return await this.registerStep(urn, message);
    } catch (error) {
      this.failures.registrationFailed({ urn, dependencies: message.dependencies, parent: message.parent }, error);
      throw error;
    }
  }

  /** Asks the provider what the planner asks for, then runs the step it decides (planner.ts). */
  private async registerStep(urn: string, message: Registration): Promise<Reply> {
    const facts: RegistrationFacts = {
      goal: { ...message, urn },
      old: this.state.old(urn),
      progress: this.failures.progress(this.preview),
    };
    let host: GrpcProvider | undefined;
    for (;;) {
      const plan = planRegistration(facts);
      switch (plan.step) {
        case "component":
          return { urn, id: "", outputs: message.inputs };
        case "refuse":
          throw new EngineError("UNSUPPORTED", plan.reason);
        case "check":
          host = await this.providerOf(urn, message.type);
          facts.check = await host.check(urn, facts.old ? facts.old.inputs : {}, message.inputs).catch((error: unknown) => {
            throw stepError("check", urn, error);
          });
          // Read once the check is answered: other steps ran meanwhile.
          facts.progress = this.failures.progress(this.preview);
          continue;
        case "check-failed":
          this.failures.checkFailed(plan.failures);
          throw new EngineError("CHECK_FAILED", plan.reason);
        case "skip":
          throw new EngineError("SKIPPED", plan.reason);
        case "diff":
          facts.diff = await host!.diff(urn, facts.old!.id, facts.old!.outputs, plan.inputs).catch((error: unknown) => {
            throw stepError("diff", urn, error);
          });
          continue;
        default:
          return this.runStep(host!, message, urn, facts.old, plan);
      }
    }
  }

  /** Runs a registration's step: a create, same, update or replacement. */
  private async runStep(
    host: GrpcProvider,
    message: Registration,
    urn: string,
    old: ResourceState | undefined,
    plan: Extract<RegistrationPlan, { step: "create" | "same" | "update" | "replace" | "delete-before-replace" }>,
  ): Promise<Reply> {
    const { inputs } = plan;
    const base = {
      urn,
      type: message.type,
      name: message.name,
      ...(message.parent ? { parent: message.parent } : {}),
      dependencies: message.dependencies,
      additionalSecretOutputs: message.additionalSecretOutputs,
    };
    const order = message.order;
    const started = this.clock.now();
    const step = { urn, type: message.type, name: message.name, replaces: [] as string[] };
    if (plan.step === "create" || !old) {
      const created = await this.create(host, base, inputs, order);
      return this.commit(created, order, { ...step, op: "create", changes: [], durationMs: this.clock.now() - started });
    }
    if (plan.step === "same") {
      this.state.setFate(old, "kept");
      const same = { ...base, id: old.id, inputs, outputs: markSecretOutputs(old.outputs, inputs, base.additionalSecretOutputs) };
      return this.commit(same, order, { ...step, op: "same", id: old.id, changes: [] });
    }
    if (plan.step === "update") {
      this.requireSecretStorage(urn, inputs);
      let outputs = inputs;
      if (!this.preview) {
        // A failed update leaves the old state as it was (its fate unset keeps it in the state file).
        const updated = await host.update(urn, old.id, old.outputs, inputs).catch((error: unknown) => {
          throw stepError("update", urn, error);
        });
        outputs = updated.properties;
      }
      this.state.setFate(old, "kept");
      const entry = { ...base, id: old.id, inputs, outputs: markSecretOutputs(outputs, inputs, base.additionalSecretOutputs) };
      return this.commit(entry, order, {
        ...step,
        op: "update",
        id: old.id,
        changes: plan.changes,
        durationMs: this.clock.now() - started,
      });
    }

    const deleteFirst = plan.step === "delete-before-replace";
    const fate = deleteFirst ? "deleted" : "replaced";
    if (deleteFirst && !this.preview) {
      await host.delete(urn, old.id, old.outputs).catch((error: unknown) => {
        throw stepError("delete", urn, error);
      });
      this.state.setFate(old, "deleted");
      await this.state.save();
    }
    // The old object stays the resource until its replacement exists (even partly, then both are recorded).
    const created = await this.create(host, base, inputs, order, () => this.state.setFate(old, fate));
    this.state.setFate(old, fate);
    return this.commit(created, order, {
      ...step,
      op: "replace",
      id: old.id,
      changes: plan.changes,
      replaces: plan.replaces,
      durationMs: this.clock.now() - started,
    });
  }

  /**
   * Creates (in preview: hands the inputs back). A create that made its object but failed to finish it
   * (the host's MayExistError, the engine's ErrorResourceInitFailed) is recorded with its id, properties and init errors before the step
   * fails, as the engine records it, so that the next run updates it and destroy deletes it.
   */
  private async create(
    host: GrpcProvider,
    base: Omit<ResourceState, "id" | "inputs" | "outputs">,
    inputs: Props,
    order: number | undefined,
    onPartial?: () => void,
  ): Promise<ResourceState> {
    this.requireSecretStorage(base.urn, inputs);
    if (this.preview) return { ...base, id: "", inputs, outputs: markSecretOutputs(inputs, inputs, base.additionalSecretOutputs) };
    const intent = await this.state.creating({ ...base, inputs });
    try {
      const created = await host.create(base.urn, inputs);
      const entry = {
        ...base,
        id: created.id,
        inputs,
        outputs: markSecretOutputs(created.properties, inputs, base.additionalSecretOutputs),
      };
      this.state.created(entry, intent);
      return entry;
    } catch (error) {
      if (error instanceof MayExistError && error.made.state === "made") {
        onPartial?.();
        const outputs = markSecretOutputs(annotateSecrets(error.made.outputs, inputs), inputs, base.additionalSecretOutputs);
        this.state.remember({ ...base, id: error.made.id, inputs, outputs, initErrors: error.reasons }, order);
      }
      // Recorded (a partial create), or nothing was made: the create is settled either way.
      this.state.settle(intent);
      await this.state.save();
      throw stepError("create", base.urn, error);
    }
  }

  /** Records the new state of a registered resource (saving it at once, as the engine checkpoints) and answers the program. */
  private async commit(entry: ResourceState, order: number | undefined, step: PlanStep): Promise<Reply> {
    this.state.record(entry, order);
    if (!this.preview) {
      try {
        await this.state.save();
      } catch (error) {
        if (error instanceof EngineError && error.code === "PASSPHRASE_REQUIRED" && step.op !== "same") {
          const why = `${entry.urn} (id ${entry.id}) was ${step.op}d but its secret outputs cannot be recorded without a passphrase`;
          throw new EngineError("PASSPHRASE_REQUIRED", `${why}: ${error.message}`, { cause: error });
        }
        throw error;
      }
    }
    this.report.settle(order, step);
    return { urn: entry.urn, id: entry.id, outputs: entry.outputs };
  }

  private async read(message: Extract<RunnerMessage, { kind: "read" }>): Promise<Reply> {
    const urn = this.urnOf(message.type, message.name, message.parent);
    const facts: Parameters<typeof planRead>[0] = { urn, id: message.id, unsupported: message.unsupported };
    let started = 0;
    let read: Awaited<ReturnType<ProviderHost["read"]>> | undefined;
    for (;;) {
      const plan = planRead(facts);
      switch (plan.step) {
        case "refuse":
          throw new EngineError("UNSUPPORTED", plan.reason);
        case "read": {
          const host = await this.providerOf(urn, message.type);
          started = this.clock.now();
          read = await host.read(urn, message.id, message.inputs).catch((error: unknown) => {
            throw stepError("read", urn, error);
          });
          facts.read = read;
          continue;
        }
        case "missing":
          throw new EngineError("STEP_FAILED", plan.reason);
        case "done":
          this.report.settle(message.order, {
            op: "read",
            urn,
            type: message.type,
            name: message.name,
            id: read!.id,
            changes: [],
            replaces: [],
            durationMs: this.clock.now() - started,
          });
          return { urn, id: read!.id, outputs: markSecretOutputs(read!.properties, message.inputs, message.additionalSecretOutputs) };
      }
    }
  }

  private requireSecretStorage(urn: string, inputs: Props): void {
    if (!this.preview && !this.state.canStoreSecrets && containsSecret(inputs)) {
      throw new EngineError(
        "PASSPHRASE_REQUIRED",
        `${urn} has secret inputs: pass secretsPassphrase or set PULUMI_CONFIG_PASSPHRASE so the state can encrypt them`,
      );
    }
  }

  /** The end of the operation: the state file written once (a preview writes nothing). */
  async finish(): Promise<void> {
    if (!this.preview) await this.state.finish();
  }
}

const identity = (resource: ResourceState) => ({ urn: resource.urn, type: resource.type, name: resource.name });
