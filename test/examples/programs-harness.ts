/**
 * What the suites on examples/programs share: the examples (one folder each, holding `Pulumi.yaml` and the files it
 * reads), the secret config each declares, an emulator seeded with fixtures.json, and the one check every run of an
 * example makes, whatever language runs it (`checkExampleLifecycle`): `up` makes the example's objects, each found
 * through the service's API and nothing else made; a preview expecting no changes passes; `destroy` leaves the
 * workspace as the fixtures made it (with a fine-tune's training Dataset); no secret shows in anything printed or in
 * `pulumi stack export`. `inlineGoProgram` turns a generated main.go into a package a Go driver runs inline.
 */
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { parse } from "yaml";
import { goRunFunction } from "../../src/discover/go-program";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { callOverHttp } from "../emulator/harness";

export const PROGRAMS = join(__dirname, "..", "..", "examples", "programs");
export const FIXTURES = join(PROGRAMS, "fixtures.json");
/** The forms `npm run examples` generates beside each example: not the example, nor a file it reads. */
export const GENERATED = new Set(["typescript", "python", "go"]);

/** The examples' folder names, sorted: every folder of examples/programs with a Pulumi.yaml. */
export const EXAMPLES = readdirSync(PROGRAMS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(PROGRAMS, entry.name, "Pulumi.yaml")))
  .map((entry) => entry.name)
  .sort();

/** The API key of the fixtures' workspace. */
export const API_KEY = (JSON.parse(readFileSync(FIXTURES, "utf8")) as { workspaces: { apiKey: string }[] }).workspaces[0]!.apiKey;

export interface ExampleProject {
  name: string;
  /** The example's folder. */
  source: string;
  /** Its Pulumi.yaml, as written. */
  projectYaml: string;
  /** The names of the stack outputs it declares. */
  outputs: string[];
  /** A fresh value for each config key it declares `secret: true`. */
  secretConfig: Record<string, string>;
  /** Every value that must never show: the workspace's key and the secret config. */
  secrets: string[];
}

/** An example with fresh values for its secret config (unique to this call, so that a leak names its run). */
export function exampleProject(name: string): ExampleProject {
  const source = join(PROGRAMS, name);
  const projectYaml = readFileSync(join(source, "Pulumi.yaml"), "utf8");
  const parsed = parse(projectYaml) as { config?: Record<string, { secret?: boolean }>; outputs?: Record<string, unknown> };
  const secretConfig = Object.fromEntries(
    Object.entries(parsed.config ?? {})
      .filter(([, setting]) => setting.secret === true)
      .map(([key]) => [key, `sk-${name}-${key}-${randomBytes(6).toString("hex")}`]),
  );
  return {
    name,
    source,
    projectYaml,
    outputs: Object.keys(parsed.outputs ?? {}).sort(),
    secretConfig,
    secrets: [API_KEY, ...Object.values(secretConfig)],
  };
}

/** Copies the files the example reads (handbook.md, ...) into `dir`: everything beside Pulumi.yaml but the generated forms. */
export function copyExampleFiles(example: ExampleProject, dir: string): void {
  for (const entry of readdirSync(example.source))
    if (entry !== "Pulumi.yaml" && !GENERATED.has(entry)) cpSync(join(example.source, entry), join(dir, entry), { recursive: true });
}

/** The stack's config as the suites set it: the service's URL, its key as a secret, and the example's secret config. */
export function stackConfig(example: ExampleProject, baseUrl: string): Record<string, { value: string; secret: boolean }> {
  return {
    "gms:baseUrl": { value: baseUrl, secret: false },
    "gms:apiKey": { value: API_KEY, secret: true },
    ...Object.fromEntries(Object.entries(example.secretConfig).map(([key, value]) => [key, { value, secret: true }])),
  };
}

export type Api = (method: string, path: string) => Promise<{ status: number; body: any }>;

/** An emulator of the example's own, seeded with fixtures.json (so Support's Data records are numbered 1 to 12), and its API. */
export async function startExampleEmulator(): Promise<{ emulator: RunningEmulator; api: Api }> {
  const emulator = await startEmulator({ port: 0, db: ":memory:", fixtures: FIXTURES, fineTuneSeconds: 1 });
  return { emulator, api: (method, path) => callOverHttp({ url: emulator.url, apiKey: API_KEY }, method, path) };
}

type Listed = { guid: string; name?: string };

/** A list route's items: a bare array or the `{data, ...}` envelope. */
async function list(api: Api, path: string): Promise<Listed[]> {
  const { status, body } = await api("GET", path);
  expect(status, path).toBe(200);
  return Array.isArray(body) ? body : body.data;
}

/** Where one object of each kind is read, by GUID (a Context Source under its Context). */
export const ROUTES: Record<string, (guid: string, inputs: Record<string, any>) => string> = {
  App: (guid) => `/apps/${guid}`,
  Workflow: (guid) => `/workflows/${guid}`,
  ProviderConnection: (guid) => `/providers/${guid}`,
  Model: (guid) => `/models/${guid}`,
  Dataset: (guid) => `/datasets/${guid}`,
  Eval: (guid) => `/evals/${guid}`,
  Experiment: (guid) => `/experiments/${guid}`,
  Skill: (guid) => `/skills/${guid}`,
  ContextSource: (guid, inputs) => `/contexts/${inputs.context}/context_sources/${guid}`,
  FineTune: (guid) => `/finetune/${guid}`,
};

/** Every object of the workspace of a kind a program can make, as `Kind guid`, sorted. */
export async function workspaceObjects(api: Api): Promise<string[]> {
  const objects: string[] = [];
  const add = (kind: string, items: Listed[]) => objects.push(...items.map((item) => `${kind} ${item.guid}`));
  const apps = await list(api, "/apps?limit=100");
  add("App", apps);
  for (const app of apps) add("Workflow", await list(api, `/apps/${app.guid}/workflows`));
  add("ProviderConnection", await list(api, "/providers"));
  add("Model", await list(api, "/models"));
  add("Dataset", await list(api, "/datasets?limit=100"));
  add("Eval", await list(api, "/evals"));
  add("Experiment", await list(api, "/experiments"));
  add("Skill", await list(api, "/skills"));
  add("FineTune", await list(api, "/finetune"));
  const workspace = (await api("GET", "/workspaces/current")).body as { guid: string };
  for (const context of await list(api, `/workspaces/${workspace.guid}/context`))
    add("ContextSource", await list(api, `/contexts/${context.guid}/context_sources`));
  return objects.sort();
}

interface StateResource {
  type: string;
  id?: string;
  inputs?: Record<string, any>;
  outputs?: Record<string, any>;
}

const stateResources = (exported: string) => (JSON.parse(exported).deployment.resources ?? []) as StateResource[];
const gmsResources = (exported: string) => stateResources(exported).filter((resource) => resource.type.startsWith("gms:index:"));

/** The example's objects in the stack's state, as kind and GUID with the inputs that locate them. */
export const objectsOf = (exported: string) =>
  gmsResources(exported).map((resource) => ({
    kind: resource.type.slice("gms:index:".length),
    guid: resource.id!,
    inputs: resource.inputs ?? {},
  }));

/** The names of the stack's outputs in an export, sorted. */
export const stackOutputsOf = (exported: string) =>
  Object.keys(stateResources(exported).find((resource) => resource.type === "pulumi:pulumi:Stack")?.outputs ?? {}).sort();

/**
 * What the service made beside the example's objects, as `Kind guid`: a fine-tune's training Dataset, which the
 * service builds on create and keeps when the fine-tune is deleted (a Dataset like any other; docs/emulator.md).
 */
const madeByTheService = (exported: string) =>
  gmsResources(exported)
    .filter((resource) => resource.type === "gms:index:FineTune")
    .map((resource) => `Dataset ${resource.outputs!.trainingDataset}`);

/** An example's stack, however it runs: each operation resolves with everything printed and rejects when it fails. */
export interface ExampleStack {
  up(): Promise<string>;
  /** A preview that fails when it finds a change (`--expect-no-changes`). */
  previewNoChanges(): Promise<string>;
  destroy(): Promise<string>;
  /** `pulumi stack export`. */
  exportState(): Promise<string>;
}

/**
 * `up`, the API check of every object made, a preview with no change, `destroy`, the API check that only the
 * fixtures (and what the service keeps) remain, and no secret in what any step printed nor in the export. Resolves
 * with the export taken after `up`.
 */
export async function checkExampleLifecycle(api: Api, stack: ExampleStack, secrets: string[]): Promise<string> {
  const fixtures = await workspaceObjects(api);
  const up = await stack.up();
  const exported = await stack.exportState();
  const made = objectsOf(exported);
  expect(made.length, "the example's objects in state").toBeGreaterThan(0);
  for (const { kind, guid, inputs } of made) expect((await api("GET", ROUTES[kind]!(guid, inputs))).status, `${kind} ${guid}`).toBe(200);
  const kept = madeByTheService(exported);
  expect(await workspaceObjects(api), "the fixtures and the example's objects, nothing else").toEqual(
    [...fixtures, ...kept, ...made.map(({ kind, guid }) => `${kind} ${guid}`)].sort(),
  );

  const preview = await stack.previewNoChanges();
  const destroy = await stack.destroy();
  for (const { kind, guid, inputs } of made) expect((await api("GET", ROUTES[kind]!(guid, inputs))).status, `${kind} ${guid}`).toBe(404);
  expect(await workspaceObjects(api), "only the fixtures (and what the service keeps) after destroy").toEqual(
    [...fixtures, ...kept].sort(),
  );

  // The gms:apiKey of the stack is in the default provider's inputs, so every export holds a secret.
  expect(exported).toContain('"ciphertext"');
  for (const [label, text] of Object.entries({ up, exported, preview, destroy }))
    for (const secret of secrets) expect(text.includes(secret), `${label} shows a secret`).toBe(false);
  return exported;
}

/**
 * A generated main.go as package `packageName` whose exported `Program` is the function main gave to `pulumi.Run`,
 * unchanged, for a driver to pass to `auto.UpsertStackInlineSource` (goRunFunction, as discover writes its Go
 * program). Throws, saying what it expected, on a file of any other shape.
 */
export function inlineGoProgram(source: string, packageName: string): string {
  try {
    return goRunFunction(source, packageName, "Program", "Program is the function the generated main passed to pulumi.Run.");
  } catch (error) {
    throw new Error(`inlineGoProgram: ${(error as Error).message}`);
  }
}
