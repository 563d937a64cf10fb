/**
 * The workspace document format: validation with every problem located (file, line, column, field),
 * the rules across entries, the component refusing a bad document before it registers anything, and
 * the shipped JSON Schema (up to date with the zod definitions, accepting the example, rejecting
 * mistakes) checked with ajv.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import Ajv from "ajv";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { parse } from "yaml";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { getWorkspace } from "../../src/lookups";
import { preflight } from "../../src/workspace/preflight";
import { TEST_FIXTURES } from "../emulator/harness";
import { Dataset } from "../../src/resources/dataset";
import { Workspace } from "../../src/workspace/component";
import type { InputFields } from "../../src/provider/fields";
import { kinds } from "../../src/resources";
import { workspaceJsonSchema, workspaceJsonSchemaText } from "../../src/workspace/schema-json";
import {
  EMPTY_DOCUMENT,
  SECTION_OF,
  WorkspaceSpecError,
  loadWorkspaceFile,
  loadWorkspaceObject,
  loadWorkspaceText,
} from "../../src/workspace/spec";

const ROOT = join(__dirname, "../..");
const EXAMPLE = join(ROOT, "examples/yaml-workspace");
const EXAMPLE_FILE = join(EXAMPLE, "workspace.yaml");
const SCHEMA_FILE = join(ROOT, "src/workspace/workspace.schema.json");

/** The problems of a document as `line:column: field: message` lines (the source name is `w.yaml`). */
function problems(text: string): string[] {
  try {
    loadWorkspaceText(text, "w.yaml", EXAMPLE);
  } catch (error) {
    expect(error).toBeInstanceOf(WorkspaceSpecError);
    // A RunError: the CLI prints the message alone, no stack.
    expect(pulumi.RunError.isInstance(error)).toBe(true);
    return (error as Error).message.split("\n").map((line) => {
      expect(line.startsWith("w.yaml:")).toBe(true);
      return line.slice("w.yaml:".length);
    });
  }
  throw new Error("the document was accepted");
}

const CONNECTION = `providerConnections:
  openai-main:
    provider: openai
    key: { config: openaiKey }
`;

describe("workspace documents", () => {
  it("the example resolves: every kind, references as written, defaults filled in", () => {
    const { spec, source, baseDir } = loadWorkspaceFile(EXAMPLE_FILE);
    expect(source).toBe(EXAMPLE_FILE);
    expect(baseDir).toBe(EXAMPLE);
    expect(Object.keys(spec).sort()).toEqual([
      "apps",
      "contextSources",
      "datasets",
      "evals",
      "experiments",
      "models",
      "providerConnections",
      "skills",
      "workflows",
    ]);
    expect(spec.models!["gpt-4o"]).toEqual({ llm: "gpt-4o", provider: "openai-main", default: true });
    expect(spec.providerConnections!["openai-main"]!.key).toEqual({ config: "openaiKey" });
    expect(spec.evals!["summary-match"]).toMatchObject({
      action: { app: "Support Bot", action: "Summarize" },
      evalTypes: ["Exact match"],
      dataset: "golden-summaries",
    });
    // The kinds' own schemas apply: the splitter's overlap default, the loader name.
    expect(spec.contextSources!.handbook!.splitterConfig).toEqual({ chunkSize: 400, chunkOverlap: 40 });
  });

  it("a syntax error is located", () => {
    expect(problems(`apps:\n  support:\n    name: "Support\n`)).toEqual([expect.stringMatching(/^4:1: Missing closing "quote/)]);
  });

  it("a logical name used twice in one map is a syntax error at the second, with the map's path", () => {
    expect(problems(`apps:\n  support:\n    name: Support\n  support:\n    name: Sales\n`)).toEqual([
      '4:3: apps.support: duplicate logical name "support" (Map keys must be unique)',
    ]);
    expect(problems(`apps:\n  support:\n    name: Support\n    name: Sales\n`)).toEqual([
      '4:5: apps.support.name: duplicate key "name" (Map keys must be unique)',
    ]);
    expect(problems(`apps:\n  support: { name: Support }\napps:\n  sales: { name: Sales }\n`)).toEqual([
      '3:1: apps: duplicate key "apps" (Map keys must be unique)',
    ]);
  });

  it("a missing required field is required, located at its entry", () => {
    const text = `apps:
  onboarding:
    description: First steps
providerConnections:
  openai-main:
    provider: openai
`;
    expect(problems(text)).toEqual(["3:5: apps.onboarding.name: is required", "6:5: providerConnections.openai-main.key: is required"]);
    expect(() => loadWorkspaceObject({ apps: { onboarding: { description: "First steps" } } }, "spec")).toThrow(
      /^spec: apps\.onboarding\.name: is required$/,
    );
  });

  it("a document that declares nothing is refused: it would delete everything the stack manages", () => {
    for (const text of ["", "# yaml-language-server: $schema=x.json\n", "apps: {}\nmodels: {}\n"])
      expect(problems(text)).toEqual([`1:1: ${EMPTY_DOCUMENT}`]);
    expect(EMPTY_DOCUMENT).toBe(
      "declares no resources: an empty workspace would delete everything this stack manages; remove the component (or the stack) to do that on purpose",
    );
    expect(() => loadWorkspaceObject({}, "spec")).toThrow(`spec: ${EMPTY_DOCUMENT}`);
    expect(() => loadWorkspaceObject({ apps: {}, skills: {} }, "spec")).toThrow(`spec: ${EMPTY_DOCUMENT}`);
    // One entry of any kind is enough.
    expect(loadWorkspaceText("skills:\n  search: { name: web-search, type: web }\n", "w.yaml", EXAMPLE).spec).toEqual({
      skills: { search: { name: "web-search", type: "web" } },
    });
    expect(loadWorkspaceObject({ apps: {}, datasets: { d: { name: "D" } } }, "spec").spec.datasets).toEqual({ d: { name: "D" } });
  });

  it("an unknown field is located at its key, and a wrong type at the value; all problems at once", () => {
    const text = `apps:
  support:
    name: Support
    descripton: Customer support
evals:
  live:
    name: Live
    action: { app: Support Bot, action: Summarize }
    evalTypes: [Toxicity]
    samplingRate: high
`;
    expect(problems(text)).toEqual([
      '4:5: apps.support.descripton: unknown key; did you mean "description"?',
      "10:19: evals.live.samplingRate: Invalid input: expected number, received string",
    ]);
  });

  it("the kinds' own field rules apply, located", () => {
    const text = `${CONNECTION}    url: ftp://example.com
evals:
  live:
    name: Live
    action: { app: Support Bot, action: Summarize }
    evalTypes: [Toxicity]
    samplingRate: 2
`;
    expect(problems(text)).toEqual([
      "5:10: providerConnections.openai-main.url: must be an http(s) URL",
      "11:19: evals.live.samplingRate: must be between 0 and 1",
    ]);
  });

  it("a secret written into the file is refused: keys come from the stack config or the environment", () => {
    expect(problems(`providerConnections:\n  openai-main:\n    provider: openai\n    key: sk-live-123\n`)).toEqual([
      "4:10: providerConnections.openai-main.key: must be { config: <stack config key> " +
        "} or { env: <environment variable> }: secrets are never written in the file",
    ]);
  });

  it("a dangling reference to a declared entry is located at the reference", () => {
    const text = `${CONNECTION}models:
  gpt-4o:
    llm: gpt-4o
    provider: openai-mian
evals:
  match:
    name: Match
    action: { app: Support Bot, action: Summarize }
    evalTypes: [Exact match]
    dataset: golden
`;
    expect(problems(text)).toEqual([
      '8:15: models.gpt-4o.provider: no ProviderConnection "openai-mian" is declared under providerConnections (declared: openai-main)',
      '14:14: evals.match.dataset: no Dataset "golden" is declared under datasets (declared: none)',
    ]);
  });

  it("twins, entries of one kind with the same name, are declared: the service keeps both and the document refers to logical names", () => {
    const text = `apps:
  support:
    name: Support
  helpdesk:
    name: Support
workflows:
  intake:
    name: Intake
    app: support
  intake-2:
    name: Intake
    app: support
datasets:
  golden:
    name: Golden
  golden-2:
    name: Golden
skills:
  search:
    name: web-search
    type: web
  search-2:
    name: web-search
    type: web
contextSources:
  handbook:
    context: Handbook
    file: ./handbook.md
  handbook-again:
    context: Handbook
    file: handbook.md
`;
    const { spec } = loadWorkspaceText(text, "w.yaml", EXAMPLE);
    expect(Object.keys(spec.apps!)).toEqual(["support", "helpdesk"]);
    expect(Object.keys(spec.workflows!)).toEqual(["intake", "intake-2"]);
    expect(Object.keys(spec.datasets!)).toEqual(["golden", "golden-2"]);
    expect(Object.keys(spec.skills!)).toEqual(["search", "search-2"]);
    expect(Object.keys(spec.contextSources!)).toEqual(["handbook", "handbook-again"]);
  });

  it("two declared Apps of one name are refused where Actions are looked up by that name, at the second, naming what refers", () => {
    const text = `apps:
  support:
    name: Support
  helpdesk:
    name: Support
  sales:
    name: Sales
  sales-2:
    name: Sales
experiments:
  tone:
    name: Tone
    app: support
    primaryAction: Summarize
    secondaryAction: Classify
evals:
  match:
    name: Match
    action: { app: helpdesk, action: Summarize }
    evalTypes: [Exact match]
`;
    expect(problems(text)).toEqual([
      '5:11: apps.helpdesk.name: an App named "Support" is already declared as apps.support; experiments.tone.app, ' +
        'evals.match.action.app refer to Actions of App "Support", which are looked up by the App\'s name, so the two ' +
        "cannot be told apart. Give one another name",
    ]);
    expect(problems(text.replace("action: { app: helpdesk", "action: { app: sales").replace("app: support\n", "app: sales-2\n"))).toEqual([
      '9:11: apps.sales-2.name: an App named "Sales" is already declared as apps.sales; experiments.tone.app, ' +
        'evals.match.action.app refer to Actions of App "Sales", which are looked up by the App\'s name, so the two ' +
        "cannot be told apart. Give one another name",
    ]);
  });

  it("only one default ProviderConnection; one of url and file; the file must exist", () => {
    const text = `${CONNECTION}    default: true
  anthropic:
    provider: anthropic
    key: { env: ANTHROPIC_API_KEY }
    default: true
contextSources:
  faq:
    context: FAQ
  handbook:
    context: Handbook
    file: ./missing.md
`;
    expect(problems(text)).toEqual([
      "9:14: providerConnections.anthropic.default: only one of providerConnections can be the default; providerConnections.openai-main already is",
      "12:5: contextSources.faq: a Context Source needs its content: set url (an http(s) " +
        "address the service fetches) or file (a path, relative to this document, to upload)",
      `15:11: contextSources.handbook.file: file ./missing.md does not exist (looked for ${join(EXAMPLE, "missing.md")})`,
    ]);
  });

  it("fine-tunes: the Dataset must be declared here, and their Data IDs follow the kind's rules", () => {
    const tune = (name: string, app: string, dataset: string, dataIds = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]") =>
      `    name: ${name}\n    app: ${app}\n    dataset: ${dataset}\n    dataIds: ${dataIds}\n    baseModel: gpt-4o-mini\n    providerConnection: 3\n`;
    const text = `apps:
  support:
    name: Support
datasets:
  examples:
    name: Examples
fineTunes:
  tone:
${tune("Tone", "support", "examples")}  tone-again:
${tune("Tone", "support", "examples")}  other-app:
${tune("Tone", "Sales", "examples")}  orphan:
${tune("Orphan", "support", "golden", "[1, 2, 3]")}`;
    expect(problems(text)).toEqual([
      "33:14: fineTunes.orphan.dataIds: must list at least 10 Data IDs: the service trains only when that many resolve",
      '32:14: fineTunes.orphan.dataset: no Dataset "golden" is declared under datasets (declared: examples)',
    ]);
    // Check's own normalization applies: the Data IDs come out sorted.
    const reversed = tune("Tone", "Sales", "examples", "[10, 9, 8, 7, 6, 5, 4, 3, 2, 1]");
    const loaded = loadWorkspaceText(`datasets:\n  examples:\n    name: Examples\nfineTunes:\n  tone:\n${reversed}`, "w.yaml", EXAMPLE);
    expect(loaded.spec.fineTunes!.tone!.dataIds).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("a fine-tune's providerConnection is a numeric id or { model } naming a Model declared here, located when it is neither", () => {
    const tune = (connection: string) =>
      `    name: Tone\n    app: Support Bot\n    dataset: examples\n    dataIds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n` +
      `    baseModel: gpt-4o-mini\n    providerConnection: ${connection}\n`;
    const head = `${CONNECTION}models:\n  gpt:\n    llm: gpt-4o\n    provider: openai-main\ndatasets:\n  examples:\n    name: Examples\nfineTunes:\n`;
    const loaded = loadWorkspaceText(`${head}  tone:\n${tune("{ model: gpt }")}`, "w.yaml", EXAMPLE);
    expect(loaded.spec.fineTunes!.tone!.providerConnection).toEqual({ model: "gpt" });
    expect(problems(`${head}  tone:\n${tune("{ model: gtp }")}`)).toEqual([
      '19:34: fineTunes.tone.providerConnection.model: no Model "gtp" is declared under models (declared: gpt)',
    ]);
    expect(problems(`${head}  tone:\n${tune("gpt")}`)).toEqual([
      "19:25: fineTunes.tone.providerConnection: must be the ProviderConnection's numeric id (workspaceModelProviderId) " +
        "or { model: <logical name of a Model declared under models> }",
    ]);
  });

  it("a logical name must be usable in a resource name", () => {
    expect(problems(`apps:\n  "support team":\n    name: Support\n`)).toEqual([
      `3:5: apps.support team: "support team" is not a valid logical name: a logical ` +
        `name is letters, digits, '.', '_' and '-', starting with a letter or a digit`,
    ]);
  });

  it("a document given as an object is checked the same way, problems named by field path", () => {
    expect(() =>
      loadWorkspaceObject({ apps: { support: { name: "Support", color: "blue" } }, models: { m: { llm: "x", provider: "none" } } }, "spec"),
    ).toThrow("spec: apps.support.color: unknown key");
    expect(() => loadWorkspaceObject({ models: { m: { llm: "x", provider: "none" } } }, "spec")).toThrow(
      'spec: models.m.provider: no ProviderConnection "none" is declared under providerConnections (declared: none)',
    );
    expect(loadWorkspaceObject({ apps: { support: { name: "Support" } } }, "spec").spec).toEqual({
      apps: { support: { name: "Support" } },
    });
  });
});

describe("the Workspace component refuses a bad document before it registers anything", () => {
  const registered: string[] = [];
  beforeAll(async () => {
    await pulumi.runtime.setMocks(
      {
        newResource: (args) => {
          registered.push(args.type);
          return { id: `${args.name}-id`, state: args.inputs };
        },
        call: () => {
          throw new Error("no invokes");
        },
      },
      "workspace-spec-test",
      "dev",
      true,
    );
  });
  afterEach(() => {
    expect(registered).toEqual([]);
  });

  it("a file with problems throws them from the constructor", () => {
    const file = join(EXAMPLE, "does-not-exist.yaml");
    expect(() => new Workspace("w", { file })).toThrow(`${file}: cannot read the workspace file`);
    expect(() => new Workspace("w", { spec: { apps: { support: { name: "" } } } })).toThrow(
      'Workspace "w" spec: apps.support.name: must not be empty',
    );
  });

  it("a secret the stack config does not hold is located at its reference", () => {
    const lines = readFileSync(EXAMPLE_FILE, "utf8").split("\n");
    const line = lines.findIndex((text) => text.includes("key: { config: openaiKey }"));
    const column = lines[line]!.indexOf("openaiKey") + 1;
    expect(() => new Workspace("w", { file: EXAMPLE_FILE })).toThrow(
      `${EXAMPLE_FILE}:${line + 1}:${column}: providerConnections.openai-main.key.config: stack ` +
        `config "openaiKey" is not set: run \`pulumi config set --secret openaiKey <value>\``,
    );
    expect(
      () => new Workspace("w", { spec: { providerConnections: { p: { provider: "openai", key: { env: "GMS_TEST_UNSET_VARIABLE" } } } } }),
    ).toThrow('Workspace "w" spec: providerConnections.p.key.env: environment variable GMS_TEST_UNSET_VARIABLE is not set (or is empty)');
  });

  it("takes exactly one of file and spec", () => {
    expect(() => new Workspace("w", {})).toThrow('Workspace "w": give exactly one of file');
    expect(() => new Workspace("w", { file: EXAMPLE_FILE, spec: {} })).toThrow('Workspace "w": give exactly one of file');
  });

  it("refuses an empty document", () => {
    expect(() => new Workspace("w", { spec: {} })).toThrow(`Workspace "w" spec: ${EMPTY_DOCUMENT}`);
  });

  it("its errors are RunErrors (the CLI prints the message, no stack) that keep their name and problems", () => {
    const thrown = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return error as WorkspaceSpecError;
      }
      throw new Error("nothing thrown");
    };
    for (const error of [
      thrown(() => new Workspace("w", {})),
      thrown(() => new Workspace("w", { spec: { apps: { a: {} } } } as never)),
      thrown(() => new Workspace("w", { file: "missing.yaml" })),
    ]) {
      expect(pulumi.RunError.isInstance(error)).toBe(true);
      expect(error).toBeInstanceOf(pulumi.RunError);
      expect(error).toBeInstanceOf(WorkspaceSpecError);
      expect(error.name).toBe("WorkspaceSpecError");
      expect(error.problems.length).toBe(1);
    }
  });
});

describe("the Workspace component declares fine-tunes", () => {
  let emulator: RunningEmulator;
  const registered: { type: string; name: string; inputs: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, fixtures: TEST_FIXTURES });
    await pulumi.runtime.setMocks(
      {
        newResource: (args) => {
          registered.push({ type: args.type, name: args.name, inputs: args.inputs });
          // A Model as the service's create answer leaves it: linked to a connection with numeric id 42.
          const linked = args.type.endsWith(":Model") ? { workspaceModelProviderId: 42 } : {};
          return { id: `${args.name}-id`, state: { ...args.inputs, ...linked } };
        },
        call: () => {
          throw new Error("no invokes");
        },
      },
      "workspace-spec-test",
      "dev",
      true,
    );
  });
  afterAll(() => emulator?.close());

  it("against their App (declared, or existing by name) and their declared Dataset, after the preflight", async () => {
    const dataIds = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1];
    const workspace = new Workspace("w", {
      spec: {
        apps: { bot: { name: "Bot" } },
        datasets: { examples: { name: "Examples", app: "bot" } },
        fineTunes: {
          tone: { name: "Tone", app: "bot", dataset: "examples", dataIds, baseModel: "gpt-4o-mini", providerConnection: 3 },
          pitch: {
            name: "Pitch",
            app: "Sales",
            dataset: "examples",
            dataIds,
            baseModel: "gpt-4o",
            providerConnection: 3,
            waitTimeoutSeconds: 60,
          },
        },
      },
      connection: { baseUrl: emulator.url, apiKey: emulator.apiKey },
    });
    const value = <T>(output: pulumi.Output<T>) => new Promise<T>((resolve) => output.apply(resolve));
    const sales = (await getWorkspace({ connection: { baseUrl: emulator.url, apiKey: emulator.apiKey } })).apps.find(
      (app) => app.name === "Sales",
    )!;
    expect(await value(workspace.fineTunes.tone!.app)).toBe("w-bot-id");
    expect(await value(workspace.fineTunes.tone!.dataset)).toBe("w-examples-id");
    expect(await value(workspace.fineTunes.pitch!.app)).toBe(sales.guid);
    expect(await value(workspace.fineTunes.pitch!.waitTimeoutSeconds)).toBe(60);
    const tone = registered.find((registration) => registration.name === "w-tone")!;
    expect(tone.type).toBe("pulumi-nodejs:dynamic/gms:FineTune");
    expect(tone.inputs).toMatchObject({
      name: "Tone",
      dataIds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      baseModel: "gpt-4o-mini",
      providerConnection: 3,
    });
  });

  it("naming a declared Model for providerConnection, with the numeric id of the connection that Model is linked to", async () => {
    process.env.GMS_SPEC_TEST_OPENAI_KEY = "sk-spec-test";
    try {
      const workspace = new Workspace("m", {
        spec: {
          providerConnections: { openai: { provider: "openai", key: { env: "GMS_SPEC_TEST_OPENAI_KEY" } } },
          models: { gpt: { llm: "gpt-4o", provider: "openai" } },
          datasets: { examples: { name: "Examples for Support", app: "Support" } },
          fineTunes: {
            tone: {
              name: "Tone",
              app: "Support",
              dataset: "examples",
              dataIds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
              baseModel: "gpt-4o-mini",
              providerConnection: { model: "gpt" },
            },
          },
        },
        connection: { baseUrl: emulator.url, apiKey: emulator.apiKey },
      });
      const value = <T>(output: pulumi.Output<T>) => new Promise<T>((resolve) => output.apply(resolve));
      expect(await value(workspace.fineTunes.tone!.providerConnection)).toBe(42);
      const tone = registered.find((registration) => registration.name === "m-tone")!;
      expect(tone.inputs).toMatchObject({ name: "Tone", providerConnection: 42 });
    } finally {
      delete process.env.GMS_SPEC_TEST_OPENAI_KEY;
    }
  });
});

describe("twins in a document are declared with the warnings twins in code get", () => {
  let emulator: RunningEmulator;
  const warnings: string[] = [];
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, fixtures: join(EXAMPLE, "fixtures.yaml") });
    await pulumi.runtime.setMocks(
      { newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs }), call: () => ({}) },
      "workspace-twins-test",
      "dev",
      true,
    );
    vi.spyOn(pulumi.log, "warn").mockImplementation(async (message) => {
      warnings.push(message);
    });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await emulator?.close();
  });

  it("one warning per twin, naming both, the same text as in code; another App, or another upload of a file, is no twin", async () => {
    const connection = { baseUrl: emulator.url, apiKey: emulator.apiKey };
    const handbook = join(EXAMPLE, "handbook.md");
    const faq = { context: "Handbook", url: "https://example.com/faq" };
    const workspace = new Workspace("twins", {
      spec: {
        apps: { support: { name: "Twin Support" }, helpdesk: { name: "Twin Support" } },
        workflows: {
          intake: { name: "Intake", app: "support" },
          "intake-2": { name: "Intake", app: "support" },
          "intake-elsewhere": { name: "Intake", app: "helpdesk" },
          triage: { name: "Triage", app: "Support Bot" },
          "triage-2": { name: "Triage", app: "Support Bot" },
        },
        datasets: { golden: { name: "Golden" }, "golden-2": { name: "Golden" } },
        contextSources: {
          faq,
          "faq-2": faq,
          handbook: { context: "Handbook", file: handbook },
          "handbook-2": { context: "Handbook", file: handbook },
        },
      },
      connection,
    });
    const keeps = "in the same workspace: the service keeps both, but a lookup by";
    expect(warnings).toEqual([
      `App "twins-helpdesk" has the name "Twin Support" of App "twins-support" ${keeps} name finds only one of them. Give one another name if that matters.`,
      `Workflow "twins-intake-2" has the app and name "Intake" of Workflow "twins-intake" ${keeps} app and name finds only one of them. ` +
        "Give one another app or name if that matters.",
      `Workflow "twins-triage-2" has the app and name "Triage" of Workflow "twins-triage" ${keeps} app and name finds only one of them. ` +
        "Give one another app or name if that matters.",
      `Dataset "twins-golden-2" has the name "Golden" of Dataset "twins-golden" ${keeps} name finds only one of them. Give one another name if that matters.`,
      `ContextSource "twins-faq-2" has the context and url "https://example.com/faq" of ContextSource "twins-faq" ${keeps} context and url ` +
        "finds only one of them. Give one another context or url if that matters.",
    ]);
    // The children are declared, after the preflight.
    const value = <T>(output: pulumi.Output<T>) => new Promise<T>((resolve) => output.apply(resolve));
    expect(await value(workspace.workflows["intake-2"]!.app)).toBe("twins-support-id");

    // Twins in code, and a resource in code that is the twin of one in the document: one rule, one text.
    warnings.length = 0;
    new Dataset("code-golden", { name: "Golden code", connection });
    new Dataset("code-golden-2", { name: "Golden code", connection });
    new Dataset("code-golden-3", { name: "Golden", connection });
    expect(warnings).toEqual([
      `Dataset "code-golden-2" has the name "Golden code" of Dataset "code-golden" ${keeps} name finds only one of them. ` +
        "Give one another name if that matters.",
      `Dataset "code-golden-3" has the name "Golden" of Dataset "twins-golden" ${keeps} name finds only one of them. Give one another name if that matters.`,
    ]);
  });
});

describe("the preflight", () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, fixtures: join(EXAMPLE, "fixtures.yaml") });
  });
  afterAll(() => emulator?.close());

  it("throws a located RunError for a name that resolves to nothing", async () => {
    const text = `contextSources:\n  faq:\n    context: FAQs\n    url: https://example.com/faq\n`;
    const error = await preflight(loadWorkspaceText(text, "w.yaml", EXAMPLE), {
      connection: { baseUrl: emulator.url, apiKey: emulator.apiKey },
    }).catch((caught: unknown) => caught);
    expect(pulumi.RunError.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(WorkspaceSpecError);
    expect((error as Error).message).toBe(
      'w.yaml:3:14: contextSources.faq.context: no Context "FAQs" in the workspace (it has: "Handbook", "FAQ"); Contexts are created outside the public interface',
    );
  });

  it("counts as new the declared twins beyond the Apps of their name that exist", async () => {
    // The workspace allows 5 Apps and has one, Support Bot: of six declared Apps of that name, one is the existing one.
    const text = `apps:\n${["a", "b", "c", "d", "e", "f"].map((key) => `  ${key}:\n    name: Support Bot\n`).join("")}`;
    const error = await preflight(loadWorkspaceText(text, "w.yaml", EXAMPLE), {
      connection: { baseUrl: emulator.url, apiKey: emulator.apiKey },
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      'w.yaml:13:5: apps.f: the workspace allows 5 Apps and has 1: the 5 new App(s) declared here would make 6. Would not fit: f ("Support Bot"). ' +
        "Remove them, delete Apps the workspace no longer needs, or raise the workspace's limit; nothing was created",
    );
  });
});

describe("each kind's entry derives from the kind's field declarations", () => {
  /** The fields the document writes in its own terms (references by name, a file by path, secrets by source). */
  const DOCUMENT_FORMS: Record<string, string[]> = {
    App: [],
    ProviderConnection: ["key"],
    Model: ["provider", "key", "url"],
    Workflow: ["app"],
    Dataset: ["app"],
    Eval: ["action", "evalTypes", "dataset"],
    Experiment: ["app", "primaryAction", "secondaryAction"],
    Skill: [],
    ContextSource: ["context", "file"],
    FineTune: ["app", "dataset", "providerConnection"],
  };
  type EntrySchema = { properties: Record<string, { description?: string; anyOf?: { required?: string[] }[] }>; required?: string[] };
  const entryOf = (section: string) =>
    (workspaceJsonSchema().properties as Record<string, { additionalProperties: EntrySchema }>)[section]!.additionalProperties;

  it.each(Object.entries(SECTION_OF))("%s (%s)", (kindName, section) => {
    const kind: { inputs: InputFields } = kinds[kindName as keyof typeof kinds];
    const declared = Object.entries(kind.inputs);
    const entry = entryOf(section);
    // Every input in declared order, then adopt; nothing else.
    expect(Object.keys(entry.properties)).toEqual([...declared.map(([name]) => name), "adopt"]);
    // Required as the kind declares, except a Model's own key (the ProviderConnection's applies without one).
    const required = declared.filter(([name, field]) => field.required && !(kindName === "Model" && name === "key")).map(([name]) => name);
    expect(entry.required ?? []).toEqual(required);
    // The kind's own descriptions, except where the document writes the field in its own terms.
    const ownTerms = declared.filter(([name, field]) => entry.properties[name]!.description !== field.description).map(([name]) => name);
    expect(ownTerms).toEqual(DOCUMENT_FORMS[kindName]);
    // A secret is only ever named by where it comes from.
    for (const [name] of declared.filter(([, field]) => field.secret))
      expect(entry.properties[name]!.anyOf?.map((option) => option.required)).toEqual([["config"], ["env"]]);
  });
});

describe("the workspace JSON Schema", () => {
  const schema = JSON.parse(readFileSync(SCHEMA_FILE, "utf8"));
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  ajv.addFormat("uuid", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addFormat("uri", (value: string) => URL.canParse(value));
  const validate = ajv.compile(schema);

  it("is the one the zod definitions generate (regenerate with `npm run workspace-schema`)", () => {
    expect(readFileSync(SCHEMA_FILE, "utf8")).toBe(workspaceJsonSchemaText());
  });

  it("accepts the example", () => {
    expect(validate(parse(readFileSync(EXAMPLE_FILE, "utf8"))), JSON.stringify(validate.errors)).toBe(true);
  });

  it("rejects an unknown field, a wrong type and a key written in the file, naming where", () => {
    const bad = {
      apps: { support: { name: "Support", color: "blue" } },
      evals: { e: { name: "E", action: { app: "A", action: "B" }, evalTypes: ["T"], samplingRate: "high" } },
      providerConnections: { p: { provider: "openai", key: "sk-1" } },
    };
    expect(validate(bad)).toBe(false);
    const found = validate.errors!.map((error) => `${error.instancePath} ${error.keyword}`);
    expect(found).toEqual(
      expect.arrayContaining(["/apps/support additionalProperties", "/evals/e/samplingRate type", "/providerConnections/p/key type"]),
    );
  });

  it("is where the example's editor line points once the package is installed, and the package ships it", () => {
    const modeline = readFileSync(EXAMPLE_FILE, "utf8").split("\n")[0]!;
    expect(modeline).toBe("# yaml-language-server: $schema=node_modules/pulumi-gms/src/workspace/workspace.schema.json");
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { files: string[] };
    expect(manifest.files).toContain("src/workspace/workspace.schema.json");
  });
});
