/**
 * The provider test bed: the built package installed (as a copy, like `npm install` does) in a
 * throw-away program directory; a real program run with the SDK's mocks to capture each resource's
 * registration, `__provider` text included; the emulator on a loopback port counting every request;
 * and the real dynamic-provider host, configured with stack config, driven over gRPC.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Fixtures, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { MayExistError, ProviderHost } from "../../src/testing/host";
import { installPackageCopy } from "../../src/testing/program-dir";
import { TEST_FIXTURES, callOverHttp } from "../emulator/harness";

type Props = Record<string, unknown>;

export interface Registration {
  type: string;
  name: string;
  /** As the engine sends them to a provider that does not accept secrets: unwrapped. */
  inputs: Props;
  /** The input names the program registered as secrets. */
  secrets: string[];
}

/** A program directory whose node_modules holds a copy of the built package, as `npm install` leaves it. */
export function makeProgramDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "gms-program-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "provider-test-program", private: true }));
  installPackageCopy(dir);
  return dir;
}

/**
 * Runs `program` (CommonJS source using `gms = require("pulumi-gms")` and `pulumi`) in its own node
 * process with the SDK's mocks, and returns every registration in order. Secret inputs arrive unwrapped
 * with their names listed in `secrets`, as the engine does for a provider that does not accept secrets.
 */
export function captureRegistrations(dir: string, program: string): Registration[] {
  const runner = `
    const pulumi = require("@pulumi/pulumi");
    const SECRET = "4dabf18193072939515e22adb298388d";
    const unwrap = (v) => Array.isArray(v) ? v.map(unwrap)
      : v && typeof v === "object" ? (v[SECRET] ? unwrap(v.value) : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unwrap(x)])))
      : v;
    const registered = [];
    pulumi.runtime.setMocks({
      newResource: async (args) => {
        const secrets = Object.keys(args.inputs).filter((k) => args.inputs[k] && args.inputs[k][SECRET]);
        registered.push({ type: args.type, name: args.name, inputs: unwrap(args.inputs), secrets });
        return { id: args.name + "-id", state: args.inputs };
      },
      call: async () => ({}),
    }, "gms-test", "dev", false);
    const gms = require("pulumi-gms");
    (function (gms, pulumi) { ${program} })(gms, pulumi);
    process.on("beforeExit", () => { if (!globalThis.__printed) { globalThis.__printed = true; process.stdout.write(JSON.stringify(registered)); } });
  `;
  const file = join(dir, `program-${Date.now()}-${Math.random().toString(36).slice(2)}.js`);
  writeFileSync(file, runner);
  const out = execFileSync(process.execPath, [file], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return JSON.parse(out) as Registration[];
}

export async function startTestbed(options: { fixtures?: Fixtures } = {}) {
  const dir = makeProgramDir();
  const requests: RequestLogEntry[] = [];
  const emulator = await startEmulator({ fixtures: options.fixtures ?? TEST_FIXTURES, onRequestComplete: (entry) => requests.push(entry) });
  const host = await ProviderHost.start({ cwd: dir, project: "gms-test", stack: "dev" });
  await host.configure({ "gms:baseUrl": emulator.url, "gms:apiKey": emulator.apiKey });

  /** Requests the emulator answered while `operation` ran. */
  const counting = async <T>(operation: () => Promise<T>): Promise<{ result: T; requests: RequestLogEntry[] }> => {
    const start = requests.length;
    const result = await operation();
    return { result, requests: requests.slice(start) };
  };

  /** Calls the API directly, as an out-of-band change or an independent check would. */
  const api = <T = any>(method: string, path: string, body?: unknown) => callOverHttp<T>(emulator, method, path, body);

  return {
    dir,
    emulator,
    host,
    requests,
    counting,
    api,
    capture: (program: string) => captureRegistrations(dir, program),
    async close() {
      await host.close();
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Testbed = Awaited<ReturnType<typeof startTestbed>>;

/** The URN the engine would give a dynamic resource of the package. */
export const urnOf = (registration: Registration) => `urn:pulumi:dev::gms-test::${registration.type}::${registration.name}`;

/**
 * The partial create a failed create reported, as the engine records it (ErrorResourceInitFailed): the id, the
 * properties and why. It fails the test unless the error means the object may exist, under that id.
 */
export function partialOf(error: unknown): { id: string; properties: Record<string, unknown>; message: string; reasons: string[] } {
  if (!(error instanceof MayExistError)) throw new Error(`expected a partial create, got ${String(error)}`);
  const { made, message, reasons } = error;
  if (made.state !== "made") throw new Error(`expected a partial create with an id, got an ${made.state} one`);
  return { id: made.id, properties: made.outputs, message, reasons };
}
