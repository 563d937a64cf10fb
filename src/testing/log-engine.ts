/**
 * The engine as far as the log lines of LocalEngine's provider processes go: the Engine service's Log, which the
 * dynamic provider's host (through src/provider/log.ts) and the provider plugin (through the SDK's log) send their info,
 * warning and error lines to, at the address they are started with. Each line is handed on as the CLI shows it,
 * `<severity>: <message>`; debug lines are dropped, as the CLI drops them without `--debug`.
 */
import type { sendUnaryData, ServerUnaryCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import type { LogRequest } from "@pulumi/pulumi/proto/engine_pb";
import { Empty, enginePb, engineServices, grpc } from "../plugin/sdk-modules";

const SEVERITY_NAMES: Record<number, string> = {
  [enginePb.LogSeverity.INFO]: "info",
  [enginePb.LogSeverity.WARNING]: "warning",
  [enginePb.LogSeverity.ERROR]: "error",
};

export interface LogEngine {
  /** Where the provider processes send their lines: the argument they are started with. */
  address: string;
  close(): void;
}

/** Serves the engine's Log on a port of its own, each line (debug lines left out) to `onLine`. */
export async function startLogEngine(onLine: (line: string) => void): Promise<LogEngine> {
  const server = new grpc.Server();
  server.addService(engineServices.EngineService, {
    log: (call: ServerUnaryCall<LogRequest, unknown>, callback: sendUnaryData<unknown>) => {
      const severity = SEVERITY_NAMES[call.request.getSeverity()];
      if (severity) onLine(`${severity}: ${call.request.getMessage()}`);
      callback(null, new Empty());
    },
  } as UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return { address: `127.0.0.1:${port}`, close: () => server.forceShutdown() };
}
