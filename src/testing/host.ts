/**
 * Drives the real `@pulumi/pulumi` dynamic-provider host (`cmd/dynamic-provider`) over gRPC, exactly
 * as the Pulumi engine does: spawn it, read its port from stdout, then Configure / Check / Diff /
 * Create / Read / Update / Delete with the generated gRPC client and protobuf Structs. The modules
 * are loaded from the `@pulumi/pulumi` that the program uses, so the host and messages match it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { MayExistError } from "../client";
import { withoutStackTraces } from "./errors";
import { type LogEngine, startLogEngine } from "./log-engine";
import { compiledTestingFile, findInstalled, packageRoot } from "./program-dir";

type Props = Record<string, unknown>;

/* Minimal shapes of the generated protobuf/gRPC modules (they ship without usable typings here). */
interface Message {
  [setter: string]: unknown;
}
interface StructModule {
  Struct: { fromJavaScript(value: Props): unknown };
}
interface StructValue {
  toJavaScript(): Props;
}
type GrpcError = Error & { metadata?: { get(key: string): unknown[] } };
type GrpcClient = Record<string, (request: unknown, callback: (error: GrpcError | null, response: Message) => void) => void> & {
  close(): void;
};
interface StatusModule {
  Status: { deserializeBinary(bytes: Uint8Array): { getDetailsList(): { getTypeName(): string; getValue_asU8(): Uint8Array }[] } };
}

export { MayExistError };

export interface CheckResult {
  inputs: Props;
  failures: { property: string; reason: string }[];
}
export interface DiffResult {
  changes: "none" | "some" | "unknown";
  replaces: string[];
  deleteBeforeReplace: boolean;
}

export interface HostOptions {
  /** The program directory: the host resolves `require("pulumi-gms/...")` in `__provider` from here. */
  cwd: string;
  project?: string;
  stack?: string;
  env?: NodeJS.ProcessEnv;
  /** Where `@pulumi/pulumi` is resolved from (default: `cwd`). */
  resolveFrom?: string;
  /**
   * Receives each line the provider logs at info, warning or error level, as `<severity>: <message>` (sent to the engine's
   * log, which the host serves: ./log-engine.ts), as the Pulumi CLI shows them among the stack's diagnostics.
   */
  onLog?: (line: string) => void;
}

/**
 * The file that tells the provider the id of every resource in the stack's state, under the variable its
 * placeholder hook names (`PlaceholderHook.stackIdsVariable`), so that a placeholder never takes another
 * resource's object: named in the host's environment when it starts, written once the state is loaded, before any step.
 * LocalEngine keeps it beside the state file when that file's folder exists, so that one a killed run left is overwritten
 * and removed by the next.
 */
export class StackIdsFile {
  constructor(
    private readonly variable: string,
    readonly path = join(tmpdir(), `stack-ids-${randomUUID()}.txt`),
  ) {}

  /** The environment that names the file. */
  get env(): NodeJS.ProcessEnv {
    return { [this.variable]: this.path };
  }

  write(ids: Iterable<string | undefined>): void {
    const lines = [...ids].filter((id): id is string => typeof id === "string" && id !== "");
    writeFileSync(this.path, lines.map((id) => `${id}\n`).join(""), { mode: 0o600 });
  }

  remove(): void {
    rmSync(this.path, { force: true });
  }
}

/** The directory of the `@pulumi/pulumi` whose gRPC client and messages talk to the provider. */
const sdkDirOf = (options: HostOptions): string =>
  dirname(require.resolve("@pulumi/pulumi/package.json", { paths: [options.resolveFrom ?? options.cwd] }));

export class ProviderHost {
  private constructor(
    private readonly child: ChildProcess,
    private readonly client: GrpcClient,
    private readonly proto: Record<string, new () => Message>,
    private readonly struct: StructModule,
    private readonly status: StatusModule,
    /** What the host wrote to stderr (provider errors are printed there too). */
    readonly stderr: string[],
    /** Whether the provider takes secrets as secrets (the plugin); the dynamic-provider host takes none. */
    readonly acceptsSecrets: boolean,
    private readonly logEngine: LogEngine,
  ) {}

  static async start(options: HostOptions): Promise<ProviderHost> {
    const pulumiDir = sdkDirOf(options);
    // The host never serializes a function: the SDK's closure serializer is loaded only if something calls it (defer-sdk.ts).
    const preload = compiledTestingFile("defer-sdk-preload.js", options.cwd);
    // The host ends when its standard input does, that is when this process is gone (parent-watch.ts).
    const watch = compiledTestingFile("parent-watch.js", options.cwd);
    if (!watch) throw new Error("No compiled parent-watch.js beside the engine: run `npm run build`");
    const nodeArgs = [...(preload ? ["--require", preload] : []), "--require", watch];
    const logEngine = await startLogEngine(options.onLog ?? (() => undefined));
    const child = spawn(process.execPath, [...nodeArgs, join(pulumiDir, "cmd/dynamic-provider/index.js"), logEngine.address], {
      cwd: options.cwd,
      env: {
        ...process.env,
        ...options.env,
        PULUMI_NODEJS_PROJECT: options.project ?? "gms",
        PULUMI_NODEJS_STACK: options.stack ?? "dev",
        PULUMI_GMS_SDK_DIR: pulumiDir,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    return ProviderHost.connect(child, pulumiDir, "dynamic-provider host", false, logEngine);
  }

  /**
   * The native provider plugin, `pulumi-resource-gms` (`dist/plugin/main.js` of the `pulumi-gms` installed in
   * the program directory, else this package's), started as the engine starts a plugin: its standard input a
   * pipe, whose end (this process gone) ends it. Unlike the dynamic-provider host it accepts secrets.
   */
  static async startPlugin(options: HostOptions): Promise<ProviderHost> {
    const installed = findInstalled("pulumi-gms", options.cwd) ?? packageRoot();
    const main = join(installed, "dist", "plugin", "main.js");
    if (!existsSync(main)) throw new Error(`No ${main}: run \`npm run build\``);
    const logEngine = await startLogEngine(options.onLog ?? (() => undefined));
    const child = spawn(process.execPath, [main, logEngine.address], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    return ProviderHost.connect(
      child,
      sdkDirOf({ ...options, resolveFrom: options.resolveFrom ?? installed }),
      "gms provider plugin",
      true,
      logEngine,
    );
  }

  /** Reads the port `child` prints on its first line and makes the gRPC client of the SDK in `pulumiDir`. */
  private static async connect(
    child: ChildProcess,
    pulumiDir: string,
    what: string,
    acceptsSecrets: boolean,
    logEngine: LogEngine,
  ): Promise<ProviderHost> {
    const load = (id: string) => {
      try {
        return require(require.resolve(id, { paths: [pulumiDir] })) as Record<string, unknown>;
      } catch (error) {
        child.kill("SIGTERM");
        logEngine.close();
        throw error;
      }
    };
    const grpc = load("@grpc/grpc-js") as { credentials: { createInsecure(): unknown } };
    const services = load(join(pulumiDir, "proto/provider_grpc_pb")) as {
      ResourceProviderClient: new (address: string, credentials: unknown) => GrpcClient;
    };
    const proto = load(join(pulumiDir, "proto/provider_pb")) as Record<string, new () => Message>;
    const struct = load("google-protobuf/google/protobuf/struct_pb") as unknown as StructModule;
    const status = load(join(pulumiDir, "proto/status_pb")) as unknown as StatusModule;
    const stderr: string[] = [];
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      const onData = (chunk: string) => {
        out += chunk;
        const line = out.split("\n")[0]!.trim();
        if (out.includes("\n") && /^\d+$/.test(line)) {
          child.stdout!.off("data", onData);
          // Read on, so that the pipe does not fill up.
          child.stdout!.resume();
          resolve(Number(line));
        }
      };
      child.stdout!.setEncoding("utf8").on("data", onData);
      child.once("exit", (code) => {
        logEngine.close();
        reject(new Error(`${what} exited with ${code}: ${stderr.join("")}`));
      });
      child.once("error", reject);
    });
    const client = new services.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    return new ProviderHost(child, client, proto, struct, status, stderr, acceptsSecrets, logEngine);
  }

  /** Stack config as the engine passes it (`gms:apiKey` etc., secrets already decrypted). */
  async configure(config: Record<string, string>): Promise<void> {
    await this.call("configure", "ConfigureRequest", { Args: this.toStruct(config), Acceptsecrets: true, Acceptresources: true });
  }

  /** The plugin's configuration, as the engine passes a provider's inputs (`baseUrl`, `apiKey`, ...; secrets kept). */
  async configureArgs(args: Props): Promise<void> {
    await this.call("configure", "ConfigureRequest", { Args: this.toStruct(args), Acceptsecrets: true, Acceptresources: true });
  }

  async check(urn: string, olds: Props, news: Props): Promise<CheckResult> {
    const response = await this.call("check", "CheckRequest", { Urn: urn, Olds: this.toStruct(olds), News: this.toStruct(news) });
    const failures = (response.getFailuresList as () => Message[])().map((failure) => ({
      property: (failure.getProperty as () => string)(),
      reason: (failure.getReason as () => string)(),
    }));
    return { inputs: this.fromStruct(response, "getInputs"), failures };
  }

  async diff(urn: string, id: string, olds: Props, news: Props): Promise<DiffResult> {
    const response = await this.call("diff", "DiffRequest", { Urn: urn, Id: id, Olds: this.toStruct(olds), News: this.toStruct(news) });
    const changes = (response.getChanges as () => number)();
    return {
      changes: changes === 2 ? "some" : changes === 1 ? "none" : "unknown",
      replaces: (response.getReplacesList as () => string[])(),
      deleteBeforeReplace: (response.getDeletebeforereplace as () => boolean)(),
    };
  }

  async create(urn: string, properties: Props): Promise<{ id: string; properties: Props }> {
    const response = await this.call("create", "CreateRequest", { Urn: urn, Properties: this.toStruct(properties) });
    return { id: (response.getId as () => string)(), properties: this.fromStruct(response, "getProperties") };
  }

  async read(
    urn: string,
    id: string,
    properties: Props,
    inputs: Props = {},
  ): Promise<{ id: string; properties: Props; inputs: Props | undefined }> {
    const response = await this.call("read", "ReadRequest", {
      Urn: urn,
      Id: id,
      Properties: this.toStruct(properties),
      Inputs: this.toStruct(inputs),
    });
    const hasInputs = (response.hasInputs as () => boolean)();
    return {
      id: (response.getId as () => string)(),
      properties: this.fromStruct(response, "getProperties"),
      inputs: hasInputs ? this.fromStruct(response, "getInputs") : undefined,
    };
  }

  async update(urn: string, id: string, olds: Props, news: Props): Promise<{ properties: Props }> {
    const response = await this.call("update", "UpdateRequest", { Urn: urn, Id: id, Olds: this.toStruct(olds), News: this.toStruct(news) });
    return { properties: this.fromStruct(response, "getProperties") };
  }

  async delete(urn: string, id: string, properties: Props): Promise<void> {
    await this.call("delete", "DeleteRequest", { Urn: urn, Id: id, Properties: this.toStruct(properties) });
  }

  async close(): Promise<void> {
    this.client.close();
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once("exit", resolve));
      this.child.kill("SIGTERM");
      await exited;
    }
    this.logEngine.close();
  }

  private toStruct(value: Props): unknown {
    // Struct cannot hold `undefined`: drop such keys as the SDK's serializer does.
    return this.struct.Struct.fromJavaScript(JSON.parse(JSON.stringify(value)) as Props);
  }

  private fromStruct(response: Message, getter: string): Props {
    const value = (response[getter] as () => StructValue | undefined)();
    return value ? value.toJavaScript() : {};
  }

  private call(method: string, type: string, fields: Record<string, unknown>): Promise<Message> {
    const request = new this.proto[type]!();
    for (const [name, value] of Object.entries(fields)) (request[`set${name}`] as (v: unknown) => void).call(request, value);
    return new Promise((resolve, reject) => {
      // grpc-js captures a stack trace on every call for its errors' text; this engine reports the host's message only.
      withoutStackTraces(() =>
        this.client[method]!(request, (error, response) => (error ? reject(this.failure(error)) : resolve(response))),
      );
    });
  }

  /** The provider's error: its message, and for a partially created resource its id and properties. */
  private failure(error: GrpcError): Error {
    const message = error.message.replace(/^\d+ [A-Z_]+: /, "");
    const details = error.metadata?.get("grpc-status-details-bin")[0];
    if (!(details instanceof Uint8Array)) return new Error(message);
    for (const detail of this.status.Status.deserializeBinary(details).getDetailsList()) {
      if (detail.getTypeName() !== "pulumirpc.ErrorResourceInitFailed") continue;
      const initFailed = (
        this.proto.ErrorResourceInitFailed as unknown as { deserializeBinary(bytes: Uint8Array): Message }
      ).deserializeBinary(detail.getValue_asU8());
      const id = (initFailed.getId as () => string)();
      const reasons = (initFailed.getReasonsList as () => string[])();
      return new MayExistError(message, { state: "made", id, outputs: this.fromStruct(initFailed, "getProperties") }, { reasons });
    }
    return new Error(message);
  }
}
