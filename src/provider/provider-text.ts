/**
 * The `__provider` text of a resource, written without Pulumi's closure serializer when the result is
 * known in advance. A dynamic resource's `__provider` is what `serializeFunction(() => provider)` makes
 * of its provider; ours is always the module object of `pulumi-gms/shims/<kind>`, which the serializer
 * writes as one `require` of the module's path below node_modules (see shim.ts). Loading the serializer
 * (TypeScript's parser, an inspector session) costs about half a second per program run, so when the
 * shim module sits below node_modules (or is linked there) the same text is written here; anywhere else (a
 * checkout the program reaches by path, which the serializer captures by value) the serializer still does it,
 * and the program is warned once how to install the package instead. test/provider/provider-text.test.ts
 * proves the two texts equal for every kind with the installed `@pulumi/pulumi`.
 */
import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join, relative, sep } from "node:path";
import * as pulumi from "@pulumi/pulumi";

/** The input and output of a dynamic resource that holds its provider's text: the dynamic-provider host reads it. */
export const PROVIDER_KEY = "__provider";

const texts = new WeakMap<object, string | undefined>();

let warned = false;

/** `__provider` for a shim module object: the serializer's text, or an Output of the serializer's result. */
export function providerText(provider: object): pulumi.Input<string> {
  if (!texts.has(provider)) texts.set(provider, requireText(provider));
  const text = texts.get(provider);
  if (text === undefined && !warned) {
    warned = true;
    void pulumi.log.warn(
      "pulumi-gms is not installed below this program's node_modules (nor linked there), so each resource's " +
        "__provider in state is its whole provider module, about 2.4 KB, instead of a one-line require: install the " +
        "package into the program (npm install --install-links <path>, or the tarball `npm pack` makes).",
    );
  }
  return text ?? serialized(provider);
}

/**
 * The serializer's text for a module it writes as a `require`, or undefined when it would capture by value. A
 * linked install (`npm install <folder>`, `npm link`: node_modules/pulumi-gms is a link to a checkout) gets the
 * same one-line text: the shim's file is not below node_modules, but `pulumi-gms/dist/shims/<kind>.js` resolves to
 * it from the program's directory, where the dynamic-provider host requires it.
 */
export function requireText(provider: object): string | undefined {
  const file = Object.keys(require.cache).find((path) => require.cache[path]?.exports === provider);
  if (!file) return undefined;
  const parts = relative(process.cwd(), file).split(sep);
  // As the serializer does: the path after the first node_modules (the last in a pnpm store).
  const at = parts.includes(".pnpm") ? parts.lastIndexOf("node_modules") : parts.indexOf("node_modules");
  if (at >= 0 && parts[at + 1] === "pulumi-gms") return textFor(parts.slice(at + 1).join("/"));
  const linked = `pulumi-gms/dist/shims/${basename(file)}`;
  try {
    // Resolved as the program resolves it: from its directory (this module's own require would find the package itself).
    const fromProgram = createRequire(join(process.cwd(), "index.js"));
    if (realpathSync(fromProgram.resolve(linked)) === realpathSync(file)) return textFor(linked);
  } catch {
    // Not resolvable by name from the program: the serializer captures it by value.
  }
  return undefined;
}

const textFor = (module: string): string => `exports.handler = __f0;
const provider = require(${JSON.stringify(module)});

function __f0() {
  return (function() {
    with({ this: undefined, arguments: undefined }) {

return () => provider;

    }
  }).apply(undefined, undefined).apply(this, arguments);
}
`;

function serialized(provider: object): pulumi.Output<string> {
  return pulumi.output(pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true }).then((result) => result.text));
}
