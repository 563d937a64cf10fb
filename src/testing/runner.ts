/**
 * The program process of the offline engine (forked by engine.ts, cwd = the program directory), in the
 * role of Pulumi's Node.js language host (`@pulumi/pulumi/cmd/run`): it loads the program's own
 * `@pulumi/pulumi`, installs the SDK's mock monitor with `setMocks` (project, stack, preview), then
 * answers the monitor's RegisterResource / ReadResource / RegisterResourceOutputs itself by asking the
 * parent over IPC and waiting for the reply. The mock's `newResource` callback is not used because it
 * hides the parent, dependencies and options of a registration, which the engine needs. The program
 * runs inside `runInPulumiStack` as under `pulumi up`: the root stack resource parents everything and
 * its registered outputs are the stack outputs.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { deferGrpc, deferSdkModules } from "./defer-sdk";
import { withoutStackTraces } from "./errors";
import { type RunnerArgs, type RunnerMessage, type RunnerReply, batchedSender } from "./protocol";

type Props = Record<string, unknown>;
type Callback = (error: Error | null, response?: unknown) => void;
interface Request {
  [getter: string]: () => unknown;
}
interface ProtoStruct {
  toJavaScript(): Props;
}

const args = JSON.parse(process.argv[2] ?? "{}") as RunnerArgs;
const programDir = process.cwd();
const fromProgram = createRequire(join(programDir, "package.json"));
const pulumiDir = dirname(fromProgram.resolve("@pulumi/pulumi/package.json"));
const fromPulumi = createRequire(join(pulumiDir, "package.json"));
deferSdkModules(pulumiDir);
deferGrpc(pulumiDir);
const pulumi = fromProgram("@pulumi/pulumi") as typeof import("@pulumi/pulumi");
const resproto = fromPulumi("./proto/resource_pb") as Record<string, new () => Record<string, (value: unknown) => void>>;
/** `pulumirpc.Result.FAIL`: the engine's answer to the registration of a resource whose step failed. */
const RESULT_FAIL = 1;
const { Struct } = fromPulumi("google-protobuf/google/protobuf/struct_pb") as { Struct: { fromJavaScript(value: Props): unknown } };

/**
 * The SDK records a stack trace on every promise it tracks and prints those traces only when
 * PULUMI_DEBUG_PROMISE_LEAKS is set; formatting them is about a fifth of the program process's CPU time
 * with a few hundred resources. Without that variable they are not captured: nothing would print them.
 */
function skipUnprintedPromiseTraces(): void {
  const debuggable = fromPulumi("./runtime/debuggable") as {
    debugPromiseLeaks?: boolean;
    debuggablePromise?: (...args: unknown[]) => unknown;
  };
  const original = debuggable.debuggablePromise;
  if (debuggable.debugPromiseLeaks || typeof original !== "function") return;
  debuggable.debuggablePromise = (...args: unknown[]) => withoutStackTraces(() => original(...args));
}
skipUnprintedPromiseTraces();

/**
 * For every resource the SDK captures the whole stack (no depth limit, each frame parsed and turned into a
 * file URL) to send its source position and stack trace with the registration. The Pulumi engine uses them
 * to point at the program's line in its diagnostics; this engine reports none, so they are not captured.
 */
function skipSourcePositions(): void {
  const resource = pulumi.Resource as unknown as { stackTrace?: (skip: number) => unknown[] };
  if (typeof resource.stackTrace === "function") resource.stackTrace = () => [];
}
skipSourcePositions();

const send = batchedSender<RunnerMessage>((batch, written) => process.send!(batch, () => written()));

let nextSeq = 0;
const waiting = new Map<number, (reply: RunnerReply) => void>();
process.on("message", (replies: RunnerReply[]) => {
  for (const reply of replies) waiting.get(reply.seq)?.(reply);
});
// The engine is gone (it exited, or was killed without a chance to end this process): nothing is left to
// register with, so the program ends at once.
process.on("disconnect", () => process.exit(1));

type Question = Extract<RunnerMessage, { seq: number }> extends infer M ? (M extends unknown ? Omit<M, "seq"> : never) : never;

/** One round trip to the engine; an engine-side error fails the registration, as a monitor error does. */
async function ask(message: Question): Promise<RunnerReply> {
  const seq = ++nextSeq;
  const reply = new Promise<RunnerReply>((done) => waiting.set(seq, done));
  await send({ ...message, seq } as RunnerMessage);
  const answer = await reply;
  waiting.delete(seq);
  if (answer.error !== undefined) throw new Error(answer.error);
  return answer;
}

/** Options this engine does not implement; refusing them beats pretending. */
function unsupportedOptions(req: Request): string[] {
  const set = (name: string, value: unknown) => (Array.isArray(value) ? value.length > 0 : Boolean(value)) && name;
  const hooks = req.getHooks?.() as { toObject(): Record<string, unknown[]> } | undefined;
  return [
    set("protect", req.getProtect?.()),
    set("ignoreChanges", req.getIgnorechangesList?.()),
    set("replaceOnChanges", req.getReplaceonchangesList?.()),
    set("import", req.getImportid?.()),
    set("retainOnDelete", req.getRetainondelete?.()),
    set("deletedWith", req.getDeletedwith?.()),
    set("replaceWith", req.getReplaceWithList?.()),
    set("replacementTrigger", req.hasReplacementTrigger?.()),
    set("provider", req.getProvider?.()),
    set("aliases", [...((req.getAliasesList?.() as unknown[]) ?? []), ...((req.getAliasurnsList?.() as unknown[]) ?? [])]),
    set("transforms", req.getTransformsList?.()),
    set("hooks", hooks ? Object.values(hooks.toObject()).flat() : []),
    set("remote components", req.getRemote?.()),
  ].filter((name): name is string => typeof name === "string");
}

let stackUrn: string | undefined;

/**
 * The order the program constructs its resources in, which is also an order that respects their
 * dependencies: the engine reports steps in it, however the parallel steps finish. A stack
 * transformation sees every resource synchronously in its constructor (and changes nothing); the
 * registration that follows is matched to it by type and name, first constructed first.
 */
let constructed = 0;
const constructionOrder = new Map<string, number[]>();
const orderKey = (type: string, name: string) => `${type}::${name}`;
function recordConstruction(): void {
  pulumi.runtime.registerStackTransformation(({ type, name }) => {
    const key = orderKey(type, name);
    constructionOrder.set(key, [...(constructionOrder.get(key) ?? []), constructed++]);
    return undefined;
  });
}
function takeOrder(type: string, name: string): number | undefined {
  return constructionOrder.get(orderKey(type, name))?.shift();
}

function respond<T>(callback: Callback, work: Promise<T>, build: (value: T) => unknown) {
  work.then(
    (value) => callback(null, build(value)),
    (error: Error) => callback(error),
  );
}

async function main(): Promise<void> {
  await pulumi.runtime.setMocks(
    {
      newResource: () => {
        throw new Error("unreachable: registrations go to the engine");
      },
      call: (call) => {
        throw new Error(`Invokes are not supported by the offline engine (${call.token})`);
      },
    },
    args.project,
    args.stack,
    args.preview,
  );
  const monitor = pulumi.runtime.getMonitor() as unknown as Record<string, (req: Request, callback: Callback) => void>;

  monitor.registerResource = (req, callback) => {
    const custom = req.getCustom!() as boolean;
    const registration = ask({
      kind: "register",
      order: takeOrder(req.getType!() as string, req.getName!() as string),
      type: req.getType!() as string,
      name: req.getName!() as string,
      parent: req.getParent!() as string,
      custom,
      inputs: (req.getObject!() as ProtoStruct | undefined)?.toJavaScript() ?? {},
      dependencies: req.getDependenciesList!() as string[],
      deleteBeforeReplace: req.getDeletebeforereplacedefined!() ? (req.getDeletebeforereplace!() as boolean) : undefined,
      additionalSecretOutputs: req.getAdditionalsecretoutputsList!() as string[],
      unsupported: unsupportedOptions(req),
    });
    respond(callback, registration, (reply) => {
      if (!custom && req.getType!() === "pulumi:pulumi:Stack" && !req.getParent!()) stackUrn = reply.urn;
      const response = new resproto.RegisterResourceResponse!();
      response.setUrn!(reply.urn);
      if (reply.failed !== undefined) response.setResult!(RESULT_FAIL);
      response.setId!(reply.id ?? "");
      response.setObject!(Struct.fromJavaScript(reply.outputs ?? {}));
      return response;
    });
  };

  monitor.readResource = (req, callback) => {
    const read = ask({
      kind: "read",
      order: takeOrder(req.getType!() as string, req.getName!() as string),
      type: req.getType!() as string,
      name: req.getName!() as string,
      parent: req.getParent!() as string,
      id: req.getId!() as string,
      inputs: (req.getProperties!() as ProtoStruct | undefined)?.toJavaScript() ?? {},
      dependencies: req.getDependenciesList!() as string[],
      additionalSecretOutputs: req.getAdditionalsecretoutputsList!() as string[],
      unsupported: req.getProvider!() ? ["provider"] : [],
    });
    respond(callback, read, (reply) => {
      const response = new resproto.ReadResourceResponse!();
      response.setUrn!(reply.urn);
      response.setProperties!(Struct.fromJavaScript(reply.outputs ?? {}));
      return response;
    });
  };

  monitor.registerResourceOutputs = (req, callback) => {
    const urn = req.getUrn!() as string;
    if (urn !== stackUrn) return callback(null, {});
    const outputs = (req.getOutputs!() as ProtoStruct | undefined)?.toJavaScript() ?? {};
    respond(callback, send({ kind: "outputs", outputs }), () => ({}));
  };

  await pulumi.runtime.runInPulumiStack(() => {
    recordConstruction();
    return runProgram();
  });
  // Registrations started on later turns of the event loop still count, as under `pulumi up`.
  await (pulumi.runtime as unknown as { waitForRPCs(): Promise<void> }).waitForRPCs();
}

/** Loads the entry as `cmd/run` does: `import()` for an ES module project (or an .mjs/.mts file), else `require`. */
async function runProgram(): Promise<unknown> {
  const entry = realpathSync(resolve(programDir, args.program));
  if (statSync(entry).isDirectory()) throw new Error(`The program entry ${entry} is a directory; name a file`);
  const packageJson = join(programDir, "package.json");
  const isModule =
    /\.m[jt]s$/.test(entry) ||
    (existsSync(packageJson) && (JSON.parse(readFileSync(packageJson, "utf8")) as { type?: string }).type === "module");
  let exported: unknown;
  if (isModule) {
    const namespace = (await import(pathToFileURL(entry).href)) as Props;
    if (Object.getOwnPropertyDescriptor(namespace, "default") !== undefined) {
      if (Object.keys(namespace).length !== 1)
        throw new Error("expected entrypoint module to have either a default export or named exports but not both");
      exported = namespace.default;
    } else {
      exported = namespace;
    }
  } else {
    exported = fromProgram(entry);
  }
  return exported instanceof Function ? await (exported as () => unknown)() : exported;
}

/**
 * As `cmd/run` does: an uncaught error fails the run (exit code 1) but does not cut it short; the
 * process ends when the program's own work does, so an apply that throws after the last registration
 * still counts. The IPC channel is unreferenced once the program is done so that it keeps nothing alive.
 * A `pulumi.RunError` (recognised as the SDK does, by its marker, so that one from another copy of the
 * SDK counts) is reported by its message alone, as the CLI prints it; any other error with its stack.
 */
let failed = false;
const fail = (error: unknown) => {
  process.exitCode = 1;
  if (failed) return;
  failed = true;
  const runError = pulumi.RunError.isInstance(error);
  const text = runError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
  void send({ kind: "failed", error: text, runError });
};
process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);

main()
  .then(async () => {
    if (pulumi.log.hasErrors()) fail(new Error("The program logged errors"));
    await send({ kind: "done" });
  }, fail)
  .finally(() => (process.channel as unknown as { unref(): void } | undefined)?.unref());
