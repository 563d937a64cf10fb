/**
 * The `__provider` text of a resource, written without Pulumi's closure serializer when the result is
 * known in advance. A dynamic resource's `__provider` is what `serializeFunction(() => provider)` makes
 * of its provider; ours is always the module object of `pulumi-gms/shims/<kind>`, which the serializer
 * writes as one `require` of the module's path below node_modules (see shim.ts). Loading the serializer
 * (TypeScript's parser, an inspector session) costs about half a second per program run, so when the
 * shim module sits below node_modules the same text is written here; anywhere else (a linked checkout,
 * which the serializer captures by value) the serializer still does it. test/provider/provider-text.test.ts
 * proves the two texts equal for every kind with the installed `@pulumi/pulumi`.
 */
import { relative, sep } from "node:path";
import * as pulumi from "@pulumi/pulumi";

const texts = new WeakMap<object, string | undefined>();

/** `__provider` for a shim module object: the serializer's text, or an Output of the serializer's result. */
export function providerText(provider: object): pulumi.Input<string> {
  if (!texts.has(provider)) texts.set(provider, requireText(provider));
  return texts.get(provider) ?? serialized(provider);
}

/** The serializer's text for a module it writes as a `require`, or undefined when it would capture by value. */
export function requireText(provider: object): string | undefined {
  const file = Object.keys(require.cache).find((path) => require.cache[path]?.exports === provider);
  if (!file) return undefined;
  const parts = relative(process.cwd(), file).split(sep);
  // As the serializer does: the path after the first node_modules (the last in a pnpm store).
  const at = parts.includes(".pnpm") ? parts.lastIndexOf("node_modules") : parts.indexOf("node_modules");
  if (at < 0 || parts[at + 1] !== "pulumi-gms") return undefined;
  const module = parts.slice(at + 1).join("/");
  return `exports.handler = __f0;
const provider = require(${JSON.stringify(module)});

function __f0() {
  return (function() {
    with({ this: undefined, arguments: undefined }) {

return () => provider;

    }
  }).apply(undefined, undefined).apply(this, arguments);
}
`;
}

function serialized(provider: object): pulumi.Output<string> {
  return pulumi.output(pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true }).then((result) => result.text));
}
