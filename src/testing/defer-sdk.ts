/**
 * Loading `@pulumi/pulumi` takes about half a second, and two thirds of it is the closure serializer that
 * `runtime/index.js` requires eagerly (TypeScript's parser, npm's arborist, tar, ...): used only to
 * serialize a function, which neither the program process (this package writes `__provider` itself,
 * see provider/provider-text.ts) nor the dynamic-provider host (it only deserializes) does in the common
 * case. So both processes put stand-ins for those two modules in the require cache before the SDK loads:
 * each export is a function that loads the real module on its first call and forwards to it, so a
 * program or provider that does serialize a function still gets the real one.
 *
 *
 * The same goes for the Automation API (`automation/index.js`, with execa and js-yaml): the SDK's index only
 * keeps its namespace, so its stand-in loads the real module on the first access to any of its members.
 *
 * The provider host loads it with `--require defer-sdk-preload.js` (the SDK's directory in
 * PULUMI_GMS_SDK_DIR); the program process (runner.ts) calls it with the directory it resolved.
 */
import Module from "node:module";
import { join } from "node:path";

/** The SDK modules deferred, relative to its directory; each exports functions only (test/testing/defer-sdk.test.ts). */
export const DEFERRED_MODULES = ["runtime/closure/serializeClosure.js", "runtime/closure/codePaths.js"];
/** The SDK module deferred until a member is used (the SDK's index only keeps its namespace). */
export const DEFERRED_NAMESPACE = "automation/index.js";

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
  standIn(join(pulumiDir, DEFERRED_NAMESPACE), (load) => (key) => load()[key]);
}

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
