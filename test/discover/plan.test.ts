/**
 * What discover makes of listed objects, as data: left out and why (the stack's, the selection's, configured Skills),
 * config keys and their lines, recorded inputs, notes.
 */
import { describe, expect, it } from "vitest";
import type { ListedObject } from "../../src/discover/list";
import { type DiscoveryOptions, planDiscovery } from "../../src/discover/plan";
import { LANGUAGES } from "../../src/discover/program";
import { leftOutBy, picksAll, SelectionError, selectionOf } from "../../src/discover/select";
import type { ManagedObjects } from "../../src/discover/stack";
import { requiredToCreateOnly } from "../../src/discover/write-only";
import { KIND_NAMES, type KindName } from "../../src/resources";

let next = 0;
/** A GUID whose first 8 digits differ from every other's. */
const guid = () => `${String(++next).padStart(8, "0")}-0000-4000-8000-000000000000`;
const listed = (kind: KindName, name: string, record: Record<string, unknown> = {}, id = guid()): ListedObject => ({
  kind,
  guid: id,
  name,
  record: { guid: id, name, ...record },
});
const options = (changes: Partial<DiscoveryOptions> = {}): DiscoveryOptions => ({
  workspace: { guid: guid(), name: "Acme" },
  language: LANGUAGES.yaml,
  file: "gms-import.json",
  ...changes,
});

describe("planDiscovery", () => {
  it("takes the required write-only inputs from the kinds' declarations", () => {
    const declared = Object.fromEntries(
      KIND_NAMES.map((kind) => [kind, requiredToCreateOnly(kind).map(([name, field]) => [name, field.secret])]),
    );
    expect(declared).toEqual({
      App: [],
      ProviderConnection: [
        ["provider", false],
        ["key", true],
      ],
      Model: [["key", true]],
      Workflow: [],
      Dataset: [],
      Eval: [],
      Experiment: [],
      Skill: [],
      ContextSource: [],
      FineTune: [["providerConnection", false]],
    });
  });

  it("leaves out the oldest Skill of each name, the configured one, whatever order the service lists them in", () => {
    const copy = listed("Skill", "web-search", { createdAt: "2026-01-02T00:00:00.000Z" });
    const configured = listed("Skill", "web-search", { createdAt: "2026-01-01T00:00:00.000Z" });
    const lone = listed("Skill", "code-runner", { createdAt: "2026-01-03T00:00:00.000Z" });
    // With no creation time, the first listed: the service lists oldest first.
    const untimedFirst = listed("Skill", "mailer");
    const untimedCopy = listed("Skill", "mailer");
    const plan = planDiscovery([copy, configured, lone, untimedFirst, untimedCopy], options());
    expect(plan.leftOut.map((entry) => entry.guid)).toEqual([configured.guid, lone.guid, untimedFirst.guid]);
    expect(plan.document.resources.map((entry) => entry.id)).toEqual([untimedCopy.guid, copy.guid]);
    expect(plan.listed.Skill).toBe(5);
  });

  it("leaves out what the stack manages before anything else, and names its stack in every command", () => {
    const app = listed("App", "Support");
    const skill = listed("Skill", "web-search");
    const model = listed("Model", "gpt-4o");
    const managed: ManagedObjects = {
      stack: "prod",
      urns: new Map([
        [app.guid, "urn:app"],
        [skill.guid, "urn:skill"],
      ]),
      names: new Map([["support", app.guid]]),
    };
    const plan = planDiscovery([app, skill, model], options({ managed }));
    expect(plan.leftOut.map(({ code, guid }) => [code, guid])).toEqual([
      ["managed", app.guid],
      ["managed", skill.guid],
    ]);
    expect(plan.leftOut[0]!.reason).toBe("managed by stack prod as urn:app");
    expect(plan.leftOut[0]!.name).toBe("support");
    expect(plan.configKeys[0]!.setCommand).toBe("pulumi config set --secret gpt4oKey --stack prod");
    expect(plan.next).toEqual([
      "pulumi import --file gms-import.json --out imported.yaml --stack prod",
      `pulumi config set --secret gpt4oKey --stack prod   # ${plan.configKeys[0]!.about}`,
      "pulumi preview --expect-no-changes --stack prod",
    ]);
  });

  it("gives each key a config key no other has, and records a connection's type only where its Models agree on one", () => {
    const first = listed("ProviderConnection", "gpt 4o");
    const second = listed("ProviderConnection", "gpt4o");
    const linked = (llm: string, connection: ListedObject, providerName: string) =>
      listed("Model", llm, { llm, providerGuid: connection.guid, providerName });
    const plan = planDiscovery(
      [
        first,
        second,
        linked("a", first, "openai"),
        linked("b", first, "openai"),
        linked("c", second, "openai"),
        linked("d", second, "azure"),
      ],
      options(),
    );
    const keys = plan.configKeys.filter((key) => key.type === "gms:index:ProviderConnection").map((key) => [key.resource, key.configKey]);
    const digits = (object: ListedObject) => object.guid.replace(/-/g, "").slice(0, 8);
    expect(keys).toEqual([
      ["gpt4o", `gpt4o${digits(second)}Key`],
      ["gpt_4o", `gpt4o${digits(first)}Key`],
    ]);
    const inputs = Object.fromEntries(plan.document.resources.map((entry) => [entry.name, entry.inputs]));
    expect(inputs.gpt_4o).toEqual({ provider: "openai" });
    // Twins of the same first digits take the whole GUID.
    const twins = [
      listed("Model", "m 1", {}, "abcdef01-0000-4000-8000-000000000001"),
      listed("Model", "m1", {}, "abcdef01-0000-4000-8000-000000000002"),
    ];
    expect(planDiscovery(twins, options()).configKeys.map((key) => key.configKey)).toEqual([
      "m1abcdef01000040008000000000000002Key",
      "m1abcdef01000040008000000000000001Key",
    ]);
    expect(inputs.gpt4o).toBeUndefined();
    expect(plan.notes.filter((note) => note.property === "provider").map((note) => [note.resource, note.note])).toEqual([
      ["gpt4o", expect.stringMatching(/^provider is never returned by the service, so the generated code leaves it out/)],
      ["gpt_4o", expect.stringMatching(/^provider "openai", as the Models linked to it show \(the service never returns it\)/)],
    ]);
  });

  it.each([
    [
      "nodejs",
      'key: config.requireSecret("gpt4oKey"),',
      'in the arguments of resource "gpt_4o"',
      "const config = new pulumi.Config();",
      "ts",
    ],
    ["python", 'key=config.require_secret("gpt4oKey"),', 'in the arguments of resource "gpt_4o"', "config = pulumi.Config()", "py"],
    ["go", 'Key: cfg.RequireSecret("gpt4oKey"),', 'in the args of resource "gpt_4o"', 'cfg := config.New(ctx, "")', "go"],
    ["yaml", "key: ${gpt4oKey}", "under resources.gpt_4o.properties", undefined, "yaml"],
  ] as const)("writes the lines of a %s program", (runtime, line, where, preamble, extension) => {
    const model = listed("Model", "gpt-4o");
    const plan = planDiscovery([model], options({ language: LANGUAGES[runtime] }));
    expect(plan.configKeys).toEqual([
      {
        resource: "gpt_4o",
        type: "gms:index:Model",
        property: "key",
        configKey: "gpt4oKey",
        setCommand: "pulumi config set --secret gpt4oKey",
        about:
          `the key Model "gpt-4o" (${model.guid}) was made with: the service never returns it, so take it from where your ` +
          "team keeps it (the CLI asks for it)",
        programLine: line,
        where,
      },
    ]);
    expect(plan.language).toEqual({ runtime, ...(preamble ? { preamble } : {}) });
    expect(plan.next[0]).toBe(`pulumi import --file gms-import.json --out imported.${extension}`);
  });

  it("warns about Apps and Workflows only when some are imported, and writes no preamble without a key", () => {
    const quiet = planDiscovery([listed("Dataset", "Golden")], options({ language: LANGUAGES.nodejs }));
    expect(quiet.caveats).toEqual([]);
    expect(quiet.language).toEqual({ runtime: "nodejs" });
    const apps = planDiscovery([listed("App", "Support"), listed("App", "Sales")], options());
    expect(apps.caveats).toEqual([
      { type: "gms:index:App", resources: ["sales", "support"], caveat: expect.stringMatching(/^an App's Actions/) },
    ]);
  });

  it("leaves out what the selection does not pick, saying which flag did, after the stack's and before configured Skills", () => {
    const billing = listed("App", "Billing");
    const sales = listed("App", "Sales EU");
    const triage = listed("Workflow", "Triage");
    const skill = listed("Skill", "web-search");
    const selection = selectionOf({ kind: ["app,Skill"], exclude: ["sales*"] });
    const plan = planDiscovery([billing, sales, triage, skill], options({ selection }));
    expect(plan.document.resources.map((entry) => entry.id)).toEqual([billing.guid]);
    expect(plan.leftOut.map(({ code, guid, reason }) => [code, guid, reason])).toEqual([
      ["not-picked", sales.guid, "not picked: its name matches --exclude sales*"],
      ["not-picked", triage.guid, "not picked: not of --kind App,Skill"],
      // The only Skill of its name is the configured one: picked, and left out all the same.
      ["configured-skill", skill.guid, expect.stringMatching(/^a configured Skill/)],
    ]);
    expect(plan.listed.App).toBe(2);
  });
});

describe("the selection (--kind, --name, --exclude)", () => {
  const object = (kind: KindName, name: string) => ({ kind, name });

  it("takes kinds by name in any case, by type token, listed with commas or the flag again, and refuses another word", () => {
    expect(selectionOf({ kind: ["app,ContextSource", "gms:index:Model", "APP"] }).kinds).toEqual(["App", "ContextSource", "Model"]);
    expect(() => selectionOf({ kind: ["Apps"] })).toThrow(SelectionError);
    expect(() => selectionOf({ kind: ["Apps"] })).toThrow(/^--kind Apps is not a kind: use one of App, ProviderConnection, Model/);
    expect(() => selectionOf({ name: [""] })).toThrow("--name needs a glob, for example --name 'billing*'");
    expect(picksAll(selectionOf({}))).toBe(true);
    expect(picksAll(selectionOf({ exclude: ["x"] }))).toBe(false);
  });

  it("matches a glob against the whole name, ignoring case: * any text, ? one character, the rest as it is", () => {
    const names = selectionOf({ name: ["billing*", "?a.es"] });
    expect(leftOutBy(names, object("App", "Billing EU"))).toBeUndefined();
    expect(leftOutBy(names, object("App", "Sales"))).toBe("its name matches no --name (billing*, ?a.es)");
    expect(leftOutBy(names, object("App", "Ta.es"))).toBeUndefined();
    expect(leftOutBy(names, object("App", "My billing"))).toBe("its name matches no --name (billing*, ?a.es)");
    // Regular-expression characters are themselves.
    expect(leftOutBy(selectionOf({ exclude: ["(eu)+"] }), object("App", "(EU)+"))).toBe("its name matches --exclude (eu)+");
    expect(leftOutBy(selectionOf({ exclude: ["(eu)+"] }), object("App", "eueu"))).toBeUndefined();
    // --kind first, then --name, then --exclude.
    const all = selectionOf({ kind: ["App"], name: ["b*"], exclude: ["*test*"] });
    expect(leftOutBy(all, object("Workflow", "b"))).toBe("not of --kind App");
    expect(leftOutBy(all, object("App", "Billing test"))).toBe("its name matches --exclude *test*");
    expect(leftOutBy(all, object("App", "Billing"))).toBeUndefined();
  });
});
