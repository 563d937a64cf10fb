/**
 * The written projects as data: how `--split-by app` shares out the objects (an App's own, by their `app` or their
 * Action's App, the rest shared; a project for an App left out; entry names kept off `shared`), the stack list it
 * writes, the current login as `pulumi whoami` (a stand-in script) answers it, and the commands printed for a project
 * (the state backend's lines for each kind of login, with nothing of the CLI's error when there is none; the
 * passphrase's note by backend; words quoted for the shell; where the API key comes from).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type Backend, backendLines, currentBackend, shellWord, stackInitNote } from "../../src/discover/backend";
import type { Discovery, ImportEntry, LeftOut, LiveInputs } from "../../src/discover/plan";
import { exportedKinds, exportKey, splitByApp, stackList } from "../../src/discover/split";
import { adoptionSteps, type StepsContext } from "../../src/discover/steps";
import { KIND_NAMES } from "../../src/resources";

let next = 0;
const guid = () => `${String(++next).padStart(8, "0")}-0000-4000-8000-000000000000`;
const entry = (kind: string, name: string): ImportEntry => ({ type: `gms:index:${kind}`, name, id: guid() });

function discovery(resources: ImportEntry[], leftOut: LeftOut[] = []): Discovery {
  return {
    workspace: { guid: guid(), name: "Acme" },
    listed: Object.fromEntries(KIND_NAMES.map((kind) => [kind, 0])) as Discovery["listed"],
    document: { resources },
    leftOut,
    configKeys: [],
    notes: [],
    caveats: [],
    notResources: "",
    language: { runtime: "yaml" },
    next: [],
  };
}

describe("--split-by app", () => {
  const billing = entry("App", "billing");
  const shared = entry("App", "shared");
  const triage = entry("Workflow", "triage");
  const golden = entry("Dataset", "golden");
  const quality = entry("Eval", "quality");
  const orphan = entry("Eval", "orphan");
  const openai = entry("ProviderConnection", "openai");
  const action = guid();
  const sales = guid();
  const pitch = entry("Experiment", "pitch");
  const live: LiveInputs = new Map<string, Record<string, unknown>>([
    [billing.id, { name: "Billing" }],
    [shared.id, { name: "Shared" }],
    [triage.id, { name: "Triage", app: billing.id }],
    // A Dataset of no App, and an Eval whose Action is of no App the workspace lists.
    [golden.id, { name: "Golden", app: null }],
    [quality.id, { name: "Quality", action }],
    [orphan.id, { name: "Orphan", action: guid() }],
    [openai.id, { nickname: "OpenAI" }],
    // An Experiment of an App left out by the selection.
    [pitch.id, { name: "Pitch", app: sales }],
  ]);
  const left: LeftOut = { code: "not-picked", type: "gms:index:App", object: "Sales", name: "sales", guid: sales, reason: "not picked" };
  const projects = splitByApp(
    discovery([billing, shared, openai, triage, golden, quality, orphan, pitch], [left]),
    live,
    new Map([[action, billing.id]]),
    "estate",
  );

  it("gives an App its own objects, by their app or their Action's App, and shares out the rest", () => {
    expect(projects.map((project) => [project.entry, project.dir, project.project, project.resources.map((held) => held.name)])).toEqual([
      ["shared", "shared", "estate-shared", ["openai", "golden", "orphan"]],
      ["billing", "apps/billing", "estate-billing", ["billing", "triage", "quality"]],
      // Sales is left out, but what belongs to it still goes together.
      ["sales", "apps/sales", "estate-sales", ["pitch"]],
      // An App named like the shared project's entry takes another name.
      ["shared-app", "apps/shared-app", "estate-shared-app", ["shared"]],
    ]);
    expect(projects.map((project) => project.dependsOn)).toEqual([[], ["shared"], ["shared"], ["shared"]]);
    expect(projects[1]!.app).toEqual({ guid: billing.id, name: "Billing" });
    expect(projects[2]!.app).toEqual({ guid: sales, name: "Sales" });
  });

  it("exports per kind a map under the kind's name, the shared project always the four the layout promises", () => {
    expect(KIND_NAMES.map(exportKey)).toEqual([
      "apps",
      "connections",
      "models",
      "workflows",
      "datasets",
      "evals",
      "experiments",
      "skills",
      "contextSources",
      "fineTunes",
    ]);
    expect(exportedKinds(projects[0]!)).toEqual(["ProviderConnection", "Model", "Dataset", "Eval", "Skill", "ContextSource"]);
    expect(exportedKinds(projects[1]!)).toEqual(["App", "Workflow", "Eval"]);
  });

  it("lists the stacks with their folders and dependencies, and nothing else", () => {
    const text = stackList(projects, "prod", "pulumi-gms discover --split-by app");
    expect(text).toMatch(/^# The stacks `pulumi-gms discover --split-by app` wrote/);
    expect(parse(text)).toEqual({
      stacks: {
        shared: { dir: "shared", stack: "prod" },
        billing: { dir: "apps/billing", stack: "prod", dependsOn: ["shared"] },
        sales: { dir: "apps/sales", stack: "prod", dependsOn: ["shared"] },
        "shared-app": { dir: "apps/shared-app", stack: "prod", dependsOn: ["shared"] },
      },
    });
  });
});

describe("the current login, asked of `pulumi whoami`", () => {
  const dir = mkdtempSync(join(tmpdir(), "gms-discover-whoami-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  /** A `pulumi` that prints `stdout` and `stderr` and exits with `code`, whatever it is asked. */
  const fakePulumi = (name: string, stdout: string, stderr: string, code: number) => {
    const path = join(dir, name);
    writeFileSync(path, `#!/bin/sh\nprintf '%s' '${stdout}'\nprintf '%s\\n' '${stderr}' >&2\nexit ${code}\n`, { mode: 0o755 });
    return path;
  };
  const CLI_ERROR = "error: PULUMI_ACCESS_TOKEN must be set for login during non-interactive CLI sessions";

  it.each([
    ["a CLI that is not there", join(dir, "no-such-pulumi")],
    ["a whoami that fails", fakePulumi("failing", "", CLI_ERROR, 255)],
    ["a whoami that names no backend", fakePulumi("no-url", "{}", "", 0)],
    ["a whoami that answers no JSON", fakePulumi("no-json", "User: me", "", 0)],
  ])("is none after %s, and the hint holds nothing the CLI printed", async (_, pulumi) => {
    const backend = await currentBackend(pulumi, dir, {});
    expect(backend).toEqual({});
    const [line] = backendLines(backend);
    expect(line).toMatch(/^pulumi login {3}# no current login: this stores the stacks in Pulumi Cloud;/);
    for (const text of [CLI_ERROR, "PULUMI_ACCESS_TOKEN", pulumi, "JSON"]) expect(line).not.toContain(text);
  });

  it("is the URL whoami names, from the login or from PULUMI_BACKEND_URL", async () => {
    const pulumi = fakePulumi("cloud", '{"user":"me","url":"https://api.pulumi.com"}', "", 0);
    expect(await currentBackend(pulumi, dir, {})).toEqual({ url: "https://api.pulumi.com", from: "login" });
    expect(await currentBackend(pulumi, dir, { PULUMI_BACKEND_URL: "https://api.pulumi.com" })).toEqual({
      url: "https://api.pulumi.com",
      from: "PULUMI_BACKEND_URL",
    });
  });
});

describe("the printed commands", () => {
  it.each([
    [
      { url: "file:///home/me/state", from: "PULUMI_BACKEND_URL" },
      "export PULUMI_BACKEND_URL=file:///home/me/state   # the state backend you use now (PULUMI_BACKEND_URL)",
    ],
    [
      { url: "s3://state?region=eu-west-1&endpoint=x", from: "login" },
      "pulumi login 's3://state?region=eu-west-1&endpoint=x'   # the state backend you are logged in to now",
    ],
    [
      { url: "postgres://db.example.com/state", from: "login", credentialsLeftOut: true },
      "pulumi login postgres://db.example.com/state   # the state backend you are logged in to now (its user and password left out: add yours)",
    ],
    [
      {},
      "pulumi login   # no current login: this stores the stacks in Pulumi Cloud; to keep them " +
        "in a folder instead, run `mkdir -p ~/.pulumi-state && export PULUMI_BACKEND_URL=file://~/.pulumi-state " +
        "PULUMI_CONFIG_PASSPHRASE=<a passphrase you keep>`",
    ],
  ] as [Backend, string][])("name the state backend %j", (backend, line) => {
    expect(backendLines(backend)).toEqual([line]);
  });

  it("say a passphrase seals the stack's secrets on any backend but Pulumi Cloud, and whether the shell has it", () => {
    expect(stackInitNote({ url: "https://api.pulumi.com", from: "login" }, {})).toBeUndefined();
    expect(stackInitNote({ url: "file:///s", from: "login" }, {})).toBe(
      "its secrets are sealed with a passphrase: export PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE) first, and keep it",
    );
    expect(stackInitNote({ url: "s3://state", from: "PULUMI_BACKEND_URL" }, { PULUMI_CONFIG_PASSPHRASE: "" })).toBe(
      "its secrets are sealed with the passphrase of PULUMI_CONFIG_PASSPHRASE (or _FILE), set in this shell",
    );
  });

  it("with no current login, say the passphrase is a folder's or a bucket's only, Pulumi Cloud needing none", () => {
    expect(stackInitNote({}, {})).toBe(
      "with the state in a folder or a bucket, its secrets are sealed with a passphrase: export PULUMI_CONFIG_PASSPHRASE (or " +
        "PULUMI_CONFIG_PASSPHRASE_FILE) first, and keep it; Pulumi Cloud seals them itself, with nothing to set",
    );
    expect(stackInitNote({}, { PULUMI_CONFIG_PASSPHRASE_FILE: "/p" })).toBe(
      "with the state in a folder or a bucket, its secrets are sealed with the passphrase of PULUMI_CONFIG_PASSPHRASE (or _FILE), " +
        "set in this shell; Pulumi Cloud seals them itself, with nothing to set",
    );
  });

  it("quote for the shell only what needs it", () => {
    expect(shellWord("apps/billing")).toBe("apps/billing");
    expect(shellWord("my projects/it's")).toBe("'my projects/it'\\''s'");
  });

  it("take each project from the last one's folder, in order, with its setup, stack, settings, keys, up and preview", () => {
    const context: StepsContext = {
      language: "python",
      version: "1.2.3",
      stack: "dev",
      baseUrl: "https://gms.example.com/v1",
      apiKey: { file: "/keys/gms key" },
      backend: { url: "https://api.pulumi.com", from: "login" },
      env: {},
    };
    const key = {
      resource: "openai",
      type: "gms:index:ProviderConnection",
      property: "key",
      configKey: "openaiKey",
      setCommand: "pulumi config set --secret openaiKey",
      about: "the key it was made with",
      programLine: "",
      where: "",
    };
    expect(
      adoptionSteps(context, [
        { cd: "estate/shared", project: "estate-shared", configKeys: [key], adopted: 2 },
        { cd: "../apps/billing", project: "estate-billing", configKeys: [], adopted: 1 },
      ]),
    ).toEqual([
      "pulumi login https://api.pulumi.com   # the state backend you are logged in to now",
      ...["estate/shared", "../apps/billing"].flatMap((cd, index) => [
        `cd ${cd}`,
        "python3 -m venv venv",
        "venv/bin/pip install pulumi pulumi-gms==1.2.3",
        "pulumi stack init dev",
        "pulumi config set gms:baseUrl https://gms.example.com/v1",
        "pulumi config set --secret gms:apiKey < '/keys/gms key'   # the API key discover read (--api-key-file)",
        ...(index === 0 ? ["pulumi config set --secret openaiKey   # the key it was made with"] : []),
        `pulumi up   # shows the plan and asks first: it imports ${index === 0 ? "the 2 objects" : "the object"} and changes none`,
        "pulumi preview --expect-no-changes",
      ]),
    ]);
  });
});
