/**
 * The gRPC `ResourceProvider` service of the plugin: the wire (protobuf messages, gRPC status and error
 * details) around the router. The generated modules and grpc-js are those of the `@pulumi/pulumi` this
 * package depends on (sdk-modules.ts), so the messages match the SDK's protocol version.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type * as grpcModule from "@grpc/grpc-js";
import type * as structModule from "google-protobuf/google/protobuf/struct_pb";
import type * as providerModule from "@pulumi/pulumi/proto/provider_pb";
import { redactSecrets } from "../provider/errors";
import { checkConfig, configFrom, diffConfig, unknownConfigKeys } from "./config";
import { MayExistError, withOperationTimeout } from "../client";
import { type DiffResult, KindRouter, UnknownTypeError } from "./router";
import { packageManifest } from "../manifest";
import { committedPackageSchema } from "../schema/package-schema";
import * as pulumi from "@pulumi/pulumi";
import type { Kind } from "../provider/kind";
import { type Props, reveal, typeOfUrn } from "./wire";
import { invokeLookup, LookupArgumentsError } from "../lookups";
import { nameOfNativeToken } from "../provider/tokens";
import { isSecret } from "../provider/values";
import { Any, Empty, grpc, pb, pluginPb, services, statusPb, Struct } from "./sdk-modules";
import { asResourceCall } from "../provider/request-log";
import { Session } from "../provider/session";

type Call<Request> = grpcModule.ServerUnaryCall<Request, unknown>;
type Callback = grpcModule.sendUnaryData<unknown>;

const toStruct = (props: Props) => Struct.fromJavaScript(props as Record<string, structModule.JavaScriptValue>);
const fromStruct = (struct: structModule.Struct | undefined): Props => (struct ? (struct.toJavaScript() as Props) : {});

/** A gRPC error; a create that made its object carries `ErrorResourceInitFailed` in its details, as the engine reads them. */
function grpcError(error: unknown, secrets: string[]): grpcModule.ServiceError {
  const message = redactSecrets(error instanceof Error ? error.message : String(error), secrets);
  const metadata = new grpc.Metadata();
  if (error instanceof MayExistError && error.made.state === "made") {
    const detail = new pb.ErrorResourceInitFailed();
    detail.setId(error.made.id);
    detail.setProperties(toStruct(error.made.outputs));
    detail.setReasonsList(error.reasons.map((reason) => redactSecrets(reason, secrets)));
    const any = new Any();
    any.pack(detail.serializeBinary(), "pulumirpc.ErrorResourceInitFailed");
    const status = new statusPb.Status();
    status.setCode(grpc.status.UNKNOWN);
    status.setMessage(message);
    status.addDetails(any);
    metadata.add("grpc-status-details-bin", Buffer.from(status.serializeBinary()));
  }
  const given = (error as { code?: unknown } | undefined)?.code;
  const code = error instanceof UnknownTypeError ? grpc.status.INVALID_ARGUMENT : typeof given === "number" ? given : grpc.status.UNKNOWN;
  return Object.assign(new Error(message), { code, details: message, metadata }) as grpcModule.ServiceError;
}

/** The DiffResponse of a resource's or the configuration's diff, with its detailed diff. */
function diffResponse(result: DiffResult): providerModule.DiffResponse {
  const response = new pb.DiffResponse()
    .setChanges(result.changes ? pb.DiffResponse.DiffChanges.DIFF_SOME : pb.DiffResponse.DiffChanges.DIFF_NONE)
    .setReplacesList(result.replaces)
    .setDeletebeforereplace(result.deleteBeforeReplace)
    .setDiffsList(Object.keys(result.detailedDiff))
    .setHasdetaileddiff(true);
  const detailed = response.getDetaileddiffMap();
  for (const [name, { kind, inputDiff }] of Object.entries(result.detailedDiff))
    detailed.set(name, new pb.PropertyDiff().setKind(kind as providerModule.PropertyDiff.Kind).setInputdiff(inputDiff));
  return response;
}

/** Every string inside the secrets of a request, blanked from an error the kinds did not blank themselves. */
function secretStringsOf(...structs: (structModule.Struct | undefined)[]): string[] {
  const strings: string[] = [];
  const collect = (value: unknown, inside: boolean): void => {
    if (typeof value === "string") {
      if (inside && value !== "") strings.push(value);
    } else if (Array.isArray(value)) for (const item of value) collect(item, inside);
    else if (value && typeof value === "object") {
      for (const item of Object.values(value)) collect(item, inside || isSecret(value));
    }
  };
  for (const struct of structs) collect(fromStruct(struct), false);
  return strings;
}

/** The calls being answered, so that a shutdown lets them finish (and only them: an idle plugin exits at once). */
class CallsInFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  track<T>(work: Promise<T>): Promise<T> {
    this.count++;
    return work.finally(() => {
      this.count--;
      if (this.count === 0) for (const resolve of this.waiters.splice(0)) resolve();
    });
  }

  drained(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

interface TypedRequest {
  getUrn(): string;
  getType?(): string;
}
const tokenOf = (request: TypedRequest): string => request.getType?.() || typeOfUrn(request.getUrn());

export interface PluginServer {
  port: number;
  /** Lets the calls under way finish, then closes the server (the engine's open connection does not hold it up). */
  shutdown(): Promise<void>;
  /** Resolves when the engine asked the provider to stop (Cancel). */
  cancelled: Promise<void>;
}

/** The URN a call is about, when its request names one (Check, Diff, Create, Read, Update, Delete). */
const urnOf = (request: unknown): string | undefined => {
  const getUrn = (request as { getUrn?: () => string }).getUrn;
  return typeof getUrn === "function" ? getUrn.call(request) || undefined : undefined;
};

/**
 * A warning to the engine about the resource `urn`, which the CLI shows under that resource. The SDK's log takes a
 * resource and reads nothing of it but its URN, which a provider knows only as the request's.
 */
function warnAbout(urn: string, message: string): void {
  const resource = { urn: { promise: async () => urn } } as unknown as pulumi.Resource;
  // A line the engine no longer takes (it is shutting down) must not fail the call.
  void pulumi.log.warn(message, resource).catch(() => undefined);
}

/** What a server serves, when not this package's kinds and schema.json (a test serving a fixture of a kind). */
export interface ServedPackage {
  kinds: Readonly<Record<string, Kind>>;
  schema: Record<string, unknown>;
}

export async function startPluginServer(address = "127.0.0.1:0", served?: ServedPackage): Promise<PluginServer> {
  // The engine starts one plugin process per provider (the default one, each explicit one): the server's one session
  // is that provider's configuration, clients and claims.
  const session = new Session();
  const router = new KindRouter(session, served?.kinds);
  const calls = new CallsInFlight();
  /** One handler: the answer, or the error as gRPC carries it. */
  const unary =
    <Request>(run: (request: Request) => Promise<unknown>, secretsOf: (request: Request) => string[] = () => []) =>
    (call: Call<Request>, callback: Callback) => {
      void calls.track(
        asResourceCall(urnOf(call.request), () => run(call.request)).then(
          (response) => callback(null, response),
          (error: unknown) => callback(grpcError(error, secretsOf(call.request))),
        ),
      );
    };
  let onCancel!: () => void;
  const cancelled = new Promise<void>((resolve) => {
    onCancel = resolve;
  });

  const handshake = new pb.ProviderHandshakeResponse();
  handshake.setAcceptSecrets(true);
  handshake.setAcceptResources(true);
  handshake.setAcceptOutputs(false);

  const implementation: Partial<Record<keyof typeof services.ResourceProviderService, unknown>> = {
    handshake: unary(async () => handshake),
    getPluginInfo: unary(async () => new pluginPb.PluginInfo().setVersion(packageManifest.version)),
    getSchema: unary(async (request: providerModule.GetSchemaRequest) => {
      if (request.getSubpackageName()) throw new Error(`the gms provider has no subpackage ${request.getSubpackageName()}`);
      return new pb.GetSchemaResponse().setSchema(JSON.stringify(served?.schema ?? committedPackageSchema()));
    }),
    checkConfig: unary(async (request: providerModule.CheckRequest) => {
      const { inputs, failures } = checkConfig(fromStruct(request.getNews()));
      const response = new pb.CheckResponse().setInputs(toStruct(inputs));
      response.setFailuresList(failures.map(({ property, reason }) => new pb.CheckFailure().setProperty(property).setReason(reason)));
      return response;
    }),
    diffConfig: unary(
      async (request: providerModule.DiffRequest) => {
        const olds = request.hasOldInputs() ? request.getOldInputs() : request.getOlds();
        return diffResponse(await diffConfig(fromStruct(olds), fromStruct(request.getNews())));
      },
      (request) => secretStringsOf(request.getNews(), request.getOlds(), request.getOldInputs()),
    ),
    configure: unary(async (request: providerModule.ConfigureRequest) => {
      const variables = new Map(request.getVariablesMap().toArray() as [string, string][]);
      const args = request.hasArgs() ? fromStruct(request.getArgs()) : undefined;
      session.configure(configFrom(args, variables), unknownConfigKeys(args));
      return new pb.ConfigureResponse().setAcceptsecrets(true).setSupportspreview(true).setAcceptresources(true).setAcceptoutputs(false);
    }),
    check: unary(
      async (request: providerModule.CheckRequest) => {
        const result = await router.route(tokenOf(request)).check(fromStruct(request.getOlds()), fromStruct(request.getNews()));
        for (const warning of result.warnings) warnAbout(request.getUrn(), warning);
        const response = new pb.CheckResponse().setInputs(toStruct(result.inputs));
        response.setFailuresList(
          result.failures.map(({ property, reason }) => new pb.CheckFailure().setProperty(property).setReason(reason)),
        );
        return response;
      },
      (request) => secretStringsOf(request.getNews(), request.getOlds()),
    ),
    diff: unary(
      async (request: providerModule.DiffRequest) => {
        const result = await router
          .route(tokenOf(request))
          .diff(request.getId(), fromStruct(request.getOlds()), fromStruct(request.getNews()), request.getIgnorechangesList());
        return diffResponse(result);
      },
      (request) => secretStringsOf(request.getNews(), request.getOlds()),
    ),
    create: unary(
      async (request: providerModule.CreateRequest) => {
        const route = router.route(tokenOf(request));
        const result = await withOperationTimeout("create", request.getTimeout(), () =>
          route.create(fromStruct(request.getProperties()), request.getPreview()),
        );
        return new pb.CreateResponse().setId(result.id).setProperties(toStruct(result.properties));
      },
      (request) => secretStringsOf(request.getProperties()),
    ),
    read: unary(
      async (request: providerModule.ReadRequest) => {
        const result = await router
          .route(tokenOf(request))
          .read(request.getId(), fromStruct(request.getProperties()), fromStruct(request.getInputs()));
        const response = new pb.ReadResponse().setId(result.id);
        if (result.properties) response.setProperties(toStruct(result.properties));
        if (result.inputs) response.setInputs(toStruct(result.inputs));
        return response;
      },
      (request) => secretStringsOf(request.getProperties(), request.getInputs()),
    ),
    update: unary(
      async (request: providerModule.UpdateRequest) => {
        const route = router.route(tokenOf(request));
        const properties = await withOperationTimeout("update", request.getTimeout(), () =>
          route.update(request.getId(), fromStruct(request.getOlds()), fromStruct(request.getNews()), request.getPreview()),
        );
        return new pb.UpdateResponse().setProperties(toStruct(properties));
      },
      (request) => secretStringsOf(request.getNews(), request.getOlds()),
    ),
    delete: unary(
      async (request: providerModule.DeleteRequest) => {
        const route = router.route(tokenOf(request));
        await withOperationTimeout("delete", request.getTimeout(), () =>
          route.delete(request.getId(), fromStruct(request.getProperties())),
        );
        return new Empty();
      },
      (request) => secretStringsOf(request.getProperties()),
    ),
    invoke: unary(
      async (request: providerModule.InvokeRequest) => {
        const token = request.getTok();
        // The package's functions are `gms:index:<lookup>`, as schema.json lists them.
        const name = nameOfNativeToken(token) ?? "";
        try {
          const result = await invokeLookup(session, name, reveal(fromStruct(request.getArgs())).values);
          if (!result) throw Object.assign(new Error(`the gms provider has no function ${token}`), { code: grpc.status.INVALID_ARGUMENT });
          return new pb.InvokeResponse().setReturn(toStruct(result));
        } catch (error) {
          if (!(error instanceof LookupArgumentsError)) throw error;
          const failures = error.failures.map(({ property, reason }) => new pb.CheckFailure().setProperty(property).setReason(reason));
          return new pb.InvokeResponse().setFailuresList(failures);
        }
      },
      (request) => secretStringsOf(request.getArgs()),
    ),
    attach: unary(async () => new Empty()),
    cancel: unary(async () => {
      onCancel();
      return new Empty();
    }),
  };

  const server = new grpc.Server({ "grpc.max_receive_message_length": 400 * 1024 * 1024 });
  server.addService(services.ResourceProviderService, implementation as grpcModule.UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    port,
    cancelled,
    shutdown: async () => {
      await calls.drained();
      // The last answer (Cancel's, say) is written; give it a moment on the wire before the connections close.
      await sleep(50);
      server.forceShutdown();
    },
  };
}
