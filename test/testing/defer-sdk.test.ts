/**
 * The program process and the provider host defer the SDK's closure serializer and Automation API (src/testing/defer-sdk.ts):
 * the SDK then loads without TypeScript's parser and npm's arborist, and a call of the serializer still
 * reaches the real one. Run in child processes, as the engine's are.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFERRED_MODULES, DEFERRED_NAMESPACE, DEFERRED_PACKAGES } from "../../src/testing/defer-sdk";

const root = join(__dirname, "..", "..");
const pulumiDir = dirname(require.resolve("@pulumi/pulumi/package.json", { paths: [root] }));
const defer = join(root, "dist", "testing", "defer-sdk.js");

function run(script: string): string {
  const result = spawnSync(process.execPath, ["-e", script], { cwd: root, encoding: "utf8" });
  // The real serializer's dependencies print deprecation warnings as they load; those are not failures.
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}

describe("deferring the SDK's closure serializer and Automation API", () => {
  it("stands in for modules that export functions only (what the stand-ins forward)", () => {
    const kinds = JSON.parse(
      run(`process.stdout.write(JSON.stringify(${JSON.stringify(DEFERRED_MODULES)}.map((file) =>
        Object.entries(require(${JSON.stringify(pulumiDir)} + "/" + file)).filter(([k]) => k !== "__esModule").map(([k, v]) => k + ":" + typeof v))))`),
    ) as string[][];
    expect(kinds.flat().length).toBeGreaterThanOrEqual(3);
    for (const entry of kinds.flat()) expect(entry).toMatch(/:function$/);
  });

  it("loads the SDK without TypeScript or arborist, and loads the real serializer on its first call", () => {
    const out = run(`require(${JSON.stringify(defer)}).deferSdkModules(${JSON.stringify(pulumiDir)});
const pulumi = require("@pulumi/pulumi");
const loaded = (name) => Object.keys(require.cache).some((path) => path.includes("/node_modules/" + name + "/"));
const before = [loaded("typescript"), loaded("@npmcli/arborist")];
const value = 42;
pulumi.runtime.serializeFunction(() => value).then((serialized) => {
  process.stdout.write(JSON.stringify({ before, after: loaded("typescript"), text: serialized.text.includes("42") }));
});`);
    expect(JSON.parse(out)).toEqual({ before: [false, false], after: true, text: true });
  });

  it("loads the SDK without the Automation API, which loads on the first use of one of its members", () => {
    const out = run(`require(${JSON.stringify(defer)}).deferSdkModules(${JSON.stringify(pulumiDir)});
const pulumi = require("@pulumi/pulumi");
const loaded = (name) => Object.keys(require.cache).some((path) => path.includes("/node_modules/" + name + "/"));
const before = { execa: loaded("execa"), jsYaml: loaded("js-yaml") };
const workspace = pulumi.automation.LocalWorkspace;
const real = require(${JSON.stringify(join(pulumiDir, DEFERRED_NAMESPACE))});
process.stdout.write(JSON.stringify({
  before,
  after: loaded("execa"),
  same: workspace === real.LocalWorkspace && typeof workspace.create === "function",
  keys: Object.keys(pulumi.automation).includes("LocalWorkspace") && "Stack" in pulumi.automation,
  error: new real.CommandError("x") instanceof pulumi.automation.CommandError,
}));`);
    expect(JSON.parse(out)).toEqual({ before: { execa: false, jsYaml: false }, after: true, same: true, keys: true, error: true });
  });
});

describe("deferring what the SDK uses only inside functions", () => {
  /** A file only the real module loads (the stand-in sits at the module's own path). */
  const realFiles: Record<string, string> = {
    semver: "/node_modules/semver/functions/",
    "@opentelemetry/api": "/node_modules/@opentelemetry/api/build/src/api/",
    grpc: "/node_modules/@grpc/grpc-js/build/src/channel.js",
  };
  const program = (deferGrpc: boolean) => `const deferring = require(${JSON.stringify(defer)});
deferring.deferSdkModules(${JSON.stringify(pulumiDir)});
${deferGrpc ? `deferring.deferGrpc(${JSON.stringify(pulumiDir)});` : ""}
const pulumi = require("@pulumi/pulumi");
const real = ${JSON.stringify(realFiles)};
const loaded = () => Object.fromEntries(Object.entries(real).map(([name, file]) => [name, Object.keys(require.cache).some((path) => path.includes(file))]));
(async () => {
  await pulumi.runtime.setMocks({ newResource: (args) => ({ id: args.name, state: args.inputs }), call: () => ({}) }, "p", "s", false);
  const { App } = require("./dist/index.js");
  const app = new App("a", { name: "A" });
  const id = await new Promise((resolve) => app.id.apply(resolve));
  const before = loaded();
  const fromSdk = (name) => require(require.resolve(name, { paths: [${JSON.stringify(pulumiDir)}] }));
  const semver = fromSdk("semver");
  const uses = [
    semver.gt("1.2.0", "1.1.9"),
    // What TypeScript's \`import semver from "semver"\` reads of the stand-in: the module itself (plain CommonJS).
    semver.default.lt("1.2.0", "1.1.9"),
    typeof fromSdk("@opentelemetry/api").context.active,
    fromSdk("@grpc/grpc-js").status.UNAVAILABLE,
  ];
  process.stdout.write(JSON.stringify({ id, before, after: loaded(), uses }));
})();`;

  it("registers a resource without loading semver or the OpenTelemetry API, which load on first use", () => {
    expect(DEFERRED_PACKAGES).toEqual(["semver", "@opentelemetry/api"]);
    expect(JSON.parse(run(program(false)))).toEqual({
      id: "a",
      before: { semver: false, "@opentelemetry/api": false, grpc: true },
      after: { semver: true, "@opentelemetry/api": true, grpc: true },
      uses: [true, false, "function", 14],
    });
  });

  it("leaves alone what an SDK without those packages or files does not have", () => {
    const out = run(`const deferring = require(${JSON.stringify(defer)});
const dir = require("node:fs").mkdtempSync(require("node:path").join(require("node:os").tmpdir(), "no-sdk-"));
const before = Object.keys(require.cache).length;
deferring.deferSdkModules(dir);
deferring.deferGrpc(dir);
const added = Object.keys(require.cache).filter((path) => path.startsWith(dir)).map((path) => path.slice(dir.length));
process.stdout.write(JSON.stringify({ added: added.sort(), others: Object.keys(require.cache).length - before - added.length }));
require("node:fs").rmSync(dir, { recursive: true });`);
    // Only the SDK's own files are stood in for (never required from such a directory); no package, no gRPC.
    expect(JSON.parse(out)).toEqual({
      added: ["/automation/index.js", "/runtime/closure/codePaths.js", "/runtime/closure/serializeClosure.js"],
      others: 0,
    });
  });

  it("with gRPC deferred too (the program process), registers a resource without loading grpc-js", () => {
    expect(JSON.parse(run(program(true)))).toEqual({
      id: "a",
      before: { semver: false, "@opentelemetry/api": false, grpc: false },
      after: { semver: true, "@opentelemetry/api": true, grpc: true },
      uses: [true, false, "function", 14],
    });
  });
});

/**
 * The program process also trims two per-resource costs of the SDK (runner.ts): the full stack it captures
 * for a resource's source position, and the stack trace it records on every promise it tracks. Each is a
 * replacement of one SDK function; an SDK that no longer calls it would leave the trim without effect.
 */
describe("the SDK functions the program process replaces", () => {
  it("are where the runner expects them, and called as it expects", () => {
    const source = (file: string) => readFileSync(join(pulumiDir, file), "utf8");
    expect(source("resource.js")).toMatch(/const stackTrace = Resource\.stackTrace\(\d+\);/);
    expect(source("runtime/resource.js")).toContain("debuggable_1.debuggablePromise(");
    const out = run(`const pulumi = require("@pulumi/pulumi");
const debuggable = require(${JSON.stringify(join(pulumiDir, "runtime/debuggable.js"))});
process.stdout.write(JSON.stringify([typeof pulumi.Resource.stackTrace, typeof debuggable.debuggablePromise, typeof debuggable.debugPromiseLeaks]));`);
    expect(JSON.parse(out)).toEqual(["function", "function", "boolean"]);
  });
});
