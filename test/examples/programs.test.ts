/**
 * Every example program of examples/programs runs as typed, on the real CLI with the YAML language host and the
 * plugin: each `<name>/Pulumi.yaml` (with any file beside it) is copied unchanged into a project of its own, against
 * an emulator of its own seeded with examples/programs/fixtures.json. `up` makes the example's objects, each then
 * found through the service's API and nothing else made; `preview --expect-no-changes` finds nothing to do;
 * `destroy` leaves the workspace as the fixtures made it. The secrets (the workspace's API key and every config
 * value the example declares `secret: true`) never show in the CLI's output, and `pulumi stack export` holds them as
 * ciphertext. The CLI and the host are required under CI=true; without them the suite says why it skips.
 */
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startEmulator } from "../../src/emulator";
import { callOverHttp } from "../emulator/harness";
import { startCliProject, yamlCliFor } from "../plugin/cli-project";
import { cliName } from "../pulumi-cli/harness";

const cli = yamlCliFor("examples/programs.test.ts");
const PROGRAMS = join(__dirname, "..", "..", "examples", "programs");
const FIXTURES = join(PROGRAMS, "fixtures.json");
/** The generated forms beside each example are not the example: only the YAML program and the files it reads run. */
const GENERATED = new Set(["typescript", "python", "go"]);
const TIMEOUT = 240_000;

const EXAMPLES = readdirSync(PROGRAMS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(PROGRAMS, entry.name, "Pulumi.yaml")))
  .map((entry) => entry.name)
  .sort();
const API_KEY = (JSON.parse(readFileSync(FIXTURES, "utf8")) as { workspaces: { apiKey: string }[] }).workspaces[0]!.apiKey;

type Api = (method: string, path: string) => Promise<{ status: number; body: any }>;
type Listed = { guid: string; name?: string };

/** A list route's items: a bare array or the `{data, ...}` envelope. */
async function list(api: Api, path: string): Promise<Listed[]> {
  const { status, body } = await api("GET", path);
  expect(status, path).toBe(200);
  return Array.isArray(body) ? body : body.data;
}

/** Where one object of each kind is read, by GUID (a Context Source under its Context). */
const ROUTES: Record<string, (guid: string, inputs: Record<string, any>) => string> = {
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
async function workspaceObjects(api: Api): Promise<string[]> {
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

const resourcesOf = (exported: string) =>
  ((JSON.parse(exported).deployment.resources ?? []) as StateResource[]).filter((resource) => resource.type.startsWith("gms:index:"));

/** The example's objects in the stack's state, as kind and GUID with the inputs that locate them. */
const objectsOf = (exported: string) =>
  resourcesOf(exported).map((resource) => ({
    kind: resource.type.slice("gms:index:".length),
    guid: resource.id!,
    inputs: resource.inputs ?? {},
  }));

/**
 * What the service made beside the example's objects, as `Kind guid`: a fine-tune's training Dataset, which the
 * service builds on create and keeps when the fine-tune is deleted (a Dataset like any other; docs/emulator.md).
 */
const madeByTheService = (exported: string) =>
  resourcesOf(exported)
    .filter((resource) => resource.type === "gms:index:FineTune")
    .map((resource) => `Dataset ${resource.outputs!.trainingDataset}`);

describe.skipIf(!cli)(`every example program of examples/programs on the real CLI: ${cliName(cli)}`, () => {
  it("finds the examples, one project per folder named as the folder", () => {
    expect(EXAMPLES.length).toBeGreaterThan(0);
    for (const name of EXAMPLES) expect(parse(readFileSync(join(PROGRAMS, name, "Pulumi.yaml"), "utf8")).name, name).toBe(name);
  });

  it("shows every kind in at least one example", () => {
    const shown = new Set(
      EXAMPLES.flatMap((name) =>
        Object.values((parse(readFileSync(join(PROGRAMS, name, "Pulumi.yaml"), "utf8")).resources ?? {}) as { type: string }[]).map(
          (resource) => resource.type,
        ),
      ),
    );
    expect([...shown].sort()).toEqual(expect.arrayContaining(Object.keys(ROUTES).map((kind) => `gms:index:${kind}`)));
  });

  it.concurrent.each(EXAMPLES)(
    "%s: up makes its objects, a preview finds no change, destroy leaves only the fixtures; no secret shows",
    async (name) => {
      const source = join(PROGRAMS, name);
      const projectYaml = readFileSync(join(source, "Pulumi.yaml"), "utf8");
      const declared = (parse(projectYaml).config ?? {}) as Record<string, { secret?: boolean }>;
      const secretConfig = Object.fromEntries(
        Object.entries(declared)
          .filter(([, setting]) => setting.secret === true)
          .map(([key]) => [key, `sk-${name}-${key}-${randomBytes(6).toString("hex")}`]),
      );
      const secrets = [API_KEY, ...Object.values(secretConfig)];

      const emulator = await startEmulator({ port: 0, db: ":memory:", fixtures: FIXTURES, fineTuneSeconds: 1 });
      const project = startCliProject(cli!, `gms-example-${name}`, projectYaml);
      try {
        for (const entry of readdirSync(source))
          if (entry !== "Pulumi.yaml" && !GENERATED.has(entry)) cpSync(join(source, entry), join(project.dir, entry), { recursive: true });
        const api: Api = (method, path) => callOverHttp({ url: emulator.url, apiKey: API_KEY }, method, path);
        const fixtures = await workspaceObjects(api);
        await project.initStack("dev", {
          "gms:baseUrl": emulator.url,
          "gms:apiKey": { secret: API_KEY },
          ...Object.fromEntries(Object.entries(secretConfig).map(([key, value]) => [key, { secret: value }])),
        });

        const up = await project.pulumi("up", "--yes");
        const exported = await project.pulumi("stack", "export");
        const made = objectsOf(exported);
        expect(made.length, "the example's objects in state").toBeGreaterThan(0);
        for (const { kind, guid, inputs } of made)
          expect((await api("GET", ROUTES[kind]!(guid, inputs))).status, `${kind} ${guid}`).toBe(200);
        const kept = madeByTheService(exported);
        expect(await workspaceObjects(api), "the fixtures and the example's objects, nothing else").toEqual(
          [...fixtures, ...kept, ...made.map(({ kind, guid }) => `${kind} ${guid}`)].sort(),
        );

        const preview = await project.pulumi("preview", "--expect-no-changes", "--diff");
        const destroy = await project.pulumi("destroy", "--yes");
        for (const { kind, guid, inputs } of made)
          expect((await api("GET", ROUTES[kind]!(guid, inputs))).status, `${kind} ${guid}`).toBe(404);
        expect(await workspaceObjects(api), "only the fixtures (and what the service keeps) after destroy").toEqual(
          [...fixtures, ...kept].sort(),
        );

        // The gms:apiKey of the stack is in the default provider's inputs, so every export holds a secret.
        expect(exported).toContain('"ciphertext"');
        for (const [label, text] of Object.entries({ up, exported, preview, destroy }))
          for (const secret of secrets) expect(text.includes(secret), `${label} shows a secret`).toBe(false);
      } finally {
        project.close();
        await emulator.close();
      }
    },
    TIMEOUT,
  );
});
