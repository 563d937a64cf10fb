/**
 * Loading `@pulumi/pulumi` takes about half a second, and two thirds of it is the closure serializer that
 * `runtime/index.js` requires eagerly (TypeScript's parser, npm's arborist, tar, ...): used only to
 * serialize a function, which neither the program process (this package writes `__provider` itself,
 * see provider/provider-text.ts) nor the dynamic-provider host (it only deserializes) does in the common
 * case. So both processes put stand-ins for those two modules in the require cache before the SDK loads:
 * each export is a function that loads the real module on its first call and forwards to it, so a
 * program or provider that does serialize a function still gets the real one.
 *
 * The same goes for modules the SDK's modules keep as namespaces and use only inside functions: the
 * Automation API (`automation/index.js`, with execa and js-yaml), semver (resource package versions) and
 * the OpenTelemetry API (the tracing of its gRPC client calls). Their stand-ins load the real module on the
 * first access to any of its members. The program process also defers gRPC itself (`deferGrpc`).
 *
 * The provider host loads it with `--require defer-sdk-preload.js` (the SDK's directory in
 * PULUMI_GMS_SDK_DIR); the program process (runner.ts) calls it with the directory it resolved.
 */
import { existsSync, readdirSync } from "node:fs";
import Module from "node:module";
import { join } from "node:path";

/** The SDK modules deferred, relative to its directory; each exports functions only (test/testing/defer-sdk.test.ts). */
export const DEFERRED_MODULES = ["runtime/closure/serializeClosure.js", "runtime/closure/codePaths.js"];
/** The SDK module deferred until a member is used (the SDK's index only keeps its namespace). */
export const DEFERRED_NAMESPACE = "automation/index.js";
/** Packages the SDK requires and uses only inside functions, deferred until a member is used. */
export const DEFERRED_PACKAGES = ["semver", "@opentelemetry/api"];

type Exports = Record<string, unknown>;

export function deferSdkModules(pulumiDir: string): void {
  for (const relative of DEFERRED_MODULES) {
    standIn(join(pulumiDir, relative), (load) => {
      const forwarders = new Map<string, (...args: unknown[]) => unknown>();
      return (key) => {
        let forward = forwarders.get(key);
        if (!forward) forwarders.set(key, (forward = (...args: unknown[]) => (load()[key] as (...a: unknown[]) => unknown)(...args)));
        return forward;
      };
    });
  }
  standIn(join(pulumiDir, DEFERRED_NAMESPACE), onFirstUse);
  for (const name of DEFERRED_PACKAGES) {
    const file = resolveFrom(pulumiDir, name);
    if (file) standIn(file, onFirstUse);
  }
}

/** Where the SDK in `pulumiDir` finds a package; undefined when it does not have it (another SDK version). */
function resolveFrom(pulumiDir: string, name: string): string | undefined {
  try {
    return require.resolve(name, { paths: [pulumiDir] });
  } catch {
    return undefined;
  }
}

/**
 * The program process also defers gRPC (grpc-js and the SDK's generated service modules, a tenth of the
 * SDK's load): its monitor answers in the process (runner.ts), so the SDK never opens a channel, and the
 * SDK's modules only keep the namespaces until then.
 */
export function deferGrpc(pulumiDir: string): void {
  const grpc = resolveFrom(pulumiDir, "@grpc/grpc-js");
  const proto = join(pulumiDir, "proto");
  // Only both together: a generated module loaded for real would load grpc-js anyway.
  if (!grpc || !existsSync(proto)) return;
  standIn(grpc, onFirstUse);
  for (const file of readdirSync(proto)) if (file.endsWith("_grpc_pb.js")) standIn(join(proto, file), onFirstUse);
}

/** A stand-in's members before the real module is loaded: each access loads it. */
const onFirstUse = (load: () => Exports) => (key: string) => load()[key];

/**
 * Puts a stand-in for `file` in the require cache (unless it is loaded already): an ES-module-marked proxy
 * whose members come from `member` until the real module is loaded, and from the real module after.
 */
function standIn(file: string, member: (load: () => Exports) => (key: string) => unknown): void {
  if (require.cache[file]) return;
  let real: Exports | undefined;
  const load = () => {
    if (!real) {
      delete require.cache[file];
      real = require(file) as Exports;
    }
    return real;
  };
  const before = member(load);
  const exports = new Proxy({} as Exports, {
    get(_target, key) {
      if (key === "__esModule") return true;
      if (typeof key !== "string" || key === "then") return undefined;
      // Marked as an ES module, a stand-in is what compiled `import x from` reads `default` of: the real
      // module's default export, or the module itself when it is plain CommonJS (semver), as it would be.
      if (key === "default") {
        const loaded = load();
        return loaded.__esModule ? loaded.default : loaded;
      }
      return real ? real[key] : before(key);
    },
    has: (_target, key) => key in load(),
    ownKeys: () => Reflect.ownKeys(load()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Object.getOwnPropertyDescriptor(load(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
  });
  const stand = new Module(file);
  stand.filename = file;
  stand.loaded = true;
  stand.exports = exports;
  require.cache[file] = stand;
}
