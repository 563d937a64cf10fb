/**
 * What the per-kind suites on the real Pulumi CLI share: an emulator seeded with what the public interface
 * cannot create (Actions, Data records, Contexts, configured Skills, Eval types), a program directory whose
 * `index.ts` each run rewrites from declarations, a PulumiCliEngine for one stack with every line of CLI
 * output kept, and helpers to read the checkpoint and to call the service's API directly.
 */
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { type Fixtures, type RunningEmulator, startEmulator } from "../../src/emulator";
import type { RequestLogEntry } from "../../src/emulator/server";
import { type PulumiCli, PulumiCliEngine } from "../../src/testing";
import type { CliResult } from "../../src/testing";
import type { PlanStep } from "../../src/testing/results";
import { callOverHttp } from "../emulator/harness";
import { makeProgramDir } from "./harness";

export const ACME_KEY = "gms_kinds_acme_key_5e1c";
/** The key of a second workspace, given to one resource as its own `connection.apiKey`, written in the program as plain text. */
export const OTHER_KEY = "gms_kinds_other_key_93d0";

const records = (action: string, count: number) =>
  Array.from({ length: count }, (_, index) => ({ action, input: { text: `ticket ${index}` }, output: `summary ${index}` }));

export const KINDS_FIXTURES: Fixtures = {
  workspaces: [
    {
      name: "Acme",
      slug: "acme",
      apiKey: ACME_KEY,
      apps: [
        {
          name: "Support",
          actions: [
            { name: "Summarize", prompt: "Summarize: {{text}}", model: "gpt-4o-mini" },
            { name: "Classify", prompt: "Classify: {{text}}", model: "gpt-4o" },
          ],
          data: records("Summarize", 14),
        },
        {
          name: "Sales",
          actions: [
            { name: "Pitch", prompt: "Pitch {{product}}", model: "gpt-4o" },
            { name: "Follow up", prompt: "Follow up on {{product}}", model: "gpt-4o" },
          ],
        },
      ],
      contexts: [{ name: "Handbook" }, { name: "FAQ" }],
      skills: [
        { name: "web-search", type: "web", metadata: [{ name: "engine", required: true, value: "bing", type: "string" }] },
        { name: "code-runner", type: "code" },
      ],
    },
    { name: "Other", slug: "other", apiKey: OTHER_KEY, apps: [{ name: "Elsewhere" }] },
  ],
  evalTypes: [{ name: "Exact match" }, { name: "Toxicity" }],
};

/** A piece of program text, written into the program as it is (a config lookup, an asset, ...). */
export class Code {
  constructor(readonly text: string) {}
}
export const code = (text: string) => new Code(text);

/** A value as TypeScript source: JSON, with Code pieces as they are. */
export function source(value: unknown): string {
  if (value instanceof Code) return value.text;
  if (Array.isArray(value)) return `[${value.map(source).join(", ")}]`;
  if (value && typeof value === "object")
    return `{ ${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}: ${source(v)}`)
      .join(", ")} }`;
  return JSON.stringify(value);
}

export interface Declaration {
  kind: string;
  name: string;
  args: Record<string, unknown>;
}

export const programOf = (declarations: Declaration[]) =>
  [
    `import * as pulumi from "@pulumi/pulumi";`,
    `import * as gms from "pulumi-gms";`,
    `const config = new pulumi.Config();`,
    `void config;`,
    ...declarations.map((d) => `new gms.${d.kind}(${JSON.stringify(d.name)}, ${source(d.args)});`),
    "",
  ].join("\n");

type Api = <T = any>(method: string, path: string, body?: unknown) => Promise<{ status: number; body: T }>;

/** The fixtures' GUIDs by name and the two workspaces' APIs, as every suite over KINDS_FIXTURES needs them. */
export interface FixtureLookups {
  /** The API of the first workspace (Acme). */
  api: Api;
  /** The API of the second workspace (Other). */
  otherApi: Api;
  /** The Acme fixtures' GUIDs by name: apps, actions (`App/Action`), contexts, evalTypes. */
  guids: {
    apps: Record<string, string>;
    actions: Record<string, string>;
    contexts: Record<string, string>;
    evalTypes: Record<string, string>;
  };
  /** Support's Data records with their numeric ids. */
  data: { guid: string; id: number }[];
  /** The numeric id of a Data record or a ProviderConnection (the emulator's own route). */
  numericId(kind: "data" | "providers", guid: string): Promise<number>;
}

/** Reads the GUIDs of an emulator seeded with KINDS_FIXTURES. */
export async function fixtureLookups(emulator: { url: string }): Promise<FixtureLookups> {
  const api: Api = (method, path, body) => callOverHttp({ url: emulator.url, apiKey: ACME_KEY }, method, path, body);
  const otherApi: Api = (method, path, body) => callOverHttp({ url: emulator.url, apiKey: OTHER_KEY }, method, path, body);
  const byName = (list: { name: string; guid: string }[]) => Object.fromEntries(list.map((item) => [item.name, item.guid]));
  const apps = byName((await api("GET", "/apps")).body.data);
  const actions: Record<string, string> = {};
  for (const [app, guid] of Object.entries(apps))
    for (const action of (await api("GET", `/apps/${guid}/actions`)).body) actions[`${app}/${action.name}`] = action.guid;
  const workspace = (await api("GET", "/workspaces/current")).body.guid as string;
  const contexts = byName((await api("GET", `/workspaces/${workspace}/context`)).body);
  const evalTypes = byName((await api("GET", "/evals/types")).body);
  const numericId = async (kind: "data" | "providers", guid: string) => {
    const answer = await callOverHttp({ url: emulator.url.replace(/\/v1$/, ""), apiKey: ACME_KEY }, "GET", `/_emulator/${kind}/${guid}`);
    expect(answer.status).toBe(200);
    return answer.body.id as number;
  };
  const listed = (await api("GET", `/apps/${apps.Support}/data?limit=100`)).body;
  const data = [];
  for (const { guid } of (listed.data ?? listed) as { guid: string }[]) data.push({ guid, id: await numericId("data", guid) });
  return { api, otherApi, guids: { apps, actions, contexts, evalTypes }, data, numericId };
}

export interface KindsBed extends FixtureLookups {
  emulator: RunningEmulator;
  engine: PulumiCliEngine;
  programDir: string;
  stateDir: string;
  /** Every line the CLI printed, over every run. */
  lines: string[];
  /** Every request the emulator answered. */
  requests: RequestLogEntry[];
  /** Runs `operation` of `declarations`' program. */
  run(operation: "preview" | "up" | "refresh" | "destroy", declarations: Declaration[]): Promise<CliResult>;
  /** The checkpoint's resources of the program (no provider, no stack). */
  resources(): CheckpointResource[];
  close(): Promise<void>;
}

export interface CheckpointResource {
  urn: string;
  type: string;
  id?: string;
  inputs?: Record<string, any>;
  outputs?: Record<string, any>;
  initErrors?: string[];
}

export async function startKindsBed(
  cli: PulumiCli,
  prefix: string,
  options: { config?: Record<string, string | { secret: string }>; fineTuneSeconds?: number } = {},
): Promise<KindsBed> {
  const requests: RequestLogEntry[] = [];
  const emulator = await startEmulator({
    port: 0,
    fixtures: KINDS_FIXTURES,
    fineTuneSeconds: options.fineTuneSeconds ?? 0,
    onRequestComplete: (entry) => requests.push(entry),
  });
  const programDir = makeProgramDir(prefix);
  const stateDir = join(programDir, "state");
  const lines: string[] = [];
  const engine = new PulumiCliEngine({
    cli,
    programDir,
    stateDir,
    project: "gms-kinds",
    stack: "dev",
    config: { "gms:baseUrl": emulator.url, "gms:apiKey": { secret: emulator.apiKey }, "gms:maxRetries": "0", ...options.config },
    secretsPassphrase: "kinds-passphrase",
    log: (line) => lines.push(line),
  });
  const { api, otherApi, guids, data, numericId } = await fixtureLookups(emulator);
  return {
    emulator,
    engine,
    programDir,
    stateDir,
    lines,
    requests,
    api,
    otherApi,
    guids,
    data,
    numericId,
    async run(operation, declarations) {
      writeFileSync(join(programDir, "index.ts"), programOf(declarations));
      return engine[operation]();
    },
    resources() {
      const state = JSON.parse(readFileSync(engine.checkpointFile(), "utf8"));
      return ((state.checkpoint.latest?.resources ?? []) as CheckpointResource[]).filter(
        (resource) => resource.type.includes("dynamic/gms:") || resource.type.startsWith("gms:"),
      );
    },
    async close() {
      await emulator.close();
      rmSync(programDir, { recursive: true, force: true });
    },
  };
}

/** The steps of a result by resource name. */
export const stepsByName = (result: CliResult): Record<string, PlanStep> =>
  Object.fromEntries(result.steps.map((step) => [step.name, step]));

/** The checkpoint's ids by resource name. */
export const idsByName = (bed: KindsBed): Record<string, string> =>
  Object.fromEntries(bed.resources().map((resource) => [resource.urn.slice(resource.urn.lastIndexOf("::") + 2), resource.id!]));

/** Every file under `dir`, with its text. */
export function filesUnder(dir: string): { path: string; text: string }[] {
  const found: { path: string; text: string }[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...filesUnder(path));
    else found.push({ path, text: readFileSync(path, "utf8") });
  }
  return found;
}
