/**
 * The plugin as the engine runs it: `node dist/plugin/main.js <engine address>` (or another executable, such as
 * the release's) with its standard input a pipe, the port read from the first line of its stdout, then every call
 * over gRPC with the generated client of the `@pulumi/pulumi` the package depends on. Values go over the wire as
 * the engine sends them: secrets as signature objects (see `secret`), unknowns as the unknown marker.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import type * as grpcModule from "@grpc/grpc-js";
import type * as emptyModule from "google-protobuf/google/protobuf/empty_pb";
import type * as structModule from "google-protobuf/google/protobuf/struct_pb";
import type * as engineGrpcModule from "@pulumi/pulumi/proto/engine_grpc_pb";
import type * as engineModule from "@pulumi/pulumi/proto/engine_pb";
import type * as pluginModule from "@pulumi/pulumi/proto/plugin_pb";
import type * as providerGrpcModule from "@pulumi/pulumi/proto/provider_grpc_pb";
import type * as providerModule from "@pulumi/pulumi/proto/provider_pb";
import type * as statusModule from "@pulumi/pulumi/proto/status_pb";
import { MayExistError } from "../../src/client";
import { isSecret, makeSecret, UNKNOWN } from "../../src/provider/values";

const sdkRequire = createRequire(require.resolve("@pulumi/pulumi/package.json"));
const grpc = sdkRequire("@grpc/grpc-js") as typeof grpcModule;
const pb = sdkRequire("./proto/provider_pb") as typeof providerModule;
const services = sdkRequire("./proto/provider_grpc_pb") as typeof providerGrpcModule;
const statusPb = sdkRequire("./proto/status_pb") as typeof statusModule;
const engineServices = sdkRequire("./proto/engine_grpc_pb") as typeof engineGrpcModule;
const { Struct } = sdkRequire("google-protobuf/google/protobuf/struct_pb") as typeof structModule;
const { Empty } = sdkRequire("google-protobuf/google/protobuf/empty_pb") as typeof emptyModule;

export type Props = Record<string, unknown>;

export { isSecret, makeSecret as secret, UNKNOWN };
/** The plain values (secrets unwrapped at the top level), for comparisons. */
export const plain = (props: Props): Props =>
  Object.fromEntries(Object.entries(props).map(([key, value]) => [key, isSecret(value) ? value.value : value]));

export const urnOf = (kind: string, name: string) => `urn:pulumi:dev::plugin-test::gms:index:${kind}::${name}`;

export const DIFF_KIND = ["ADD", "ADD_REPLACE", "DELETE", "DELETE_REPLACE", "UPDATE", "UPDATE_REPLACE"] as const;

export interface DiffAnswer {
  changes: "unknown" | "none" | "some";
  replaces: string[];
  deleteBeforeReplace: boolean;
  hasDetailedDiff: boolean;
  detailedDiff: Record<string, (typeof DIFF_KIND)[number]>;
}

type Client = grpcModule.Client &
  Record<string, (request: unknown, callback: (error: grpcModule.ServiceError | null, response: any) => void) => void>;

const toStruct = (props: Props) => Struct.fromJavaScript(props as Record<string, structModule.JavaScriptValue>);
const fromStruct = (struct: structModule.Struct | undefined): Props => (struct ? (struct.toJavaScript() as Props) : {});

const PROVIDER_URN = "urn:pulumi:dev::plugin-test::pulumi:providers:gms::default";

function diffAnswer(response: providerModule.DiffResponse): DiffAnswer {
  const detailedDiff: DiffAnswer["detailedDiff"] = {};
  response.getDetaileddiffMap().forEach((diff, name) => {
    detailedDiff[name] = DIFF_KIND[diff.getKind()]!;
  });
  const changes = response.getChanges();
  return {
    changes: changes === 2 ? "some" : changes === 1 ? "none" : "unknown",
    replaces: response.getReplacesList(),
    deleteBeforeReplace: response.getDeletebeforereplace(),
    hasDetailedDiff: response.getHasdetaileddiff(),
    detailedDiff,
  };
}

/** A log line the plugin sent the engine (Engine.Log). */
export interface EngineLog {
  severity: "debug" | "info" | "warning" | "error";
  message: string;
  /** The resource the line is about ("" when none). */
  urn: string;
}

/**
 * An engine as far as a plugin's log lines go: a gRPC Engine service that keeps every Log request, but fails the first
 * `refusing` of them (an engine shutting down) and keeps none of those.
 */
export async function startFakeEngine(refusing = 0): Promise<{ address: string; logs: EngineLog[]; close(): void }> {
  const logs: EngineLog[] = [];
  const severities = ["debug", "info", "warning", "error"] as const;
  const server = new grpc.Server();
  let refused = 0;
  server.addService(engineServices.EngineService, {
    log: (call: grpcModule.ServerUnaryCall<engineModule.LogRequest, unknown>, callback: grpcModule.sendUnaryData<unknown>) => {
      if (refused < refusing) {
        refused += 1;
        return callback({ code: grpc.status.UNAVAILABLE, details: "shutting down" });
      }
      logs.push({ severity: severities[call.request.getSeverity()]!, message: call.request.getMessage(), urn: call.request.getUrn() });
      callback(null, new Empty());
    },
  } as grpcModule.UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return { address: `127.0.0.1:${port}`, logs, close: () => server.forceShutdown() };
}

export class PluginProcess {
  private constructor(
    readonly child: ChildProcess,
    private readonly client: Client,
    readonly stderr: string[],
  ) {}

  /**
   * The package's executable, as the engine runs a `pulumi-resource-gms` it finds, its log lines going to `engine`.
   * `executable`: that file instead (the release's, say), run directly; `env`: variables over this process's.
   */
  static async start(engine = "127.0.0.1:1", options: { executable?: string; env?: NodeJS.ProcessEnv } = {}): Promise<PluginProcess> {
    const root = join(__dirname, "..", "..");
    const [command, args] = options.executable ? [options.executable, []] : [process.execPath, [join(root, "dist", "plugin", "main.js")]];
    const child = spawn(command, [...args, engine], {
      cwd: root,
      env: { ...process.env, GMS_BASE_URL: "", GMS_API_KEY: "", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const stderr: string[] = [];
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      const onData = (chunk: string) => {
        out += chunk;
        if (!out.includes("\n")) return;
        child.stdout!.off("data", onData);
        child.stdout!.resume();
        const line = out.split("\n")[0]!.trim();
        if (/^\d+$/.test(line)) resolve(Number(line));
        else reject(new Error(`the plugin's first line is not a port: ${line}`));
      };
      child.stdout!.setEncoding("utf8").on("data", onData);
      child.once("exit", (code) => reject(new Error(`the plugin exited with ${code}: ${stderr.join("")}`)));
    });
    const Constructor = services.ResourceProviderClient as unknown as new (address: string, credentials: unknown) => Client;
    return new PluginProcess(child, new Constructor(`127.0.0.1:${port}`, grpc.credentials.createInsecure()), stderr);
  }

  private call<T>(method: string, request: unknown): Promise<T> {
    return new Promise((resolve, reject) =>
      this.client[method]!(request, (error, response) => {
        if (!error) return resolve(response as T);
        const details = error.metadata?.get("grpc-status-details-bin")[0];
        if (details) {
          const status = statusPb.Status.deserializeBinary(details as Uint8Array);
          for (const any of status.getDetailsList()) {
            if (any.getTypeName() !== "pulumirpc.ErrorResourceInitFailed") continue;
            const failed = pb.ErrorResourceInitFailed.deserializeBinary(any.getValue_asU8());
            return reject(
              new MayExistError(
                error.details,
                { state: "made", id: failed.getId(), outputs: fromStruct(failed.getProperties()) },
                { reasons: failed.getReasonsList() },
              ),
            );
          }
        }
        reject(Object.assign(new Error(error.details), { code: error.code }));
      }),
    );
  }

  async getPluginInfo(): Promise<{ version: string }> {
    const response = await this.call<pluginModule.PluginInfo>("getPluginInfo", new Empty());
    return { version: response.getVersion() };
  }

  async getSchema(): Promise<Record<string, unknown>> {
    const response = await this.call<providerModule.GetSchemaResponse>("getSchema", new pb.GetSchemaRequest());
    return JSON.parse(response.getSchema());
  }

  async checkConfig(news: Props) {
    const request = new pb.CheckRequest().setUrn(PROVIDER_URN).setNews(toStruct(news));
    request.setOlds(toStruct({}));
    const response = await this.call<providerModule.CheckResponse>("checkConfig", request);
    return {
      inputs: fromStruct(response.getInputs()),
      failures: response.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
    };
  }

  /** Configure as the engine sends it: the provider's inputs as `args`, secrets wrapped. */
  async configure(args: Props) {
    const request = new pb.ConfigureRequest().setArgs(toStruct(args)).setAcceptsecrets(true).setAcceptresources(true);
    const response = await this.call<providerModule.ConfigureResponse>("configure", request);
    return { acceptSecrets: response.getAcceptsecrets(), supportsPreview: response.getSupportspreview() };
  }

  async check(urn: string, olds: Props, news: Props) {
    const request = new pb.CheckRequest().setUrn(urn).setOlds(toStruct(olds)).setNews(toStruct(news));
    const response = await this.call<providerModule.CheckResponse>("check", request);
    return {
      inputs: fromStruct(response.getInputs()),
      failures: response.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
    };
  }

  async diff(urn: string, id: string, olds: Props, news: Props): Promise<DiffAnswer> {
    const request = new pb.DiffRequest().setUrn(urn).setId(id).setOlds(toStruct(olds)).setNews(toStruct(news));
    return diffAnswer(await this.call<providerModule.DiffResponse>("diff", request));
  }

  /** DiffConfig as the engine sends it for a provider resource: its old inputs and its new ones. */
  async diffConfig(olds: Props, news: Props): Promise<DiffAnswer> {
    const request = new pb.DiffRequest().setUrn(PROVIDER_URN).setOldInputs(toStruct(olds)).setOlds(toStruct(olds)).setNews(toStruct(news));
    return diffAnswer(await this.call<providerModule.DiffResponse>("diffConfig", request));
  }

  /** Create; `timeout` is the engine's `customTimeouts.create` in seconds (0: none). */
  async create(urn: string, properties: Props, preview = false, timeout = 0) {
    const request = new pb.CreateRequest().setUrn(urn).setProperties(toStruct(properties)).setPreview(preview).setTimeout(timeout);
    const response = await this.call<providerModule.CreateResponse>("create", request);
    return { id: response.getId(), properties: fromStruct(response.getProperties()) };
  }

  /** Refresh (properties given) or import (`properties` left out: what `pulumi import` sends). */
  async read(urn: string, id: string, properties?: Props, inputs?: Props) {
    const request = new pb.ReadRequest().setUrn(urn).setId(id);
    if (properties) request.setProperties(toStruct(properties));
    if (inputs) request.setInputs(toStruct(inputs));
    const response = await this.call<providerModule.ReadResponse>("read", request);
    return { id: response.getId(), properties: fromStruct(response.getProperties()), inputs: fromStruct(response.getInputs()) };
  }

  async update(urn: string, id: string, olds: Props, news: Props, preview = false) {
    const request = new pb.UpdateRequest().setUrn(urn).setId(id).setOlds(toStruct(olds)).setNews(toStruct(news)).setPreview(preview);
    const response = await this.call<providerModule.UpdateResponse>("update", request);
    return { properties: fromStruct(response.getProperties()) };
  }

  async delete(urn: string, id: string, properties: Props) {
    await this.call("delete", new pb.DeleteRequest().setUrn(urn).setId(id).setProperties(toStruct(properties)));
  }

  /** A function of the package (`gms:index:getAction`, ...): its return, or the failures naming bad arguments. */
  async invoke(tok: string, args: Props) {
    const response = await this.call<providerModule.InvokeResponse>("invoke", new pb.InvokeRequest().setTok(tok).setArgs(toStruct(args)));
    return {
      result: fromStruct(response.getReturn()),
      failures: response.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
    };
  }

  async cancel() {
    await this.call("cancel", new Empty());
  }

  /** Resolves with the exit code once the process has ended. */
  exited(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve(this.child.exitCode);
    return new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  async stop(): Promise<void> {
    this.client.close();
    this.child.stdin?.destroy();
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGTERM");
      await this.exited();
    }
  }
}
