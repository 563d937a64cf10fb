/**
 * Loading `@pulumi/pulumi` takes about half a second, and two thirds of it is the closure serializer that
 * `runtime/index.js` requires eagerly (TypeScript's parser, npm's arborist, tar, ...): used only to
 * serialize a function, which neither the program process (this package writes `__provider` itself,
 * see provider/provider-text.ts) nor the dynamic-provider host (it only deserializes) does in the common
 * case. So both processes put stand-ins for those two modules in the require cache before the SDK loads:
 * each export is a function that loads the real module on its first call and forwards to it, so a
 * program or provider that does serialize a function still gets the real one.
 *
 * The provider host loads it with `--require defer-sdk-preload.js` (the SDK's directory in
 * PULUMI_GMS_SDK_DIR); the program process (runner.ts) calls it with the directory it resolved.
 */
import Module from "node:module";
import { join } from "node:path";

/** The SDK modules deferred, relative to its directory; each exports functions only (test/testing/defer-sdk.test.ts). */
export const DEFERRED_MODULES = ["runtime/closure/serializeClosure.js", "runtime/closure/codePaths.js"];

export function deferClosureSerializer(pulumiDir: string): void {
  for (const relative of DEFERRED_MODULES) {
    const file = join(pulumiDir, relative);
    if (require.cache[file]) continue;
    let real: Record<string, (...args: unknown[]) => unknown> | undefined;
    const load = () => {
      if (!real) {
        delete require.cache[file];
        real = require(file) as Record<string, (...args: unknown[]) => unknown>;
      }
      return real;
    };
    const forwarders = new Map<string, (...args: unknown[]) => unknown>();
    const exports = new Proxy({} as Record<string | symbol, unknown>, {
      get(_target, key) {
        if (key === "__esModule") return true;
        if (typeof key !== "string" || key === "then") return undefined;
        if (real) return real[key];
        let forward = forwarders.get(key);
        if (!forward) forwarders.set(key, (forward = (...args: unknown[]) => load()[key]!(...args)));
        return forward;
      },
    });
    const stand = new Module(file);
    stand.filename = file;
    stand.loaded = true;
    stand.exports = exports;
    require.cache[file] = stand;
  }
}
